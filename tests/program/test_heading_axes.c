/* The heading and the JSON say each of issue 30's axes a run used, so that
 * a page never reads as the default architecture when it was not: a
 * parallel block with two norms (its own formula), biases on the MLP and
 * the head alone, rotary positions on part of each head (and the theta of
 * interleaved pairs), a norm on the embedding, a sliding window with the
 * layers it is on and their RoPE base, linear RoPE scaling. Defaults stay
 * unsaid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "output_check.h"
#include "run_program.h"
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

/* The windowed checkpoints of gen_window_reference.py: Gemma 3's sliding
   layer 0 turns by base 10000, its full layer 1 by 1e6 scaled x8;
   Mistral's two layers both slide. */
static void windows_are_said(void **state)
{
    (void)state;
    const char *gemma3[] = {"--weights", test_data_path("hf/window_gemma3"), "--tokens", "8", NULL};
    expect_output(gemma3, "positions: rope, theta 1e+06, linear scaling x8 on the full layers\n",
                  NULL);
    expect_output(gemma3, "window: 4 tokens on 1 of 2 layers, which turn by rope theta 10000\n",
                  NULL);
    const char *gemma3_json[] = {
        "--weights", test_data_path("hf/window_gemma3"), "--tokens", "8", "--format", "json", NULL};
    expect_output(gemma3_json, "\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":8}", NULL);
    expect_output(gemma3_json,
                  "\"rope_local_theta\":10000,\"sliding_window\":4,"
                  "\"sliding_layers\":1",
                  NULL);
    const char *mistral[] = {"--weights", test_data_path("hf/window_mistral"), "--tokens", "8",
                             NULL};
    expect_output(mistral, "window: 4 tokens on 2 of 2 layers\n", "linear scaling");
    const char *plain[] = {NET, "--positions", "rope", NULL};
    expect_output(plain, "positions: rope, theta 10000\n", "window:");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_heading_names_the_axes),
        cmocka_unit_test(json_names_the_axes),
        cmocka_unit_test(windows_are_said),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
