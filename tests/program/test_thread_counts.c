/* Results never depend on the thread count (issue 31): every engine's CSV,
 * a profile sweep's (its runs several at once) and a training sweep's, is
 * the same bytes at --threads 1, 2, 3, 7 and 16, on this machine whatever
 * its cores: 16 threads on two cores share them, and sharing must not
 * change a bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"

#define MAX_ARGS 48

static const char *const thread_counts[] = {"1", "2", "3", "7", "16"};

/* The job's standard output at --threads t (the job's arguments, NULL-ended). */
static program_run at_threads(const char *const *job, const char *t)
{
    const char *argv[MAX_ARGS];
    size_t c = 0;
    while (job[c])
        argv[c] = job[c], c++;
    argv[c++] = "--threads";
    argv[c++] = t;
    argv[c] = NULL;
    program_run run = run_varprof(argv);
    if (run.status != 0)
        fail_msg("%s ... --threads %s: exit %d: %s", job[0], t, run.status, run.err);
    return run;
}

static void same_at_every_count(const char *const *job)
{
    program_run one = at_threads(job, thread_counts[0]);
    assert_true(one.out_length > 0);
    for (size_t i = 1; i < sizeof thread_counts / sizeof *thread_counts; i++) {
        program_run other = at_threads(job, thread_counts[i]);
        if (other.out_length != one.out_length || memcmp(other.out, one.out, one.out_length) != 0)
            fail_msg("%s ...: --threads %s writes other bytes than --threads 1", job[0],
                     thread_counts[i]);
        program_run_free(&other);
    }
    program_run_free(&one);
}

static void monte_carlo(void **state)
{
    (void)state;
    const char *full[] = {"--engine", "mc",       "--method", "full",     "--width",
                          "96",       "--trials", "3000",     "--layers", "6",
                          "--grad",   "--format", "csv",      NULL};
    same_at_every_count(full);
    const char *reduced[] = {"--engine", "mc", "--method", "reduced", "--trials", "5000",
                             "--layers", "12", "--format", "csv",     NULL};
    same_at_every_count(reduced);
}

static void forward_pass(void **state)
{
    (void)state;
    const char *stored[] = {"--engine", "forward",  "--layers", "3",  "--width", "256",
                            "--heads",  "4",        "--tokens", "64", "--batch", "4",
                            "--grad",   "--format", "csv",      NULL};
    same_at_every_count(stored);
    const char *drawn[] = {
        "--engine",    "forward", "--layers",         "3",     "--width",  "128", "--mlp", "swiglu",
        "--positions", "rope",    "--weight-storage", "drawn", "--format", "csv", NULL};
    same_at_every_count(drawn);
}

/* A profile sweep shares its combinations among the threads, several
   runs at once, the longest first (issue 31): the output is still the
   combinations in the sweep's order, the same bytes at every count. */
static void profile_sweep(void **state)
{
    (void)state;
    const char *csv[] = {"--engine", "mc,forward", "--placement", "pre-norm,post-ln",
                         "--layers", "2,3",        "--width",     "64,96",
                         "--trials", "300",        "--tokens",    "16",
                         "--format", "csv",        NULL};
    same_at_every_count(csv);
    const char *text[] = {"--engine", "forward",  "--gain", "0.5,1,2",  "--layers", "2", "--width",
                          "64",       "--tokens", "16",     "--format", "text",     NULL};
    same_at_every_count(text);
}

static void training(void **state)
{
    (void)state;
    const char *sweep[] = {"train",   "--placement", "pre-norm,post-ln", "--layers", "2,3",
                           "--steps", "12",          "--format",         "csv",      NULL};
    same_at_every_count(sweep);
    const char *attention[] = {"train",   "--block", "attn-mlp", "--layers", "2",
                               "--steps", "8",       "--format", "csv",      NULL};
    same_at_every_count(attention);
    /* tensors of 2^20 weights: drawn whole at init on a pool of threads */
    const char *wide[] = {"train",   "--layers", "2",        "--width", "512",
                          "--steps", "2",        "--format", "csv",     NULL};
    same_at_every_count(wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(monte_carlo),
        cmocka_unit_test(forward_pass),
        cmocka_unit_test(profile_sweep),
        cmocka_unit_test(training),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
