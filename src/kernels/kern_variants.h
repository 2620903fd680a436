/* Each instruction set's kernel functions, by name, as kern_table.c gathers
 * them into the tables and the tests call them: kern_matmul_avx2,
 * kern_layernorm_scalar, .. (contracts in kern_list.h). A file that
 * defines one set's functions sets KERN_ISA to the set's suffix and names
 * them KERN_FN(kern_layernorm): the body headers (nn_body.h, ..) are
 * written once for every set that way. */
#ifndef VARPROF_KERN_VARIANTS_H
#define VARPROF_KERN_VARIANTS_H

#include "kernels/kern_table.h"

#define KERN_CAT_(name, isa) name##_##isa
#define KERN_CAT(name, isa) KERN_CAT_(name, isa)
/* name_ISA, the definition of name for the set KERN_ISA */
#define KERN_FN(name) KERN_CAT(name, KERN_ISA)

/* Each set's prototypes, kern_NAME_ISA for every entry of kern_list.h,
   and kern_matmul_reblock_ISA, not in the table: the tests' hook that blocks
   the matmul for other caches (matmul_internal.h). */
// NOLINTNEXTLINE(bugprone-macro-parentheses) parameters: a list in parentheses
#define KERN(type, name, parameters) type KERN_CAT(kern_##name, KERN_DECLARING) parameters;
#define KERN_DECLARING scalar
#include "kernels/kern_list.h"
void kern_matmul_reblock_scalar(size_t l1, size_t l2);
#undef KERN_DECLARING
#if defined(__x86_64__)
#define KERN_DECLARING avx2
#include "kernels/kern_list.h"
void kern_matmul_reblock_avx2(size_t l1, size_t l2);
#undef KERN_DECLARING
#define KERN_DECLARING avx512
#include "kernels/kern_list.h"
void kern_matmul_reblock_avx512(size_t l1, size_t l2);
#undef KERN_DECLARING
#endif
#undef KERN

#endif
