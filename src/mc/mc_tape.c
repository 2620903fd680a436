/* The backward's tape: its size and its layout (mc_tape.h). */
#include "mc/mc_tape.h"

#include <stdint.h>

/* bytes rounded up to a cache line, or SIZE_MAX past size_t */
static size_t line(size_t count, size_t size)
{
    if (size != 0 && count > (SIZE_MAX - 63) / size)
        return SIZE_MAX;
    return (count * size + 63) & ~(size_t)63;
}

static size_t add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* count * d, saturating */
static size_t times(size_t count, size_t d)
{
    return d != 0 && count > SIZE_MAX / d ? SIZE_MAX : count * d;
}

size_t mc_tape_bytes(size_t width, size_t sub_blocks, size_t branches)
{
    size_t total = line(times(sub_blocks + 1, width), sizeof(double));
    total = add(total, line(times(times(sub_blocks, branches), width), sizeof(float)));
    total = add(total, line(sub_blocks, sizeof(mc_tape_step)));
    total = add(total, 6 * line(width, sizeof(double)));
    total = add(total, line(width, sizeof(float)));
    return total >= SIZE_MAX / 2 ? 0 : total;
}

mc_tape mc_tape_carve(void *memory, size_t width, size_t sub_blocks, size_t branches)
{
    char *p = memory;
    mc_tape t = {.d = width, .sub_blocks = sub_blocks, .branches = branches};
    t.x = (double *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    p += line((sub_blocks + 1) * width, sizeof(double));
    t.xi = (float *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    p += line(sub_blocks * branches * width, sizeof(float));
    t.steps = (mc_tape_step *)p;
    p += line(sub_blocks, sizeof(mc_tape_step));
    double **vectors[] = {&t.delta, &t.delta_y, &t.delta_h, &t.delta_f, &t.h, &t.y};
    for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
        *vectors[i] = (double *)p; // cppcheck-suppress invalidPointerCast ; memalign'd, untyped
        p += line(width, sizeof(double));
    }
    t.zeta = (float *)p; // cppcheck-suppress invalidPointerCast ; posix_memalign'd, untyped
    return t;
}
