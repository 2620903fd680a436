/* Falcon's fused query_key_value head by head (multi_query false) and its
 * biases (bias true), held to transformers through the corpus's falcon case:
 * tests/data/gen_falcon_forms.py rewrites that multi-query checkpoint as the
 * same network in each form, so on every instruction set each form's stream
 * norms and loss must be the case's to the bit. Besides: the Falcon and GPT-J
 * forms varprof does not run are refused by the key that asks for them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_program.h"
#include "test_filter.h"
#include "text_file.h"
#include "varprof/isa.h"

/* varprof on checkpoint dir with its tokens: the backward's loss, CSV; the
   gradients to grads where not NULL. */
static program_run run_dir(const char *dir, const char *grads)
{
    char tokens[1100];
    snprintf(tokens, sizeof tokens, "%s/tokens.csv", dir);
    const char *args[] = {"--engine", "forward", "--weights", dir,    "--token-ids",
                          tokens,     "--grad",  "--loss",    "next", "--format",
                          "csv",      NULL,      NULL,        NULL};
    args[11] = grads ? "--grads-out" : NULL;
    args[12] = grads;
    return run_varprof(args);
}

/* The cell of column col on the line at line: its start, its length in *len
   (0 where the line has fewer cells). */
static const char *cell_at(const char *line, int col, size_t *len)
{
    for (int c = 0; c < col; c++) {
        line += strcspn(line, ",\n");
        if (*line != ',') {
            *len = 0;
            return line;
        }
        line++;
    }
    *len = strcspn(line, ",\n");
    return line;
}

/* Column col of every line, one a line, into out. */
static void column_text(const char *csv, int col, char *out, size_t size)
{
    size_t n = 0;
    for (const char *line = csv; *line && n + 1 < size; line += strcspn(line, "\n") + 1) {
        size_t len;
        const char *cell = cell_at(line, col, &len);
        n += (size_t)snprintf(out + n, size - n, "%.*s\n", (int)len, cell);
        if (!line[strcspn(line, "\n")])
            break;
    }
}

/* The header's column called name, or -1. */
static int column_of(const char *csv, const char *name)
{
    for (int col = 0; col < 100; col++) {
        size_t len;
        const char *cell = cell_at(csv, col, &len);
        if (len == strlen(name) && strncmp(cell, name, len) == 0)
            return col;
    }
    return -1;
}

/* form's stream_norm and loss columns, on every instruction set, are the
   falcon case's own on that instruction set */
static void same_figures_as_the_case(const char *form)
{
    char falcon[1024], dir[1024];
    snprintf(falcon, sizeof falcon, "%s", test_data_path("conformance/falcon"));
    snprintf(dir, sizeof dir, "%s/%s", test_data_path("falcon_forms"), form);
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        setenv("VARPROF_ISA", vp_isa_name((vp_isa)isa), 1);
        program_run want = run_dir(falcon, NULL), got = run_dir(dir, NULL);
        unsetenv("VARPROF_ISA");
        if (want.status != 0 || got.status != 0)
            fail_msg("%s on %s: exit %d and %d: %s%s", form, vp_isa_name((vp_isa)isa), want.status,
                     got.status, want.err, got.err);
        static const char *const columns[] = {"stream_norm", "loss"};
        for (size_t c = 0; c < 2; c++) {
            const int col = column_of(want.out, columns[c]);
            assert_true(col >= 0);
            assert_int_equal(column_of(got.out, columns[c]), col);
            static char a[8192], b[8192];
            column_text(want.out, col, a, sizeof a);
            column_text(got.out, col, b, sizeof b);
            if (strcmp(a, b) != 0)
                fail_msg("%s on %s: %s\n%s\nthe falcon case's:\n%s", form, vp_isa_name((vp_isa)isa),
                         columns[c], b, a);
        }
        program_run_free(&want);
        program_run_free(&got);
    }
}

static void heads_form(void **state)
{
    (void)state;
    same_figures_as_the_case("heads");
}

/* the biases are read, and their gradients named as the checkpoint names them */
static void bias_form(void **state)
{
    (void)state;
    same_figures_as_the_case("bias");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bias", test_data_path("falcon_forms"));
    program_run run = run_dir(dir, "-");
    assert_int_equal(run.status, 0);
    assert_non_null(strstr(run.out, "transformer.h.1.self_attention.query_key_value.bias"));
    assert_non_null(strstr(run.out, "transformer.h.1.self_attention.dense.bias"));
    assert_non_null(strstr(run.out, "transformer.h.1.mlp.dense_4h_to_h.bias"));
    program_run_free(&run);
}

/* A directory holding config.json alone, the case's with its first `from`
   made `to`: the refusal comes before any tensor is read. */
static void refused(const char *base, const char *from, const char *to, const char *says)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/config.json", test_data_path(base));
    char *config = replace_first(strdup(read_text(path)), from, to);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/refused", test_scratch_dir());
    checkpoint_twin(dir, config, NULL);
    free(config);
    const char *args[] = {"--engine", "forward", "--weights", dir, NULL};
    program_run run = run_varprof(args);
    if (run.status == 0 || !strstr(run.err, says))
        fail_msg("%s with %s: exit %d, expected '%s' in: %s", base, to, run.status, says, run.err);
    program_run_free(&run);
}

static void forms_not_run_are_refused(void **state)
{
    (void)state;
    const char *f = "conformance/falcon";
    refused(f, "\"alibi\": false", "\"alibi\": true", "'alibi' true");
    refused(f,
            "\"multi_query\": true,\n  \"new_decoder_architecture\": false,\n"
            "  \"num_attention_heads\": 4,\n  \"num_hidden_layers\": 2,\n  \"num_kv_heads\": 4",
            "\"multi_query\": false, \"new_decoder_architecture\": false, "
            "\"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"num_kv_heads\": 2",
            "'num_kv_heads' 2 with multi_query false");
    refused(f, "\"num_ln_in_parallel_attn\": null", "\"num_ln_in_parallel_attn\": 2",
            "'num_ln_in_parallel_attn' 2");
    refused(f, "\"alibi\": false",
            "\"alibi\": false, \"apply_residual_connection_post_layernorm\": true",
            "'apply_residual_connection_post_layernorm' is set");
    refused("conformance/gptj", "\"rotary_dim\": 4", "\"rotary_dim\": null", "'rotary_dim' null");
    refused("conformance/gptj", "\"rotary_dim\": 4", "\"rotary_dim\": 3",
            "'rotary_dim' 3 must be even");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heads_form),
        cmocka_unit_test(bias_form),
        cmocka_unit_test(forms_not_run_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
