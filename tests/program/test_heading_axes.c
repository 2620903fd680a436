/* The heading and the JSON say each of issue 30's axes a run used, so that
 * a page never reads as the default architecture when it was not: a
 * parallel block with two norms (its own formula), biases on the MLP and
 * the head alone, rotary positions on part of each head (and the theta of
 * interleaved pairs), a norm on the embedding. Defaults stay unsaid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "output_check.h"
#include "test_filter.h"

#define NET "--engine", "forward", "--layers", "2", "--width", "64", "--tokens", "8"

static void text_heading_names_the_axes(void **state)
{
    (void)state;
    const char *two_norms[] = {NET,          "--placement",        "parallel",
                               "--residual", "parallel-two-norms", NULL};
    expect_output(two_norms, "x <- x + f_attn(N_1(x)) + f_mlp(N_2(x))", "f_mlp(N(x))");
    const char *one_norm[] = {NET, "--placement", "parallel", NULL};
    expect_output(one_norm, "x <- x + f_attn(N(x)) + f_mlp(N(x))", "N_2");
    const char *mlp_bias[] = {NET, "--bias", "mlp", NULL};
    expect_output(mlp_bias, "biases on the MLP and the head alone", NULL);
    const char *fraction[] = {NET, "--positions", "rope", "--rope-fraction", "0.25", NULL};
    expect_output(fraction, "positions: rope, theta 10000, on the first 0.25 of each head", NULL);
    const char *interleaved[] = {NET, "--positions", "rope-interleaved", NULL};
    expect_output(interleaved, "positions: rope-interleaved, theta 10000\n", NULL);
    const char *embedding[] = {NET, "--embedding-norm", "layernorm", NULL};
    expect_output(embedding, "embedding: a layernorm on the looked-up rows", NULL);
    const char *plain[] = {NET, NULL};
    expect_output(plain, "network: width 64", "embedding:");
}

static void json_names_the_axes(void **state)
{
    (void)state;
    const char *all[] = {NET,
                         "--placement",
                         "parallel",
                         "--residual",
                         "parallel-two-norms",
                         "--positions",
                         "rope",
                         "--rope-fraction",
                         "0.5",
                         "--embedding-norm",
                         "layernorm",
                         "--format",
                         "json",
                         NULL};
    expect_output(all, "\"rope_fraction\":0.5", NULL);
    expect_output(all, "\"residual\":\"parallel-two-norms\"", NULL);
    expect_output(all, "\"embedding_norm\":\"layernorm\"", NULL);
    const char *one_norm[] = {NET, "--placement", "parallel", "--format", "json", NULL};
    expect_output(one_norm, "\"placement\":\"parallel\"", "\"residual\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_heading_names_the_axes),
        cmocka_unit_test(json_names_the_axes),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
