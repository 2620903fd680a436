/* --model on the command line: a model of the table runs with its placement
 * and depth, --layers overrides the depth, an unknown model is a usage error
 * naming it, GLM-130B takes its own DeepNorm alpha and beta (which --alpha
 * and --beta override), and the models command lists the table with each
 * model's parameter count (the table itself is tests/unit/test_models.c). */
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
#include "varprof/varprof.h"

static void model_option_takes_placement_and_layers(void **state)
{
    (void)state;
    program_run run =
        run_varprof((const char *const[]){"--model", "gemma-2-27b", "--format", "csv", NULL});
    assert_int_equal(run.status, 0);
    /* sandwich, 46 layers: the last row is sub-block 92 */
    assert_non_null(strstr(run.out, "\nclosed,sandwich,,46,92,45,mlp,"));
    program_run_free(&run);
    run = run_varprof(
        (const char *const[]){"--model", "gemma-2-27b", "--layers", "3", "--format", "csv", NULL});
    assert_non_null(strstr(run.out, "\nclosed,sandwich,,3,6,2,mlp,"));
    program_run_free(&run);
    run = run_varprof((const char *const[]){"--model", "gpt-5", NULL});
    assert_int_equal(run.status, 2);
    assert_non_null(strstr(run.err, "'gpt-5' is not in the models table"));
    program_run_free(&run);
    /* --model glm-130b takes its own alpha = (2N)^(1/2) and beta = (2N)^(-1/2)
     * at the depth run (8 layers: 4 and 0.25); --alpha and --beta override */
    const struct {
        const char *extra[2];
        const char *scales;
    } glm[] = {
        {{NULL, NULL}, "\"alpha\":4,\"beta\":0.25,"},
        {{"--alpha", "2"}, "\"alpha\":2,\"beta\":0.25,"},
        {{"--beta", "0.5"}, "\"alpha\":4,\"beta\":0.5,"},
    };
    for (size_t i = 0; i < sizeof glm / sizeof glm[0]; i++) {
        run = run_varprof((const char *const[]){"--model", "glm-130b", "--layers", "8", "--format",
                                                "json", glm[i].extra[0], glm[i].extra[1], NULL});
        assert_int_equal(run.status, 0);
        if (!strstr(run.out, glm[i].scales)) {
            print_error("want %s in:\n%.400s\n", glm[i].scales, run.out);
            fail();
        }
        program_run_free(&run);
    }
    run = run_varprof((const char *const[]){"--model", "glm-130b", "--every", "70", NULL});
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "alpha 11.8322, beta 0.0845154"));
    assert_non_null(strstr(run.out, "its own alpha (2N)^(1/2), beta (2N)^(-1/2)"));
    program_run_free(&run);
    run = run_varprof((const char *const[]){"models", NULL});
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "gemma-2-27b"));
    assert_non_null(strstr(run.out, "its own alpha (2N)^(1/2), beta (2N)^(-1/2), N its layers"));
    /* each model's parameter count, starred where it is not the model's own */
    assert_non_null(strstr(run.out,
                           "llama-2-7b          2023      32  pre-norm      rmsnorm    no  "
                           "     6.74 B\n"));
    assert_non_null(strstr(run.out,
                           "t5-base             2019      12  pre-norm      rmsnorm    no  "
                           "      110 M*\n"));
    assert_non_null(strstr(run.out, "mixture of experts: the count is a dense model's"));
    assert_non_null(strstr(run.out, "\n* the count of the row's shape, not the model's"));
    program_run_free(&run);
}

/* varprof models groups the table by placement: one heading a placement,
   "-- NAME: formula", and under it only models of that placement, so every
   model is under its own; the placements with a real checkpoint family
   (all but DeepNorm's, whose GLM-130B is no Hugging Face family) each have
   one of those families' rows under them. */
static void models_are_grouped_by_placement(void **state)
{
    (void)state;
    program_run run = run_varprof((const char *const[]){"models", NULL});
    assert_int_equal(run.status, 0);
    char heading[32] = "";
    int seen[VP_PLACEMENT_COUNT] = {0};
    size_t models = 0;
    for (const char *line = run.out; *line; line = strchr(line, '\n') + 1) {
        char name[64], placement[32];
        if (sscanf(line, "-- %31[^:]:", heading) == 1) {
            vp_placement p;
            vp_error err;
            assert_int_equal(vp_placement_parse(heading, &p, &err), VP_OK);
            assert_int_equal(seen[p]++, 0); /* one heading a placement */
            assert_non_null(strstr(line, vp_placement_formula(p)));
        } else if (line[0] >= 'a' && line[0] <= 'z' && strncmp(line, "model ", 6) != 0 &&
                   sscanf(line, "%63s %*d %*d %31s", name, placement) == 2) {
            if (strcmp(placement, heading) != 0)
                fail_msg("%s (%s) is under the heading of %s", name, placement, heading);
            /* the count as a reader says it: 999,885,952 is "1 B", never "1e+03 M" */
            const char *end = strchr(line, '\n'), *e = strstr(line, "e+");
            if (e && (!end || e < end))
                fail_msg("%s's count is in exponent notation: %.*s", name,
                         (int)(end ? end - line : (ptrdiff_t)strlen(line)), line);
            models++;
        }
        if (!strchr(line, '\n'))
            break;
    }
    assert_true(models > 50);
    const char *family_rows[] = {"opt-350m", "pythia-1b", "gemma-2-9b", "olmo-2-7b", "llama-2-7b"};
    const char *placements[] = {"post-ln", "parallel", "sandwich", "output-norm", "pre-norm"};
    for (size_t i = 0; i < sizeof family_rows / sizeof *family_rows; i++) {
        char heading_line[40];
        snprintf(heading_line, sizeof heading_line, "-- %s:", placements[i]);
        const char *under = strstr(run.out, heading_line), *row = strstr(run.out, family_rows[i]);
        assert_non_null(under);
        assert_non_null(row);
        const char *next = strstr(under + 1, "\n-- ");
        assert_true(row > under && (!next || row < next));
    }
    program_run_free(&run);
}

/* Each row's attention in its shape line, as its columns say: a window on
   every layer, on one of two, on five of six with the sliding layers' own
   base and the full layers' linear factor; the scores' scale and caps */
static void attention_is_in_the_shape_line(void **state)
{
    (void)state;
    program_run run = run_varprof((const char *const[]){"models", "--wide", NULL});
    assert_int_equal(run.status, 0);
    static const char *const says[] = {
        "rope theta 10000, window 4096 on every layer, norm eps 1e-05",
        "rope theta 10000, window 2047 on every layer, norm eps 1e-05",
        "window 4096 on 1 of each 2 layers, scores x 144^-1/2, scores capped at 50, logits capped "
        "at 30, norm eps 1e-06",
        "rope theta 1e+06, window 1024 on 5 of each 6 layers (their rope theta 10000), rope "
        "linear x8 on the full layers, scores x 168^-1/2, norm eps 1e-06",
        "rope theta 1e+06, window 512 on 5 of each 6 layers (their rope theta 10000), scores x "
        "256^-1/2, norm eps 1e-06",
    };
    for (size_t i = 0; i < sizeof says / sizeof *says; i++)
        if (!strstr(run.out, says[i]))
            fail_msg("'varprof models --wide' does not say '%s'", says[i]);
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_option_takes_placement_and_layers),
        cmocka_unit_test(models_are_grouped_by_placement),
        cmocka_unit_test(attention_is_in_the_shape_line),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("the models table", tests, NULL, NULL);
}
