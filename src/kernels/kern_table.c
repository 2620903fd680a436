/* The kernel tables, one per instruction set, and the choice of one for the
 * process. Which sets the CPU supports and which one is in use is isa.c's
 * business; this file only maps a set to its functions. */
#include <pthread.h>

#include "kernels/kern_variants.h"

/* .name = kern_name_ISA for each entry of kern_list.h */
#define KERN(type, name, parameters) .name = KERN_CAT(kern_##name, KERN_DEFINING),

#define KERN_DEFINING scalar
static const kern_table scalar_table = {
#include "kernels/kern_list.h"
};
#undef KERN_DEFINING
#if defined(__x86_64__)
#define KERN_DEFINING avx2
static const kern_table avx2_table = {
#include "kernels/kern_list.h"
};
#undef KERN_DEFINING
#define KERN_DEFINING avx512
static const kern_table avx512_table = {
#include "kernels/kern_list.h"
};
#undef KERN_DEFINING
#endif
#undef KERN

/* NULL where this build has no variant. */
static const kern_table *const tables[VP_ISA_COUNT] = {
    [VP_ISA_SCALAR] = &scalar_table,
#if defined(__x86_64__)
    [VP_ISA_AVX2] = &avx2_table,
    [VP_ISA_AVX512] = &avx512_table,
#endif
};

int kern_built(vp_isa isa)
{
    return (unsigned)isa < VP_ISA_COUNT && tables[isa] != NULL;
}

const kern_table *kern_for(vp_isa isa)
{
    return vp_isa_supported(isa) ? tables[isa] : &scalar_table;
}

static pthread_once_t current_once = PTHREAD_ONCE_INIT;
static const kern_table *current;

static void choose_current(void)
{
    current = kern_for(vp_isa_current());
}

const kern_table *kern_current(void)
{
    pthread_once(&current_once, choose_current);
    return current;
}
