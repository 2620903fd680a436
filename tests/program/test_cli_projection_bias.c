/* --bias (issue 15) on the command line: the refusals, each naming what is
 * wrong, and a network without biases saying so and listing no gradient for
 * them (the library's side is tests/unit/test_projection_bias.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "varprof/varprof.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

static void refused(program_run run, const char *part)
{
    if (run.status != 2 && run.status != 1)
        fail_msg("exit %d, expected a refusal: %s", run.status, run.err);
    if (!strstr(run.err, part))
        fail_msg("expected '%s' in: %s", part, run.err);
    program_run_free(&run);
}

static void command_line_names_the_settings(void **state)
{
    (void)state;
    program_run run = RUN("--engine", "forward", "--bias", "maybe");
    assert_int_equal(run.status, 2);
    refused(run, "'maybe' is not one of: yes, no, qkv, mlp");
    refused(RUN("--bias", "no"), "--bias applies to");
    refused(RUN("--engine", "forward", "--weights",
                test_data_path("attn_grads_pre_norm.safetensors"), "--bias", "qkv"),
            "give --bias yes or leave it out");
    /* a network without biases says so, and its gradients list none */
    run = RUN("--engine", "forward", "--layers", "2", "--width", "32", "--heads", "2", "--bias",
              "no", "--init", "torch", "--grad", "--grads-out", "-");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "no biases"));
    assert_non_null(strstr(run.out, "layers.1.mlp.fc2.weight"));
    assert_null(strstr(run.out, "mlp.fc2.bias"));
    assert_null(strstr(run.out, "head.bias"));
    assert_non_null(strstr(run.out, "mlp_norm.bias")); /* LayerNorm's own */
    program_run_free(&run);
    /* GPT-J's: the MLP's and the head's gradients alone among the projections' biases */
    run = RUN("--engine", "forward", "--layers", "2", "--width", "32", "--heads", "2", "--bias",
              "mlp", "--init", "torch", "--grad", "--grads-out", "-");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "layers.1.mlp.fc1.bias"));
    assert_non_null(strstr(run.out, "layers.1.mlp.fc2.bias"));
    assert_non_null(strstr(run.out, "head.bias"));
    assert_null(strstr(run.out, "attn.q.bias"));
    assert_null(strstr(run.out, "attn.o.bias"));
    program_run_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(command_line_names_the_settings),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
