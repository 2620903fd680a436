/* The Monte Carlo through the program: the same CSV under any number of
 * threads and on every instruction set, the text and the JSON naming the
 * sampling, and a verdict for every placement (its references are
 * tests/unit/test_mc.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* The issue's own check, through the program: CSV byte for byte. */
static void threads_do_not_change_the_csv(void **state)
{
    (void)state;
    const char *methods[] = {"reduced", "full"};
    for (int m = 0; m < 2; m++) {
        program_run one = run_varprof((const char *const[]){
            "--placement", "all", "--engine", "all", "--layers", "4", "--width", "64", "--trials",
            "999", "--method", methods[m], "--format", "csv", "--threads", "1", NULL});
        program_run two = run_varprof((const char *const[]){
            "--placement", "all", "--engine", "all", "--layers", "4", "--width", "64", "--trials",
            "999", "--method", methods[m], "--format", "csv", "--threads", "2", NULL});
        program_run seven = run_varprof((const char *const[]){
            "--placement", "all", "--engine", "all", "--layers", "4", "--width", "64", "--trials",
            "999", "--method", methods[m], "--format", "csv", "--threads", "7", NULL});
        assert_int_equal(one.status, 0);
        assert_true(one.out_length > 1000);
        assert_string_equal(one.out, two.out);
        assert_string_equal(one.out, seven.out);
        program_run_free(&one);
        program_run_free(&two);
        program_run_free(&seven);
    }
}

/* The full method gives the same bytes on every instruction set this machine
 * has, since each SIMD generator equals the scalar one; a bad VARPROF_ISA is
 * refused. */
static void every_isa_gives_the_same_csv(void **state)
{
    (void)state;
    const char *const args[] = {"--placement", "post-ln,sandwich",
                                "--engine",    "mc",
                                "--method",    "full",
                                "--layers",    "3",
                                "--width",     "77",
                                "--trials",    "300",
                                "--format",    "csv",
                                NULL};
    setenv("VARPROF_ISA", "scalar", 1);
    program_run scalar = run_varprof(args);
    assert_int_equal(scalar.status, 0);
    for (int isa = VP_ISA_AVX2; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        setenv("VARPROF_ISA", vp_isa_name((vp_isa)isa), 1);
        program_run simd = run_varprof(args);
        assert_int_equal(simd.status, 0);
        assert_string_equal(scalar.out, simd.out);
        program_run_free(&simd);
    }
    setenv("VARPROF_ISA", "avx1024", 1);
    program_run bad = run_varprof(args);
    unsetenv("VARPROF_ISA");
    assert_int_equal(bad.status, 2);
    assert_non_null(strstr(bad.err, "avx1024"));
    program_run_free(&bad);
    program_run_free(&scalar);
}

static void text_and_json_name_the_sampling(void **state)
{
    (void)state;
    /* --wide: in 80 columns the sampling's line breaks before the seed */
    program_run run = run_varprof(
        (const char *const[]){"--engine", "mc", "--seed", "42", "--layers", "2", "--wide", NULL});
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "generator philox4x32-10, seed 42"));
    program_run_free(&run);
    run = run_varprof((const char *const[]){"--engine", "mc", "--seed", "18446744073709551615",
                                            "--layers", "2", "--format", "json", NULL});
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "\"seed\":18446744073709551615"));
    assert_non_null(strstr(run.out, "\"generator\":\"philox4x32-10\""));
    program_run_free(&run);
}

static void verdicts_for_every_placement(void **state)
{
    (void)state;
    program_run run = run_varprof((const char *const[]){"--placement", "all", "--layers", "32",
                                                        "--engine", "closed,mc", "--width", "512",
                                                        "--trials", "4096", "--every", "8", NULL});
    assert_int_equal(run.status, 0);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++) {
        char line[64];
        snprintf(line, sizeof line, "\n%s: agrees", vp_placement_name((vp_placement)p));
        char other[64];
        snprintf(other, sizeof other, "\n%s: differs", vp_placement_name((vp_placement)p));
        assert_true(strstr(run.out, line) || strstr(run.out, other));
    }
    /* the finite-width share of Post-LN is shown, not hidden */
    assert_non_null(strstr(run.out, "\npost-ln: differs"));
    assert_non_null(strstr(run.out,
                           "\n  why: the closed form is the infinite-width limit; at width "
                           "512 "));
    assert_non_null(strstr(run.out, "+12.5 % in all\n"));
    assert_non_null(strstr(run.out, "\npre-norm: agrees"));
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_do_not_change_the_csv),
        cmocka_unit_test(every_isa_gives_the_same_csv),
        cmocka_unit_test(text_and_json_name_the_sampling),
        cmocka_unit_test(verdicts_for_every_placement),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Monte Carlo", tests, NULL, NULL);
}
