/* Which instruction sets this CPU and its operating system support, and the
 * one chosen for the process (kern_table.c maps it to its kernels).
 *
 * Detection reads CPUID for the instructions and XGETBV for the register
 * state the operating system saves (a CPU with AVX-512 under an OS that does
 * not save the ZMM registers must not use them). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/name_table.h"
#include "kernels/kern_table.h"
#include "varprof/isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

static const char *const isa_names[VP_ISA_COUNT] = {"scalar", "avx2", "avx512"};

const char *vp_isa_name(vp_isa isa)
{
    const char *name = name_table_name(NAME_LIST(isa_names), (int)isa);
    return name ? name : "unknown";
}

/* ---- detection, once ---- */

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static int isa_ok[VP_ISA_COUNT];

#if defined(__x86_64__)
/* XCR0: which register states the OS saves and restores. */
static uint64_t read_xcr0(void)
{
    uint32_t eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((uint64_t)edx << 32) | eax;
}

static void detect_x86(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return;
    unsigned osxsave = (ecx >> 27) & 1, avx = (ecx >> 28) & 1, fma = (ecx >> 12) & 1;
    if (!osxsave || !avx)
        return; /* XGETBV itself needs OSXSAVE */
    uint64_t xcr0 = read_xcr0();
    int ymm_saved = (xcr0 & 0x6) == 0x6;   /* XMM, YMM */
    int zmm_saved = (xcr0 & 0xe6) == 0xe6; /* and opmask, ZMM0-15 upper, ZMM16-31 */
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
        return;
    unsigned avx2 = (ebx >> 5) & 1;
    int avx512 = ((ebx >> 16) & 1)    /* F */
                 && ((ebx >> 17) & 1) /* DQ */
                 && ((ebx >> 30) & 1) /* BW */
                 && ((ebx >> 31) & 1) /* VL */;
    isa_ok[VP_ISA_AVX2] = ymm_saved && avx2 && fma;
    isa_ok[VP_ISA_AVX512] = isa_ok[VP_ISA_AVX2] && zmm_saved && avx512;
}
#endif

static void detect(void)
{
    isa_ok[VP_ISA_SCALAR] = 1;
#if defined(__x86_64__)
    detect_x86();
#endif
}

int vp_isa_supported(vp_isa isa)
{
    if ((unsigned)isa >= VP_ISA_COUNT)
        return 0;
    pthread_once(&detect_once, detect);
    return isa_ok[isa] && kern_built(isa);
}

vp_isa vp_isa_best(void)
{
    for (int isa = VP_ISA_COUNT - 1; isa > VP_ISA_SCALAR; isa--)
        if (vp_isa_supported((vp_isa)isa))
            return (vp_isa)isa;
    return VP_ISA_SCALAR;
}

/* "scalar, avx2, avx512", the supported variants, into buf. */
static void supported_list(char *buf, size_t size)
{
    buf[0] = '\0';
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", used ? ", " : "", isa_names[isa]);
    }
}

vp_status vp_isa_from_name(const char *name, vp_isa *out, vp_error *err)
{
    char supported[64];
    supported_list(supported, sizeof supported);
    if (name == NULL)
        return vp_fail(err, VP_EINVAL, "no instruction set named; supported: %s", supported);
    const int isa = name_table_find(NAME_LIST(isa_names), name);
    if (isa >= 0) {
        if (!vp_isa_supported((vp_isa)isa))
            return vp_fail(err, VP_EINVAL,
                           "instruction set '%s' is not supported by this CPU; "
                           "supported: %s",
                           name, supported);
        *out = (vp_isa)isa;
        return VP_OK;
    }
    return vp_fail(err, VP_EINVAL,
                   "unknown instruction set '%s' (scalar, avx2 or avx512); "
                   "supported: %s",
                   name, supported);
}

/* ---- the choice, once ---- */

static pthread_once_t select_once = PTHREAD_ONCE_INIT;
static vp_isa selected = VP_ISA_SCALAR;
static vp_status select_status = VP_OK;
static vp_error select_error;

static void select_isa(void)
{
    const char *env = getenv("VARPROF_ISA");
    if (env == NULL || env[0] == '\0') {
        selected = vp_isa_best();
        return;
    }
    vp_error err;
    vp_isa isa;
    if (vp_isa_from_name(env, &isa, &err) != VP_OK) {
        select_status = vp_fail(&select_error, VP_EINVAL, "VARPROF_ISA: %s", err.message);
        selected = VP_ISA_SCALAR;
        return;
    }
    selected = isa;
}

vp_status vp_isa_select(vp_isa *out, vp_error *err)
{
    pthread_once(&select_once, select_isa);
    if (out != NULL)
        *out = selected;
    if (select_status != VP_OK && err != NULL)
        *err = select_error;
    return select_status;
}

vp_isa vp_isa_current(void)
{
    pthread_once(&select_once, select_isa);
    return selected;
}
