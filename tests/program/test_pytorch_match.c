/* Matched to PyTorch: the seed's stack and an attention stack, exported from
 * PyTorch with their tokens (tests/data/gen_torch_reference.py), reproduce
 * PyTorch's stream norms on every instruction set through the program, BF16
 * weights among them; weight files with wrong or non-finite tensors are
 * refused with the reason. Malformed safetensors headers and token files,
 * read by the library, are tests/unit/test_weight_files.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/csv_reader.h"
#include "run_program.h"
#include "test_filter.h"
#include "varprof/isa.h"
#include "varprof/varprof.h"

/* PyTorch's float32 against varprof's: matmuls summed in another order, norms
 * in double here: 1e-5 relative, the bound. */
#define MATCH_TOLERANCE 1e-5

typedef struct {
    const char *wanted_case;
    double norms[64];
    size_t count;
} reference;

static vp_status on_norm_row(void *ctx, size_t line, size_t n_cells, char *const *cells,
                             vp_error *err)
{
    (void)line;
    (void)err;
    reference *r = ctx;
    if (n_cells == 3 && strcmp(cells[0], r->wanted_case) == 0 && r->count < 64)
        r->norms[r->count++] = strtod(cells[2], NULL);
    return VP_OK;
}

static reference load_reference(const char *file, const char *which)
{
    reference r = {which, {0}, 0};
    vp_error err;
    if (csv_read_file(test_data_path(file), on_norm_row, &r, &err) != VP_OK) {
        print_error("%s\n", err.message);
        fail();
    }
    return r;
}

/* The stream_norm column of a forward CSV, sub-blocks 1 on. */
static size_t stream_norms(const char *csv, double *out, size_t most)
{
    size_t n = 0;
    const char *line = strchr(csv, '\n');
    while (line && n < most) {
        line++;
        char engine[16];
        int sub_block;
        if (sscanf(line, "%15[^,],%*[^,],%*[^,],%*[^,],%d", engine, &sub_block) == 2 &&
            sub_block > 0) {
            const char *field = line;
            for (int c = 0; c < 20 && field; c++) {
                field = strchr(field, ',');
                if (field)
                    field++;
            }
            if (field)
                out[n++] = strtod(field, NULL);
        }
        line = strchr(line, '\n');
    }
    return n;
}

static void run_case(const char *weights, const char *tokens, const char *placement,
                     const reference *want, const char *isa)
{
    char w[512], t[512];
    snprintf(w, sizeof w, "%s", test_data_path(weights));
    snprintf(t, sizeof t, "%s", test_data_path(tokens));
    if (isa)
        setenv("VARPROF_ISA", isa, 1);
    program_run run =
        run_varprof((const char *const[]){"--engine", "forward", "--weights", w, "--token-ids", t,
                                          "--placement", placement, "--format", "csv", NULL});
    unsetenv("VARPROF_ISA");
    if (run.status == 2 && strstr(run.err, "not supported by this CPU")) {
        /* under valgrind the CPU it emulates lacks AVX-512: nothing to hold there */
        program_run_free(&run);
        return;
    }
    if (run.status != 0) {
        print_error("%s", run.err);
        fail();
    }
    double got[64];
    const size_t n = stream_norms(run.out, got, 64);
    assert_int_equal(n, want->count);
    double worst = 0.0;
    for (size_t k = 0; k < n; k++) {
        double rel = fabs(got[k] - want->norms[k]) / want->norms[k];
        worst = rel > worst ? rel : worst;
        if (rel > MATCH_TOLERANCE) {
            print_error("%s on %s, sub-block %zu: %.9g, PyTorch %.9g (%.2g relative)\n", weights,
                        isa ? isa : "default", k + 1, got[k], want->norms[k], rel);
            fail();
        }
    }
    program_run_free(&run);
}

static void seed_stack_to_the_digit(void **state)
{
    (void)state;
    const reference pre = load_reference("seed_stack_norms.csv", "pre_norm");
    const reference post = load_reference("seed_stack_norms.csv", "post_ln");
    assert_int_equal(pre.count, 24);
    /* the seed's printed figures, from PyTorch's own weights */
    assert_true(round(pre.norms[0] * 100) == 3529 && round(pre.norms[11] * 100) == 4397 &&
                round(pre.norms[23] * 100) == 5082);
    for (size_t k = 0; k < 24; k++)
        assert_true(round(post.norms[k] * 100) == 3394);
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        run_case("seed_stack_pre_norm.safetensors", "seed_tokens.csv", "pre-norm", &pre,
                 vp_isa_name((vp_isa)isa));
        run_case("seed_stack_post_ln.safetensors", "seed_tokens.csv", "post-ln", &post,
                 vp_isa_name((vp_isa)isa));
    }
}

static void attention_stack_matches(void **state)
{
    (void)state;
    const reference pre = load_reference("attn_norms.csv", "pre_norm");
    const reference sandwich = load_reference("attn_norms.csv", "sandwich");
    assert_int_equal(pre.count, 8);
    for (int isa = 0; isa < VP_ISA_COUNT; isa++) {
        if (!vp_isa_supported((vp_isa)isa))
            continue;
        run_case("attn_pre_norm.safetensors", "attn_tokens.csv", "pre-norm", &pre,
                 vp_isa_name((vp_isa)isa));
        run_case("attn_sandwich.safetensors", "attn_tokens.csv", "sandwich", &sandwich,
                 vp_isa_name((vp_isa)isa));
    }
}

/* BF16 weights are the F32 ones rounded to 8 bits of mantissa: the stream
 * moves by about 2^-8 of itself, no more. */
static void bf16_weights_load(void **state)
{
    (void)state;
    reference pre = load_reference("seed_stack_norms.csv", "pre_norm");
    char w[512], t[512];
    snprintf(w, sizeof w, "%s", test_data_path("seed_stack_pre_norm_bf16.safetensors"));
    snprintf(t, sizeof t, "%s", test_data_path("seed_tokens.csv"));
    program_run run = run_varprof((const char *const[]){"--engine", "forward", "--weights", w,
                                                        "--token-ids", t, "--format", "csv", NULL});
    assert_int_equal(run.status, 0);
    double got[64];
    assert_int_equal(stream_norms(run.out, got, 64), 24);
    for (size_t k = 0; k < 24; k++)
        assert_true(fabs(got[k] - pre.norms[k]) < 0x1p-7 * pre.norms[k]);
    program_run_free(&run);
}

/* ---- hostile files ---- */

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* The loader names the tensor it misses, does not expect, or finds misshapen;
 * a width or depth of the command line's own is refused first, saying the
 * file's (test_checkpoint_figures.c). */
static void wrong_tensors_are_named(void **state)
{
    (void)state;
    char w[512], t[512];
    snprintf(w, sizeof w, "%s", test_data_path("seed_stack_pre_norm.safetensors"));
    snprintf(t, sizeof t, "%s", test_data_path("seed_tokens.csv"));
    const struct {
        const char *args[6];
        const char *why;
    } cases[] = {
        /* post-ln's MLP-only layer has the same tensors: fine; sandwich wants output norms */
        {{"--placement", "sandwich"}, "layers.0.mlp_out_norm.weight' is missing"},
        {{"--placement", "output-norm"}, "layers.0.mlp_out_norm.weight' is missing"},
        {{"--placement", "none"}, "layers.0.mlp_norm.weight' is not one this network has"},
        {{"--width", "64"}, "are 48 wide"},
        {{"--layers", "25"}, "hold 24 layers"},
        {{"--block", "attn-mlp"}, "layers.0.attn"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *argv[16] = {"--engine", "forward", "--weights", w, "--token-ids", t};
        size_t n = 6;
        for (size_t a = 0; a < 6 && cases[i].args[a]; a++)
            argv[n++] = cases[i].args[a];
        program_run run = run_varprof(argv);
        assert_int_not_equal(run.status, 0);
        if (!strstr(run.err, cases[i].why)) {
            print_error("case %zu: want \"%s\" in: %s", i, cases[i].why, run.err);
            fail();
        }
        program_run_free(&run);
    }
}

/* A weights file of a tiny network (d 2, vocab 2, one MLP-only layer) whose
 * fc1 holds a NaN: refused, naming the tensor, never a NaN printed. */
static void non_finite_weights_are_refused(void **state)
{
    (void)state;
    const char *dir = test_scratch_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/nan.safetensors", dir);
    const char *names[] = {"embed.weight",           "layers.0.mlp_norm.weight",
                           "layers.0.mlp_norm.bias", "layers.0.mlp.fc1.weight",
                           "layers.0.mlp.fc1.bias",  "layers.0.mlp.fc2.weight",
                           "layers.0.mlp.fc2.bias"};
    const size_t sizes[] = {4, 2, 2, 4, 2, 4, 2};
    char header[2048] = "{";
    size_t offset = 0;
    for (int i = 0; i < 7; i++) {
        char item[256];
        snprintf(item, sizeof item,
                 "%s\"%s\": {\"dtype\": \"F32\", \"shape\": [%s], \"data_offsets\": "
                 "[%zu, %zu]}",
                 i ? ", " : "", names[i], sizes[i] == 4 ? "2, 2" : "2", offset,
                 offset + 4 * sizes[i]);
        strcat(header, item);
        offset += 4 * sizes[i];
    }
    strcat(header, "}");
    float data[20];
    for (int i = 0; i < 20; i++)
        data[i] = 0.5f;
    data[4 + 2 + 2 + 1] = NAN; /* inside fc1.weight */
    const size_t h = strlen(header);
    unsigned char *bytes = calloc(1, 8 + h + sizeof data);
    assert_non_null(bytes);
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(bytes + 8, header, h);
    memcpy(bytes + 8 + h, data, sizeof data);
    write_bytes(path, bytes, 8 + h + sizeof data);
    free(bytes);
    program_run run = run_varprof(
        (const char *const[]){"--engine", "forward", "--weights", path, "--heads", "1", NULL});
    assert_int_equal(run.status, 1);
    assert_non_null(strstr(run.err, "layers.0.mlp.fc1.weight' holds NaN"));
    assert_null(strstr(run.out, "nan"));
    program_run_free(&run);
    test_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_stack_to_the_digit),
        cmocka_unit_test(attention_stack_matches),
        cmocka_unit_test(bf16_weights_load),
        cmocka_unit_test(wrong_tensors_are_named),
        cmocka_unit_test(non_finite_weights_are_refused),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("matched to PyTorch", tests, NULL, NULL);
}
