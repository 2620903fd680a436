/* Instruction sets the kernels come in, which of them this CPU can run, and
 * the one in use.
 *
 * Each kernel has a scalar reference (the specification, always available) and
 * x86-64 variants compiled with their own instruction sets. The variant in
 * use is chosen once per process, from $VARPROF_ISA if set, else the best the
 * CPU and the operating system support. On other architectures only the scalar
 * variant exists.
 */
#ifndef VARPROF_ISA_H
#define VARPROF_ISA_H

#include "varprof/status.h"

typedef enum {
    VP_ISA_SCALAR, /* portable C, the reference */
    VP_ISA_AVX2,   /* AVX2 + FMA */
    VP_ISA_AVX512, /* AVX-512 F, DQ, BW, VL + FMA */
    VP_ISA_COUNT
} vp_isa;

/* "scalar", "avx2" or "avx512", the names $VARPROF_ISA takes; "unknown" for a
 * value outside the enum. Static, never NULL. */
const char *vp_isa_name(vp_isa isa);

/* 1 if this CPU has the instructions (CPUID) and the operating system saves
 * the registers they use across context switches (XGETBV), else 0. Scalar is
 * always supported; a value outside the enum is not. Detected once, cached. */
int vp_isa_supported(vp_isa isa);

/* The widest supported variant. */
vp_isa vp_isa_best(void);

/* Parses an ISA name as $VARPROF_ISA spells it ("scalar", "avx2", "avx512";
 * exact, lower case) into *out. VP_EINVAL, *out untouched and err (if not
 * NULL) filled, when name is NULL, unknown or names a variant this CPU does
 * not support; the message names the value and the supported variants. */
vp_status vp_isa_from_name(const char *name, vp_isa *out, vp_error *err);

/* The variant in use, into *out (if not NULL). Chosen once per process,
 * thread-safely, at the first call of vp_isa_select, vp_isa_current or a
 * dispatching kernel: from $VARPROF_ISA if it is set and not empty, else
 * vp_isa_best(). Every call returns the outcome of that one choice: VP_OK, or
 * VP_EINVAL with err naming the bad $VARPROF_ISA and the supported variants
 * (the process then runs scalar; *out is set to VP_ISA_SCALAR). */
vp_status vp_isa_select(vp_isa *out, vp_error *err);

/* The variant in use: the selected one, or VP_ISA_SCALAR if the selection
 * failed. Makes the selection if nothing has yet. */
vp_isa vp_isa_current(void);

#endif
