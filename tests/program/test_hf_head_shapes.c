/* Real models' head shapes read from config.json, not guessed from the
 * tensors: the three checkpoints of tests/data/gen_head_shapes.py, each a
 * real ratio with heads 64 times narrower (Qwen2.5-0.5B's 14 heads sharing 2
 * at width 56, SmolLM2-135M's 9 sharing 3 at width 36, Gemma-2-9B's 16 heads
 * of 4 sharing 8, q wider than its stream of 56, with its sandwich of
 * (1 + w) norms and its sqrt(d) embedding scale). varprof once inferred the
 * heads from layer 0's q and k with its default of 8 heads before
 * config.json's applied, and refused them ("layer 0's q has 56 rows and k 8:
 * with heads of 7 coordinates they must be whole heads").
 *
 * On every instruction set, each checkpoint directory runs with --grad and
 * gives the profile that the same network gives from a plain file of
 * varprof's names with its shape stated by options (--heads, --kv-heads,
 * --head-dim where the heads are not width / heads, --norm-eps,
 * --rope-theta, --mlp, --bias, --tie-embeddings, --placement): every cell of
 * every row the same, numbers to 1e-12 relative (they are bit for bit: the
 * plain file holds Gemma's 1 + w and scaled embedding as varprof rounds
 * them). And the plain file without --heads, --kv-heads and --head-dim, its
 * shape left to its tensors, either gives those same numbers or is refused
 * as a usage error naming --heads and --head-dim: never a guess that runs
 * another network. */
#include <math.h>
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

/* The two runs do the same float arithmetic: any difference beyond the
   printing of a double is a different network */
#define TOLERANCE 1e-12

typedef struct {
    const char *name;     /* tests/data/hf_heads/<name>/ and <name>.safetensors */
    const char *heads;    /* --heads */
    const char *kv_heads; /* --kv-heads */
    int head_dim;         /* --head-dim 4 needed: heads x 4 is not the width */
    const char *eps, *theta, *mlp, *bias, *tied;
    int sandwich; /* Gemma-2's placement */
} head_case;

static const head_case qwen25 = {.name = "qwen25_heads",
                                 .heads = "14",
                                 .kv_heads = "2",
                                 .eps = "1e-6",
                                 .theta = "1000000",
                                 .mlp = "swiglu",
                                 .bias = "qkv",
                                 .tied = "yes"};
static const head_case smollm2 = {.name = "smollm2_heads",
                                  .heads = "9",
                                  .kv_heads = "3",
                                  .eps = "1e-5",
                                  .theta = "100000",
                                  .mlp = "swiglu",
                                  .bias = "no",
                                  .tied = "yes"};
static const head_case gemma2_9b = {.name = "gemma2_9b_heads",
                                    .heads = "16",
                                    .kv_heads = "8",
                                    .head_dim = 1,
                                    .eps = "1e-6",
                                    .theta = "10000",
                                    .mlp = "geglu-tanh",
                                    .bias = "no",
                                    .tied = "no",
                                    .sandwich = 1};

/* One run's arguments, grown an option at a time. */
typedef struct {
    const char *v[48];
    size_t n;
    char weights[512], tokens[512];
} arg_list;

static void add(arg_list *a, const char *option, const char *value)
{
    assert_true(a->n + 3 < sizeof a->v / sizeof *a->v);
    a->v[a->n++] = option;
    if (value)
        a->v[a->n++] = value;
    a->v[a->n] = NULL;
}

/* The command both runs share: the forward engine, the batch, --grad, CSV. */
static void common_args(arg_list *a, const char *name, const char *suffix)
{
    a->n = 0;
    snprintf(a->weights, sizeof a->weights, "%s/%s%s", test_data_path("hf_heads"), name, suffix);
    snprintf(a->tokens, sizeof a->tokens, "%s", test_data_path("hf_heads/tokens.csv"));
    add(a, "--engine", "forward");
    add(a, "--weights", a->weights);
    add(a, "--token-ids", a->tokens);
    add(a, "--grad", NULL);
    add(a, "--format", "csv");
}

/* The plain file with the network stated by options; with_heads 0 leaves
   the heads' shape to the tensors. */
static void plain_args(arg_list *a, const head_case *c, int with_heads)
{
    common_args(a, c->name, ".safetensors");
    if (with_heads) {
        add(a, "--heads", c->heads);
        add(a, "--kv-heads", c->kv_heads);
        if (c->head_dim)
            add(a, "--head-dim", "4");
    }
    add(a, "--norm", "rmsnorm");
    add(a, "--norm-eps", c->eps);
    add(a, "--positions", "rope");
    add(a, "--rope-theta", c->theta);
    add(a, "--mlp", c->mlp);
    add(a, "--bias", c->bias);
    add(a, "--tie-embeddings", c->tied);
    if (c->sandwich)
        add(a, "--placement", "sandwich");
    add(a, "--loss", "copy");
}

static program_run run_on(const arg_list *a, const char *isa)
{
    setenv("VARPROF_ISA", isa, 1);
    program_run run = run_varprof(a->v);
    unsetenv("VARPROF_ISA");
    return run;
}

/* A cell (up to ',' or the line's end) as a number, if all of it is one. */
static int cell_number(const char *cell, size_t length, double *out)
{
    char text[64];
    if (length == 0 || length >= sizeof text)
        return 0;
    memcpy(text, cell, length);
    text[length] = '\0';
    char *end;
    *out = strtod(text, &end);
    return *end == '\0';
}

/* One cell of each: text alike, or numbers within TOLERANCE relative. */
static int cells_agree(const char *a, size_t na, const char *b, size_t nb)
{
    double x, y;
    if (na == nb && strncmp(a, b, na) == 0)
        return 1;
    if (cell_number(a, na, &x) && cell_number(b, nb, &y))
        return x == y || fabs(x - y) <= TOLERANCE * fmax(fabs(x), fabs(y));
    return 0;
}

/* How many cells of the two CSV texts disagree (a row or a cell one lacks
   counts), the first few printed. */
static size_t csv_differences(const char *want, const char *got, const char *what)
{
    size_t bad = 0, row = 0;
    while (*want || *got) {
        const size_t lw = strcspn(want, "\n"), lg = strcspn(got, "\n");
        const char *w = want, *g = got;
        for (size_t col = 0; w <= want + lw || g <= got + lg; col++) {
            const size_t cw = w <= want + lw ? strcspn(w, ",\n") : 0;
            const size_t cg = g <= got + lg ? strcspn(g, ",\n") : 0;
            const int missing = w > want + lw || g > got + lg;
            if ((missing || !cells_agree(w, cw, g, cg)) && bad++ < 5)
                print_error("%s: row %zu, column %zu: '%.*s' against '%.*s'%s\n", what, row, col,
                            (int)cw, w, (int)cg, g, missing ? ", a cell one lacks" : "");
            w += w <= want + lw ? cw + 1 : 0; /* past its line: stays there */
            g += g <= got + lg ? cg + 1 : 0;
        }
        want += lw + (want[lw] == '\n');
        got += lg + (got[lg] == '\n');
        row++;
    }
    return bad;
}

/* The plain file without the heads' options: the numbers want holds (NULL:
   none to hold it to), or a usage error naming --heads and --head-dim. */
static int shape_from_tensors_alone(const head_case *c, const char *isa, const char *want)
{
    arg_list a;
    plain_args(&a, c, 0);
    program_run run = run_on(&a, isa);
    int bad = 0;
    char what[160];
    snprintf(what, sizeof what, "%s on %s, the plain file without --heads", c->name, isa);
    if (run.status == 0 && !want) {
        print_error("%s: exit 0, and neither other run gave numbers to hold it to\n", what);
        bad = 1;
    } else if (run.status == 0) {
        bad = csv_differences(want, run.out, what) != 0;
        if (bad)
            print_error("%s: ran another network (exit 0, other numbers)\n", what);
    } else if (run.status != 2 || !strstr(run.err, "--heads") || !strstr(run.err, "--head-dim")) {
        print_error("%s: exit %d, want 0 with the same numbers or 2 naming --heads and "
                    "--head-dim: %s",
                    what, run.status, run.err);
        bad = 1;
    }
    program_run_free(&run);
    return bad;
}

/* The checkpoint against the plain file, on one instruction set. */
static int run_case(const head_case *c, const char *isa)
{
    arg_list dir_args, plain;
    common_args(&dir_args, c->name, "");
    plain_args(&plain, c, 1);
    program_run dir = run_on(&dir_args, isa), file = run_on(&plain, isa);
    int bad = 0;
    if (file.status == 2 && strstr(file.err, "not supported by this CPU")) {
        program_run_free(&dir);
        program_run_free(&file);
        return 0;
    }
    if (dir.status != 0) {
        print_error("%s on %s: the checkpoint directory is refused, exit %d: %s", c->name, isa,
                    dir.status, dir.err);
        bad = 1;
    }
    if (file.status != 0) {
        print_error("%s on %s: the plain file with its shape as options: exit %d: %s", c->name, isa,
                    file.status, file.err);
        bad = 1;
    }
    if (!bad) {
        char what[160];
        snprintf(what, sizeof what, "%s on %s, the directory against the plain file", c->name, isa);
        const size_t differ = csv_differences(file.out, dir.out, what);
        bad = differ != 0;
        print_message("  %-16s %-7s %s\n", c->name, isa,
                      differ                           ? "differ"
                      : strcmp(file.out, dir.out) == 0 ? "the same bytes"
                                                       : "the same within 1e-12");
    }
    /* held to the plain file's numbers, or the directory's where that failed */
    bad |= shape_from_tensors_alone(c, isa,
                                    file.status == 0  ? file.out
                                    : dir.status == 0 ? dir.out
                                                      : NULL);
    program_run_free(&dir);
    program_run_free(&file);
    return bad;
}

static void run_on_every_isa(const head_case *c)
{
    int bad = 0;
    for (int isa = 0; isa < VP_ISA_COUNT; isa++)
        if (vp_isa_supported((vp_isa)isa))
            bad |= run_case(c, vp_isa_name((vp_isa)isa));
    if (bad)
        fail();
}

/* 896 = 14 heads of 64 sharing 2, q/k/v biases, tied: 56 = 14 x 4 */
static void qwen25_heads_from_config(void **state)
{
    (void)state;
    run_on_every_isa(&qwen25);
}

/* 576 = 9 heads of 64 sharing 3, tied: 36 = 9 x 4, no multiple of 8 */
static void smollm2_heads_from_config(void **state)
{
    (void)state;
    run_on_every_isa(&smollm2);
}

/* 16 heads of 256 on 3584 sharing 8: q's 64 rows on a width of 56 */
static void gemma2_9b_heads_from_config(void **state)
{
    (void)state;
    run_on_every_isa(&gemma2_9b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(qwen25_heads_from_config),
        cmocka_unit_test(smollm2_heads_from_config),
        cmocka_unit_test(gemma2_9b_heads_from_config),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("Hugging Face head shapes", tests, NULL, NULL);
}
