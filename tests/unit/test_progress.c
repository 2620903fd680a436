/* Progress: the library's reports (few, serialised, never backwards, ending
 * at the total, and no change to any result); the program's line is
 * tests/program/test_cli_progress.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/varprof.h"

typedef struct {
    unsigned long long calls, last_done, total;
    int backwards;
    int busy, overlapped; /* a call while another was running */
} tally;

static void count_report(void *context, unsigned long long done, unsigned long long total)
{
    tally *t = context;
    if (__atomic_exchange_n(&t->busy, 1, __ATOMIC_SEQ_CST))
        t->overlapped = 1;
    if (t->calls > 0 && done < t->last_done)
        t->backwards = 1;
    t->calls++;
    t->last_done = done;
    t->total = total;
    __atomic_store_n(&t->busy, 0, __ATOMIC_SEQ_CST);
}

static void assert_profiles_equal(const vp_profile *a, const vp_profile *b)
{
    assert_int_equal(a->n_rows, b->n_rows);
    for (size_t k = 0; k < a->n_rows; k++) {
        assert_memory_equal(&a->rows[k].stream_var, &b->rows[k].stream_var, sizeof(double));
        assert_memory_equal(&a->rows[k].update_ratio, &b->rows[k].update_ratio, sizeof(double));
        assert_memory_equal(&a->rows[k].embedding_share, &b->rows[k].embedding_share,
                            sizeof(double));
    }
}

/* 100000 tokens on 4 threads: at most VP_PROGRESS_STEPS + 2 calls, none at
 * once, none backwards, the last at the total; the profile bit for bit that
 * of a run without progress on one thread. */
static void monte_carlo_reports_and_changes_nothing(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 4);
    vp_mc_options plain;
    vp_mc_options_init(&plain);
    plain.trials = 100000;
    plain.width = 16;
    vp_mc_options watched = plain;
    watched.threads = 4;
    tally t = {0};
    const vp_progress progress = {count_report, &t};
    watched.progress = &progress;
    vp_profile *a = NULL, *b = NULL;
    vp_error err;
    assert_int_equal(vp_mc_profile(&cfg, &plain, &a, &err), VP_OK);
    assert_int_equal(vp_mc_profile(&cfg, &watched, &b, &err), VP_OK);
    assert_profiles_equal(a, b);
    assert_true(t.calls >= 2 && t.calls <= VP_PROGRESS_STEPS + 2);
    assert_false(t.backwards);
    assert_false(t.overlapped);
    assert_int_equal(t.total, 100000);
    assert_int_equal(t.last_done, 100000);
    vp_profile_free(a);
    vp_profile_free(b);
}

/* The forward pass reports sub-blocks, and its result does not move. */
static void forward_pass_reports_and_changes_nothing(void **state)
{
    (void)state;
    vp_config cfg;
    vp_config_init(&cfg, VP_PRE_NORM, 3);
    vp_forward_options plain;
    vp_forward_options_init(&plain);
    plain.width = 32;
    plain.heads = 4;
    plain.tokens = 8;
    vp_forward_options watched = plain;
    watched.threads = 2;
    tally t = {0};
    const vp_progress progress = {count_report, &t};
    watched.progress = &progress;
    vp_profile *a = NULL, *b = NULL;
    vp_error err;
    assert_int_equal(vp_forward_profile(&cfg, &plain, &a, &err), VP_OK);
    assert_int_equal(vp_forward_profile(&cfg, &watched, &b, &err), VP_OK);
    assert_profiles_equal(a, b);
    assert_int_equal(t.calls, 1 + 6); /* 0, then each of the 6 sub-blocks */
    assert_false(t.backwards);
    assert_int_equal(t.total, 6);
    assert_int_equal(t.last_done, 6);
    vp_profile_free(a);
    vp_profile_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(monte_carlo_reports_and_changes_nothing),
        cmocka_unit_test(forward_pass_reports_and_changes_nothing),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("progress on long work", tests, NULL, NULL);
}
