/* Issue 32, "Nothing false on the page", for varprof train: the text fits
 * 80 columns whatever the lists; its heading names the loss and the loss's
 * chance level, ln V; its table, a column a step, prints three significant
 * figures of the CSV's numbers; and --layer-stats leaves an undefined
 * update ratio empty, as the manual says. */
#include <ctype.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "printed_number.h"
#include "run_program.h"
#include "test_filter.h"

#define RUN(...) run_varprof((const char *const[]){__VA_ARGS__, NULL})

/* A small network, so that a run takes milliseconds */
#define SMALL "--width", "16", "--vocab", "8", "--batch", "2", "--tokens", "4"

static program_run ran(const char *const *args)
{
    program_run run = run_varprof(args);
    if (run.status != 0)
        fail_msg("exit %d: %s", run.status, run.err);
    return run;
}

static void fits_80_columns(const char *const *args)
{
    program_run run = ran(args);
    if (widest_line(run.out) > 80) {
        print_error("a line of %zu columns from:", widest_line(run.out));
        for (size_t i = 0; args[i]; i++)
            print_error(" %s", args[i]);
        print_error("\n%s\n", run.out);
        fail();
    }
    program_run_free(&run);
}

/* ---- numbers as printed ---- */

/* The significant figures a printed number shows: its mantissa's digits
   from the first that is not 0 (3.60: 3, 0.000512: 3, 7.50e-06: 3). */
static int figures_of(const char *text)
{
    int n = 0, started = 0;
    for (const char *p = text; *p && *p != 'e'; p++) {
        if (!isdigit((unsigned char)*p))
            continue;
        started |= *p != '0';
        n += started;
    }
    return n;
}

static void rounds(const char *printed, double value, const char *where)
{
    const double shown = strtod(printed, NULL);
    if (!(fabs(shown - value) <= printed_half_unit(printed) * (1.0 + 1e-9) + 1e-300))
        fail_msg("%s: printed %s, but the figure is %.17g", where, printed, value);
}

/* ---- train ---- */

static void train_fits_80_columns(void **state)
{
    (void)state;
    static const char *const cases[][32] = {
        {"train", SMALL, "--steps", "5", NULL},
        {"train", SMALL, "--steps", "61", "--every", "2", NULL}, /* blocks of columns */
        {"train", SMALL, "--steps", "3", "--placement",
         "post-ln,pre-norm,sandwich,output-norm,"
         "deepnorm,none",
         NULL},
        {"train", SMALL, "--steps", "3", "--layers", "2,3,5", "--lr", "1e-3,3e-3,1e-2", NULL},
        {"train", SMALL, "--steps", "21", "--every", "4", "--schedule", "cosine", "--warmup", "0,5",
         "--lr", "1e-3,1e30", NULL}, /* with divergences */
        {"train", SMALL, "--steps", "10", "--placement", "output-norm,pre-norm", "--layers",
         "2,1000", "--lr", "0.000123456,1e30", "--warmup", "1,10", "--seed",
         "18446744073709551615,2", NULL}, /* labels too long for "diverged" beside them */
        {"train", SMALL, "--steps", "3", "--task", "next", "--mlp", "swiglu", "--weight-decay",
         "0.1", "--clip-norm", "1", "--norm", "rmsnorm", NULL},
        {"train", "--width", "16", "--vocab", "50000", "--batch", "1", "--tokens", "2", "--steps",
         "2", "--block", "attn-mlp", "--heads", "2", "--layers", "1000", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        fits_80_columns(cases[i]);
}

/* The heading says what the numbers are, and what a guess scores: ln V
   for V ids, whatever the task. */
static void train_heading_names_the_loss_and_chance(void **state)
{
    (void)state;
    static const char *const vocab[] = {"2", "8", "24", "1000"};
    static const char *const task[] = {"copy", "next"};
    for (size_t i = 0; i < 4; i++)
        for (size_t t = 0; t < 2; t++) {
            program_run run = ran((const char *const[]){
                "train", "--vocab", vocab[i], "--task", task[t], "--width", "16", "--batch", "2",
                "--tokens", "4", "--steps", "1", "--layers", "1", NULL});
            const char *table = strstr(run.out, "\n\n");
            assert_non_null(table);
            const char *loss = strstr(run.out, "loss: cross-entropy in nats");
            assert_true(loss && loss < table);
            const char *chance = strstr(loss, "chance");
            assert_true(chance && chance < table);
            char printed[32];
            unsigned long v = 0;
            if (sscanf(chance, "chance (a uniform guess) is ln %lu = %31[0-9.e+-]", &v, printed) !=
                2)
                fail_msg("no chance level in:\n%s", run.out);
            assert_int_equal(v, strtoul(vocab[i], NULL, 10));
            assert_int_equal(figures_of(printed), 3);
            rounds(printed, log((double)v), "chance");
            program_run_free(&run);
        }
}

/* The CSV's loss of the run of placement (and base lr, when lr > 0) at
   step; NAN when the CSV has no such row. */
static double csv_loss(const char *csv, const char *placement, double lr, size_t step)
{
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char name[32];
        size_t layers, warmup, s;
        unsigned long long seed;
        double base_lr, row_lr, loss, norm;
        if (sscanf(line + 1, "%31[^,],%zu,%lf,%zu,%llu,%zu,%lf,%lf,%lf", name, &layers, &base_lr,
                   &warmup, &seed, &s, &row_lr, &loss, &norm) == 9 &&
            strcmp(name, placement) == 0 && (lr <= 0 || base_lr == lr) && s == step)
            return loss;
    }
    return NAN;
}

/* The cell of a row under the header column ending at `end`, in cell
   (empty where the row is blank there). */
static void cell_at(const char *row, size_t row_len, size_t end, char *cell, size_t size)
{
    cell[0] = '\0';
    if (row_len < end)
        return;
    size_t start = end;
    while (start > 0 && row[start - 1] != ' ')
        start--;
    snprintf(cell, size, "%.*s", (int)(end - start), row + start);
}

/* Every cell of the text's table against the CSV of the same runs: three
   significant figures, rounded from the CSV's number. Returns the cells
   read. The labels say the placement and, if it varies, "lr=". */
static size_t check_table(const char *text, const char *csv)
{
    size_t checked = 0, ends[64], steps[64], n = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
        const size_t len = strcspn(line, "\n");
        if (strncmp(line, "  step ", 7) == 0) { /* a block's header: its columns */
            n = 0;
            for (size_t i = 6; i < len && n < 64; i++)
                if (line[i] != ' ' && (i + 1 == len || line[i + 1] == ' ')) {
                    size_t start = i;
                    while (line[start - 1] != ' ')
                        start--;
                    ends[n] = i + 1;
                    steps[n++] = strtoul(line + start, NULL, 10);
                }
            continue;
        }
        if (len == 0)
            n = 0; /* the block's end: what follows is no row */
        if (!n || strncmp(line, "  ", 2) != 0 || line[2] == ' ')
            continue;
        char placement[32] = "";
        double lr = 0;
        sscanf(line + 2, "%31s", placement);
        const char *at = strstr(line, " lr=");
        if (at && at < line + len)
            lr = strtod(at + 4, NULL);
        for (size_t k = 0; k < n; k++) {
            char cell[32], where[96];
            cell_at(line, len, ends[k], cell, sizeof cell);
            if (!cell[0] || strcmp(cell, "diverged") == 0)
                continue;
            snprintf(where, sizeof where, "%s lr %g step %zu", placement, lr, steps[k]);
            if (figures_of(cell) != 3)
                fail_msg("%s: %s has %d significant figures, not 3", where, cell, figures_of(cell));
            rounds(cell, csv_loss(csv, placement, lr, steps[k]), where);
            checked++;
        }
    }
    return checked;
}

static void train_prints_three_figures_of_the_csv(void **state)
{
    (void)state;
    static const char *const cases[][24] = {
        {"train", "--placement", "pre-norm", "--lr", "1e-2", "--steps", "301", "--every", "50",
         NULL}, /* down to 3e-7 */
        {"train", SMALL, "--placement", "pre-norm,post-ln", "--lr", "1e-3,3e-2,1e30", "--steps",
         "40", "--every", "3", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *args[32];
        size_t n = 0;
        while (cases[i][n]) {
            args[n] = cases[i][n];
            n++;
        }
        args[n] = NULL;
        program_run text = ran(args);
        args[n] = "--format";
        args[n + 1] = "csv";
        args[n + 2] = NULL;
        program_run csv = ran(args);
        const size_t cells = check_table(text.out, csv.out);
        print_message("%zu cells to three figures\n", cells);
        assert_true(cells >= 7); /* every column of one run, at the least */
        program_run_free(&text);
        program_run_free(&csv);
    }
}

/* A tensor whose values are all 0 before a step (a LayerNorm bias at step
   0) has no update ratio: its field is empty, not 0, and the manual says
   why. The bias did move: by lr sqrt(48), Adam's first step. */
static void layer_stats_leave_an_undefined_ratio_empty(void **state)
{
    (void)state;
    const char *stats = in_scratch("stats.csv");
    program_run run = ran((const char *const[]){"train", "--placement", "pre-norm", "--layers", "2",
                                                "--steps", "3", "--layer-stats", stats, NULL});
    program_run_free(&run);
    FILE *f = fopen(stats, "r");
    assert_non_null(f);
    char line[512];
    size_t empty = 0, rows = 0;
    assert_non_null(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        char tensor[128], ratio[64] = "";
        size_t step;
        double grad, weight;
        if (sscanf(line, "pre-norm,2,0.001,0,1,%zu,%127[^,],%lf,%lf,%63[^\n]", &step, tensor, &grad,
                   &weight, ratio) < 4)
            fail_msg("a row that does not read: %s", line);
        rows++;
        const int bias = strstr(tensor, "norm.bias") != NULL;
        if (bias && step == 0)
            assert_true(weight == 0.0);
        if (bias && step == 1 && fabs(weight - 1e-3 * sqrt(48.0)) > 1e-5)
            fail_msg("%s at step 1: norm %.9g, not lr sqrt(48) = %.9g", tensor, weight,
                     1e-3 * sqrt(48.0));
        if (weight == 0.0) {
            if (ratio[0])
                fail_msg("%s, step %zu: weight norm 0 but update ratio '%s'", tensor, step, ratio);
            empty++;
        } else if (!(strtod(ratio, NULL) > 0.0)) {
            fail_msg("%s, step %zu: update ratio '%s'", tensor, step, ratio);
        }
    }
    fclose(f);
    assert_int_equal(rows, 3 * (1 + 2 * 6 + 2));
    assert_int_equal(empty, 2); /* the two layers' LayerNorm biases, at step 0 */
    /* the manual's --layer-stats says why */
    FILE *man = fopen("man/varprof.1", "r");
    assert_non_null(man);
    int said = 0, in_entry = 0;
    while (fgets(line, sizeof line, man)) {
        if (strstr(line, ".BI \\-\\-layer\\-stats"))
            in_entry = 1;
        else if (in_entry && strncmp(line, ".TP", 3) == 0)
            break;
        said |= in_entry && strstr(line, "is left empty") != NULL;
    }
    fclose(man);
    assert_true(said);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(train_fits_80_columns),
        cmocka_unit_test(train_heading_names_the_loss_and_chance),
        cmocka_unit_test(train_prints_three_figures_of_the_csv),
        cmocka_unit_test(layer_stats_leave_an_undefined_ratio_empty),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, test_scratch_setup, test_scratch_teardown);
}
