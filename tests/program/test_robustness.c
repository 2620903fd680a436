/* The program under interruption, a full disk and extreme but valid numbers:
 * it stops at once, leaves no partial file, says why, and never prints a NaN. */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"

static size_t files_in(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0);
    closedir(d);
    return n;
}

/* A run long enough to interrupt: the full Monte Carlo, wide. */
static const char *const long_run[] = {"--engine", "mc",       "--method", "full",     "--width",
                                       "4096",     "--layers", "400",      "--trials", "4000",
                                       "--format", "csv",      "--output", NULL,       NULL};

static void interrupted_runs_leave_nothing(void **state)
{
    (void)state;
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        const char *args[16];
        memcpy(args, long_run, sizeof long_run);
        args[13] = in_scratch("profile.csv");
        double after = 0.0;
        program_run run = run_varprof_signalled(args, 300, signals[i], &after);
        /* 128 + SIGINT = 130, 128 + SIGTERM = 143, 128 + SIGHUP = 129 */
        assert_int_equal(run.status, 128 + signals[i]);
        if (after > 1.0) {
            print_error("stopped %.2f s after the signal; within a second is the bound\n", after);
            fail();
        }
        assert_int_equal(files_in(test_scratch()), 0); /* no profile.csv, no temporary file */
        program_run_free(&run);
    }
}

/* Interrupted while gnuplot draws a million-layer figure: neither the figure
 * nor gnuplot's temporary files remain. */
static void interrupted_plots_leave_nothing(void **state)
{
    (void)state;
    setenv("TMPDIR", test_scratch(), 1);
    const char *args[] = {"--placement", "pre-norm,none",       "--layers", "1000000",
                          "--plot",      in_scratch("fig.svg"), NULL};
    double after = 0.0;
    program_run run = run_varprof_signalled(args, 1500, SIGTERM, &after);
    unsetenv("TMPDIR");
    assert_int_equal(run.status, 143);
    assert_true(after < 1.0);
    /* gnuplot, orphaned, may still be writing the temporary file it was given
       when the check runs; what counts is that nothing named like a figure is left */
    assert_true(access(in_scratch("fig.svg"), F_OK) != 0);
    program_run_free(&run);
}

/* `varprof ... | head`: once the reader has gone, the program ends as other
 * filters do, quietly, whether the closed pipe comes as SIGPIPE or, with
 * SIGPIPE ignored, as EPIPE; and the text plot's scratch files in $TMPDIR
 * go with it, as they go at a normal exit. */
static void closed_pipe_ends_quietly(void **state)
{
    (void)state;
    setenv("TMPDIR", test_scratch(), 1);
    const char *cases[][8] = {
        {"--plot", "-", NULL},
        {"--plot", "-", "--format", "csv", NULL},
        {"--layers", "2000", "--format", "csv", NULL},
        {"--placement", "all", "--layers", "2000", NULL},
        {"table", NULL},
        {"models", NULL},
    };
    /* a normal exit first: the text plot's scratch files go too */
    program_run normal = run_varprof(cases[0]);
    assert_int_equal(normal.status, 0);
    assert_true(normal.out_length > 0);
    assert_int_equal(files_in(test_scratch()), 0);
    program_run_free(&normal);
    for (int ignore = 0; ignore < 2; ignore++)
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            program_run run = run_varprof_to_closed_pipe(cases[i], ignore);
            if (run.status != 141 || run.err[0] || files_in(test_scratch()) != 0) {
                print_error("case %zu%s: exit %d, %zu files left, said: %s\n", i,
                            ignore ? " (SIGPIPE ignored)" : "", run.status,
                            files_in(test_scratch()), run.err);
                fail();
            }
            program_run_free(&run);
        }
    unsetenv("TMPDIR");
}

/* Under nohup, SIGHUP is ignored when varprof starts: it stays ignored, and
 * the run finishes and writes its file. (Should the run end before the
 * signal is sent, the test holds nothing, but cannot fail wrongly.) */
static void signal_ignored_on_entry_stays_ignored(void **state)
{
    (void)state;
    const char *args[] = {"--engine", "mc",   "--method",  "full",
                          "--width",  "2048", "--layers",  "100",
                          "--trials", "4000", "--threads", "1",
                          "--format", "csv",  "--output",  in_scratch("nohup.csv"),
                          NULL};
    program_run run = run_varprof_signalled_while_ignored(args, 300, SIGHUP);
    assert_int_equal(run.status, 0);
    assert_int_equal(access(in_scratch("nohup.csv"), F_OK), 0);
    assert_int_equal(files_in(test_scratch()), 1); /* no temporary file beside it */
    program_run_free(&run);
}

static void full_disk_is_an_error(void **state)
{
    (void)state;
    program_run run = run_varprof_to((const char *const[]){"--format", "csv", NULL}, "/dev/full");
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "No space left on device"));
    program_run_free(&run);
    /* a device is written in place, as `>` would, never replaced, even with
       --force; this one is full, and the error says so */
    for (int force = 0; force < 2; force++) {
        run = run_varprof(
            (const char *const[]){"--output", "/dev/full", force ? "--force" : NULL, NULL});
        assert_int_equal(run.status, 1);
        assert_non_null(strstr(run.err, "No space left on device"));
        program_run_free(&run);
    }
    struct stat st;
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void assert_no_nan(const program_run *run)
{
    if (strstr(run->out, "nan") || strstr(run->out, "NaN") || strstr(run->out, "-inf") ||
        strstr(run->out, ",inf")) {
        print_error("a NaN or an infinity was printed:\n%.2000s\n", run->out);
        fail();
    }
}

/* Extreme but valid numbers: a finite answer or an overflow report. */
static void extreme_numbers_stay_finite(void **state)
{
    (void)state;
    const char *cases[][16] = {
        {"--placement", "all", "--gain", "1e-300", "--format", "csv"},
        {"--placement", "all", "--gain", "1e150", "--format", "csv"},
        {"--placement", "all", "--embedding-var", "1e-300", "--format", "csv"},
        {"--placement", "post-ln,pre-norm", "--layers", "1000000", "--every", "100000", "--format",
         "csv"},
        {"--placement", "all", "--engine", "mc", "--gain", "1e-300", "--trials", "200", "--format",
         "csv"},
        {"--placement", "all", "--engine", "mc", "--embedding-var", "1e-300", "--trials", "200",
         "--format", "csv"},
        {"--placement", "all", "--engine", "mc", "--gain", "1e150", "--trials", "200", "--format",
         "csv"},
        {"--placement", "all", "--engine", "forward", "--width", "32", "--heads", "2", "--layers",
         "3", "--embedding-var", "1e-20"},
        {"--placement", "all", "--engine", "forward", "--width", "32", "--heads", "2", "--layers",
         "3", "--gain", "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        program_run run = run_varprof(cases[i]);
        if (run.status != 0) {
            print_error("case %zu: exit %d: %s", i, run.status, run.err);
            fail();
        }
        assert_no_nan(&run);
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(interrupted_runs_leave_nothing, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test_setup_teardown(interrupted_plots_leave_nothing, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test_setup_teardown(closed_pipe_ends_quietly, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test_setup_teardown(signal_ignored_on_entry_stays_ignored, test_scratch_setup,
                                        test_scratch_teardown),
        cmocka_unit_test(full_disk_is_an_error),
        cmocka_unit_test(extreme_numbers_stay_finite),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("robustness", tests, NULL, NULL);
}
