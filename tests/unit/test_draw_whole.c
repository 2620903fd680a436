/* A stored tensor drawn whole on a pool of threads (fw_draw_whole,
 * src/forward/weight_draw.c): the same bits as one thread's fw_draw_values
 * with no pool and on pools of 2, 3, 7 and 16 threads, for normal and uniform draws (a DeepNet
 * factor too), a length that is no multiple of the tasks' or of Philox's
 * four, and a tensor too small to share; the normals are vp_gauss_fill's
 * draws times the scale, rounded once (the independent path). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forward/weight_draw.h"
#include "test_filter.h"
#include "varprof/gauss.h"

/* 2^20 + 5: four threads' worth, and a ragged end */
#define LONG_N (((size_t)1 << 20) + 5)

static void same_at_every_count(const fw_draw *d, size_t n)
{
    float *one = malloc(n * sizeof *one), *many = malloc(n * sizeof *many);
    assert_non_null(one);
    assert_non_null(many);
    fw_draw_values(d, one, n, 0);
    const size_t counts[] = {1, 2, 3, 7, 16};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        memset(many, 0xff, n * sizeof *many);
        thread_pool *pool = counts[c] > 1 ? thread_pool_create(counts[c], NULL) : NULL;
        assert_true(counts[c] == 1 || pool);
        fw_draw_whole(d, many, n, pool);
        thread_pool_free(pool);
        if (memcmp(one, many, n * sizeof *one) != 0)
            fail_msg("%zu draws on %zu threads differ from one thread's", n, counts[c]);
    }
    free(one);
    free(many);
}

static void normal_and_uniform(void **state)
{
    (void)state;
    const fw_draw normal = {FW_DRAW_NORMAL, 7, 1 + 16 * 3 + 4, 0.03125, 1.0, 1024, 1029, 0};
    same_at_every_count(&normal, LONG_N);
    fw_draw uniform = normal;
    uniform.kind = FW_DRAW_UNIFORM;
    uniform.factor = 0.7;
    same_at_every_count(&uniform, LONG_N);
    same_at_every_count(&normal, 1000); /* too few to share */
}

/* The normals against the generator itself, at both ends of the tensor */
static void normals_are_the_generators(void **state)
{
    (void)state;
    const double scale = 0.5;
    const fw_draw d = {FW_DRAW_NORMAL, 11, 5, scale, 1.0, 1, LONG_N, 0};
    float *w = malloc(LONG_N * sizeof *w), raw[64];
    assert_non_null(w);
    thread_pool *pool = thread_pool_create(7, NULL);
    assert_non_null(pool);
    fw_draw_whole(&d, w, LONG_N, pool);
    thread_pool_free(pool);
    const uint64_t at[] = {0, (uint64_t)1 << 16, LONG_N - 64};
    for (size_t a = 0; a < sizeof at / sizeof *at; a++) {
        /* the weights' Philox stream: the tensor's, sub-block 0xFFFFFF00 */
        vp_gauss_fill(raw, 64, 11, 5, 0xFFFFFF00u, at[a]);
        for (size_t i = 0; i < 64; i++)
            assert_true(w[at[a] + i] == (float)(scale * raw[i]));
    }
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(normal_and_uniform),
        cmocka_unit_test(normals_are_the_generators),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
