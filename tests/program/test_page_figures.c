/* Nothing false on the page, and nothing the text shows left off it: each
 * table of a profile in Markdown and LaTeX (--grad, the Monte Carlo, the
 * forward pass, several placements, a sweep) read back cell by cell and held
 * to the CSV of the same command line at the page's four significant figures
 * (two for a 95 % half-width). Every figure the CSV fills in a row shown has
 * its column on the page, every interval its half-width; several stacks end
 * with the top of each, held to the last row of each of the CSV's stacks. */
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

#include "run_program.h"
#include "test_filter.h"

/* The figures of a page, from varprof(1), "Tables for a page" */
enum { PAGE_DIGITS = 4, HALF_DIGITS = 2 };

enum { MAX_COLUMNS = 40, MAX_ROWS = 80, MAX_TABLES = 20, CELL = 128 };

/* A table read back from a page: row 0 the headings. */
typedef struct {
    char caption[512];
    size_t n_columns, n_rows; /* n_rows counts the headings' row */
    char cell[MAX_ROWS][MAX_COLUMNS][CELL];
} read_table;

static read_table tables[MAX_TABLES];

/* The CSV: row 0 the header. */
static char csv[MAX_ROWS * 4][MAX_COLUMNS][CELL];
static size_t csv_rows, csv_columns;

/* Splits line at sep into row, trimming spaces; returns the count. */
static size_t split(const char *line, const char *sep, char row[][CELL])
{
    size_t n = 0;
    const size_t sep_length = strlen(sep);
    for (const char *at = line;; n++) {
        const char *end = strstr(at, sep);
        size_t length = end ? (size_t)(end - at) : strlen(at);
        while (length && at[0] == ' ')
            at++, length--;
        while (length && at[length - 1] == ' ')
            length--;
        assert_true(n < MAX_COLUMNS && length < CELL);
        memcpy(row[n], at, length);
        row[n][length] = '\0';
        if (!end)
            return n + 1;
        at = end + sep_length;
    }
}

static int csv_column(const char *name)
{
    for (size_t c = 0; c < csv_columns; c++)
        if (strcmp(csv[0][c], name) == 0)
            return (int)c;
    return -1;
}

/* The page's text as lines, in a static copy. */
static size_t page_lines(const char *text, char **lines, size_t max)
{
    static char copy[1 << 18];
    assert_true(strlen(text) < sizeof copy);
    strcpy(copy, text);
    size_t n = 0;
    for (char *at = copy; *at && n < max;) {
        lines[n++] = at;
        char *end = strchr(at, '\n');
        if (!end)
            break;
        *end = '\0';
        at = end + 1;
    }
    return n;
}

static void read_csv(const char *text)
{
    static char *lines[MAX_ROWS * 4];
    csv_rows = page_lines(text, lines, MAX_ROWS * 4);
    for (size_t r = 0; r < csv_rows; r++) {
        const size_t n = split(lines[r], ",", csv[r]);
        csv_columns = r == 0 ? n : csv_columns;
        assert_int_equal(n, csv_columns);
    }
}

/* A Markdown row "| a | b |" into the table's row r. */
static void markdown_row(const char *line, read_table *t, size_t r)
{
    char inner[8192];
    const size_t length = strlen(line);
    assert_true(length >= 2 && line[length - 1] == '|' && length < sizeof inner);
    memcpy(inner, line + 1, length - 2);
    inner[length - 2] = '\0';
    const size_t n = split(inner, " |", t->cell[r]);
    if (r == 0)
        t->n_columns = n;
    assert_int_equal(n, t->n_columns);
}

static size_t read_markdown(const char *text)
{
    char *lines[4096];
    const size_t n = page_lines(text, lines, 4096);
    size_t count = 0;
    for (size_t i = 2; i + 1 < n; i++) {
        if (lines[i][0] != '|' || strncmp(lines[i + 1], "| ---", 5) != 0)
            continue;
        read_table *t = &tables[count++];
        assert_true(count <= MAX_TABLES && lines[i - 1][0] == '\0');
        snprintf(t->caption, sizeof t->caption, "%s", lines[i - 2]);
        markdown_row(lines[i], t, 0);
        for (t->n_rows = 1, i += 2; i < n && lines[i][0] == '|'; i++)
            markdown_row(lines[i], t, t->n_rows++);
    }
    return count;
}

static size_t read_latex(const char *text)
{
    char *lines[4096];
    const size_t n = page_lines(text, lines, 4096);
    size_t count = 0;
    for (size_t i = 1; i + 3 < n; i++) {
        if (strncmp(lines[i], "\\begin{tabular}", 15) != 0)
            continue;
        read_table *t = &tables[count++];
        assert_true(count <= MAX_TABLES && strncmp(lines[i - 1], "% ", 2) == 0);
        assert_string_equal(lines[i + 1], "\\toprule");
        assert_string_equal(lines[i + 3], "\\midrule");
        snprintf(t->caption, sizeof t->caption, "%s", lines[i - 1] + 2);
        t->n_rows = 0;
        for (i += 2; i < n && strcmp(lines[i], "\\bottomrule") != 0; i++) {
            if (strcmp(lines[i], "\\midrule") == 0)
                continue;
            const size_t length = strlen(lines[i]);
            assert_true(length > 3 && strcmp(lines[i] + length - 3, " \\\\") == 0);
            lines[i][length - 3] = '\0';
            const size_t cells = split(lines[i], " & ", t->cell[t->n_rows]);
            if (t->n_rows++ == 0)
                t->n_columns = cells;
            assert_int_equal(cells, t->n_columns);
        }
    }
    return count;
}

/* A LaTeX cell as Markdown writes it: "$1.2\times10^{-5} \pm 3\times10^{-7}$"
 * to "1.2e-5 +- 3e-7", a heading left as it is. */
static void plain(const char *cell, char *out, size_t size)
{
    size_t n = 0;
    for (const char *p = cell; *p && n + 4 < size;) {
        if (strncmp(p, "\\times10^{", 10) == 0) {
            out[n++] = 'e';
            p += 10;
        } else if (strncmp(p, "10^{", 4) == 0 && (p == cell || p[-1] == '$')) {
            memcpy(out + n, "1e", 2);
            n += 2;
            p += 4;
        } else if (strncmp(p, " \\pm ", 5) == 0) {
            memcpy(out + n, " +- ", 4);
            n += 4;
            p += 5;
        } else if (*p == '$' || *p == '}') {
            p++;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
}

/* Which CSV column a page's heading shows, Markdown's or LaTeX's; NULL for
 * one that no CSV column holds. */
static const char *column_of_heading(const char *heading)
{
    static const char *const names[][3] = {
        {"k", "$k$", "sub_block"},
        {"layer", "layer", "layer"},
        {"part", "part", "part"},
        {"g_k", "$g_k$", "gain"},
        {"v_k", "$v_k$", "stream_var"},
        {"sqrt(v_k/v_0)", "$\\sqrt{v_k/v_0}$", "stream_size"},
        {"size p5", "size $p_{5}$", "stream_size_p05"},
        {"size p50", "size $p_{50}$", "stream_size_p50"},
        {"size p95", "size $p_{95}$", "stream_size_p95"},
        {"u_k", "$u_k$", "update_ratio"},
        {"e_k", "$e_k$", "embedding_share"},
        {"log2 e_k", "$\\log_2 e_k$", "log2_embedding_share"},
        {"measured g_k", "measured $g_k$", "measured_gain"},
        {"cosine", "cosine", "update_cosine"},
        {"stream norm", "stream norm", "stream_norm"},
        {"G_k", "$G_k$", "grad_var"},
        {"sqrt(G_k/G_K)", "$\\sqrt{G_k/G_K}$", "grad_size"},
        {"wg_k", "$\\mathrm{wg}_k$", "weight_grad"},
        /* the tops' */
        {"placement", "placement", "placement"},
        {"gain", "gain", "gain_setting"},
        {"layers", "layers", "layers"},
        {"width", "width", "width"},
        {"engine", "engine", "engine"},
        {"sqrt(v_K/v_0)", "$\\sqrt{v_K/v_0}$", "stream_size"},
        {"u_K", "$u_K$", "update_ratio"},
        {"e_K", "$e_K$", "embedding_share"},
        {"log2 e_K", "$\\log_2 e_K$", "log2_embedding_share"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(heading, names[i][0]) == 0 || strcmp(heading, names[i][1]) == 0)
            return names[i][2];
    return NULL;
}

/* The page's cell holds the CSV's figure: both empty, or text the same, or
 * a number that is the CSV's at the page's figures, with a half-width where
 * the CSV has the interval (symmetric, as "+-" claims) and with_half asks
 * for one: a stack's rows, not the tops (the text's tops have none). */
static void hold(const char *page_cell, size_t csv_row, const char *name, int with_half)
{
    char text[CELL], want[64];
    plain(page_cell, text, sizeof text);
    const char *value = csv[csv_row][csv_column(name)];
    char *half = strstr(text, " +- ");
    if (half)
        *half = '\0', half += 4;
    /* text, or a count (k, layer): written whole, held as it is */
    if (!value[0] || !isdigit((unsigned char)value[value[0] == '-']) ||
        (!strpbrk(value, ".e") && !strpbrk(text, ".e"))) {
        if (strcmp(text, value) != 0)
            fail_msg("%s at CSV row %zu: the page has '%s', the CSV '%s'", name, csv_row, text,
                     value);
        return;
    }
    snprintf(want, sizeof want, "%.*g", PAGE_DIGITS, strtod(value, NULL));
    if (!text[0] || strtod(text, NULL) != strtod(want, NULL))
        fail_msg("%s at CSV row %zu: the page has '%s', the CSV %s (%s)", name, csv_row, text,
                 value, want);
    char lo_name[64], hi_name[64];
    snprintf(lo_name, sizeof lo_name, "%s_lo", name);
    snprintf(hi_name, sizeof hi_name, "%s_hi", name);
    const int lo = csv_column(lo_name), hi = csv_column(hi_name);
    if (lo < 0 || !csv[csv_row][lo][0]) {
        if (half)
            fail_msg("%s at CSV row %zu: a half-width '%s' the CSV has no interval for", name,
                     csv_row, half);
        return;
    }
    const double v = strtod(value, NULL), l = strtod(csv[csv_row][lo], NULL),
                 h = strtod(csv[csv_row][hi], NULL);
    if (!half && with_half)
        fail_msg("%s at CSV row %zu: no half-width for the interval [%g, %g]", name, csv_row, l, h);
    else if (!half)
        return;
    assert_true(fabs((h - v) - (v - l)) <= 1e-9 * (h - l) + 1e-300);
    snprintf(want, sizeof want, "%.*g", HALF_DIGITS, (h - l) / 2);
    if (strtod(half, NULL) != strtod(want, NULL))
        fail_msg("%s at CSV row %zu: half-width '%s', the CSV's %s", name, csv_row, half, want);
}

/* Where a stack's rows are in the CSV: first and past-the-last. */
typedef struct {
    size_t first, end;
} stack_rows;

/* The columns that tell the CSV's stacks apart, alike on a stack's rows */
static const char *const stack_keys[] = {"engine", "placement",    "norm",
                                         "layers", "gain_setting", "width"};
#define N_STACK_KEYS (sizeof stack_keys / sizeof *stack_keys)

static int is_stack_key(const char *name)
{
    for (size_t i = 0; i < N_STACK_KEYS; i++)
        if (strcmp(name, stack_keys[i]) == 0)
            return 1;
    return 0;
}

static int same_stack(size_t a, size_t b)
{
    for (size_t i = 0; i < N_STACK_KEYS; i++)
        if (strcmp(csv[a][csv_column(stack_keys[i])], csv[b][csv_column(stack_keys[i])]) != 0)
            return 0;
    return 1;
}

static size_t csv_stacks(stack_rows *stacks, size_t max)
{
    size_t n = 0;
    for (size_t r = 1; r < csv_rows; r++) {
        if (n == 0 || !same_stack(stacks[n - 1].first, r)) {
            assert_true(n < max);
            stacks[n++] = (stack_rows){r, r};
        }
        stacks[n - 1].end = r + 1;
    }
    return n;
}

/* Whether the CSV column is the stack's identity, on every row alike, or
 * an interval's bound (held with its figure): not a column of the rows. */
static int not_a_row_figure(const char *name)
{
    const size_t n = strlen(name);
    return is_stack_key(name) || strcmp(name, "loss") == 0 ||
           (n > 3 && (strcmp(name + n - 3, "_lo") == 0 || strcmp(name + n - 3, "_hi") == 0));
}

static const char *engine_title(const char *engine)
{
    return strcmp(engine, "mc") == 0        ? "Monte Carlo"
           : strcmp(engine, "forward") == 0 ? "forward pass"
                                            : "closed form";
}

/* One stack's table: its caption names it, one page row per CSV row, every
 * cell held, every figure the CSV fills on the page. */
static void hold_stack(const read_table *t, stack_rows s)
{
    const size_t first = s.first;
    if (!strstr(t->caption, csv[first][csv_column("placement")]) ||
        !strstr(t->caption, engine_title(csv[first][csv_column("engine")])))
        fail_msg("the caption '%s' is not of CSV row %zu's stack", t->caption, first);
    assert_int_equal(t->n_rows - 1, s.end - first);
    for (size_t r = 1; r < t->n_rows; r++) {
        const size_t row = first + r - 1;
        for (size_t c = 0; c < t->n_columns; c++) {
            const char *name = column_of_heading(t->cell[0][c]);
            if (!name)
                fail_msg("the page's heading '%s' names no CSV column", t->cell[0][c]);
            hold(t->cell[r][c], row, name, 1);
        }
        for (size_t c = 0; c < csv_columns; c++) {
            int shown = not_a_row_figure(csv[0][c]) || !csv[row][c][0];
            for (size_t p = 0; p < t->n_columns && !shown; p++)
                shown = strcmp(column_of_heading(t->cell[0][p]), csv[0][c]) == 0;
            if (!shown)
                fail_msg("CSV row %zu has %s = %s; the page has no such column", row, csv[0][c],
                         csv[row][c]);
        }
    }
    const char *loss = csv[first][csv_column("loss")];
    if (loss[0]) { /* the run's, in the caption: "loss copy 4.68 on the batch" */
        const char *at = strstr(t->caption, "loss ");
        assert_non_null(at);
        at = strchr(at + 5, ' ');
        char want[64];
        snprintf(want, sizeof want, "%.*g", PAGE_DIGITS, strtod(loss, NULL));
        assert_true(at && strtod(at, NULL) == strtod(want, NULL));
    }
}

/* The tops' table: one row per stack, each held to its stack's last row. */
static void hold_tops(const read_table *t, const stack_rows *stacks, size_t n)
{
    assert_string_equal(t->caption, "The top of each stack");
    assert_int_equal(t->n_rows - 1, n);
    for (size_t r = 1; r < t->n_rows; r++) {
        size_t found = n;
        for (size_t s = 0; s < n; s++) {
            int same = 1;
            for (size_t c = 0; c < t->n_columns && same; c++) {
                const char *name = column_of_heading(t->cell[0][c]);
                char text[CELL];
                plain(t->cell[r][c], text, sizeof text);
                if (name && is_stack_key(name))
                    same = strcmp(text, csv[stacks[s].first][csv_column(name)]) == 0;
            }
            if (same) {
                if (found != n)
                    fail_msg("the tops' row %zu fits two stacks: a column is missing", r);
                found = s;
            }
        }
        if (found == n)
            fail_msg("the tops' row %zu is of no stack of the CSV", r);
        const size_t top = stacks[found].end - 1;
        for (size_t c = 0; c < t->n_columns; c++) {
            const char *name = column_of_heading(t->cell[0][c]);
            if (name)
                hold(t->cell[r][c], top, name, 0);
            else if (strcmp(t->cell[0][c], "K") == 0 || strcmp(t->cell[0][c], "$K$") == 0)
                assert_string_equal(t->cell[r][c], csv[top][csv_column("sub_block")]);
        }
    }
}

/* The command line as a page in format and as CSV: the same figures. */
static void page_holds_the_csv(const char *format, const char *const *args)
{
    const char *argv[64];
    size_t n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    argv[n] = "--format", argv[n + 1] = "csv", argv[n + 2] = NULL;
    program_run run = run_varprof(argv);
    assert_int_equal(run.status, 0);
    read_csv(run.out);
    program_run_free(&run);
    argv[n + 1] = format;
    run = run_varprof(argv);
    if (run.status != 0)
        fail_msg("varprof exits %d: %s", run.status, run.err);
    const size_t count =
        strcmp(format, "markdown") == 0 ? read_markdown(run.out) : read_latex(run.out);
    program_run_free(&run);
    stack_rows stacks[MAX_TABLES];
    const size_t n_stacks = csv_stacks(stacks, MAX_TABLES);
    /* a run of several stacks ends with the top of each, as the text does */
    assert_int_equal(count, n_stacks + (n_stacks > 1));
    for (size_t s = 0; s < n_stacks; s++)
        hold_stack(&tables[s], stacks[s]);
    if (n_stacks > 1)
        hold_tops(&tables[n_stacks], stacks, n_stacks);
}

#define HOLDS(format, ...) page_holds_the_csv(format, (const char *const[]){__VA_ARGS__, NULL})

static void gradients_on_the_page(void **state)
{
    (void)state;
    HOLDS("markdown", "--grad", "--every", "16");
    HOLDS("latex", "--grad", "--every", "16");
    HOLDS("latex", "--grad", "--placement", "post-ln", "--layers", "6");
}

static void monte_carlo_intervals_on_the_page(void **state)
{
    (void)state;
    HOLDS("latex", "--engine", "mc", "--layers", "4", "--width", "16", "--trials", "128", "--every",
          "2");
    HOLDS("markdown", "--engine", "mc", "--grad", "--layers", "3", "--width", "16", "--trials",
          "128");
}

static void forward_pass_on_the_page(void **state)
{
    (void)state;
    HOLDS("markdown", "--engine", "forward", "--grad", "--placement", "pre-norm,post-ln",
          "--layers", "2", "--width", "32", "--heads", "4", "--vocab", "64", "--batch", "2",
          "--tokens", "8");
    HOLDS("latex", "--engine", "forward", "--layers", "2", "--width", "32", "--heads", "4",
          "--vocab", "64", "--batch", "2", "--tokens", "8");
}

static void several_placements_and_sweeps_end_with_their_tops(void **state)
{
    (void)state;
    HOLDS("markdown", "--placement", "all", "--layers", "8", "--every", "4");
    HOLDS("latex", "--placement", "all", "--layers", "8", "--every", "8");
    HOLDS("latex", "--gain", "1,2,4", "--layers", "4,8", "--every", "4");
    HOLDS("markdown", "--engine", "mc", "--gain", "1,2", "--width", "8,16", "--layers", "2",
          "--trials", "64");
    /* shares below a double's range: 2^-1000 on the page as 9.333e-302 */
    HOLDS("latex", "--placement", "post-ln,pre-norm", "--layers", "2000", "--every", "500");
}

/* What a page cannot hold it refuses, naming it, before any work. */
static void a_comparison_is_refused_on_a_page(void **state)
{
    (void)state;
    const char *const formats[] = {"markdown", "latex"};
    for (size_t i = 0; i < 2; i++) {
        program_run run = run_varprof(
            (const char *const[]){"--engine", "closed,mc", "--format", formats[i], NULL});
        assert_int_equal(run.status, 2);
        assert_int_equal(run.out_length, 0);
        if (!strstr(run.err, "comparison") || !strstr(run.err, "verdicts") ||
            !strstr(run.err, "--engine"))
            fail_msg("the refusal does not say what is missing: %s", run.err);
        program_run_free(&run);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradients_on_the_page),
        cmocka_unit_test(monte_carlo_intervals_on_the_page),
        cmocka_unit_test(forward_pass_on_the_page),
        cmocka_unit_test(several_placements_and_sweeps_end_with_their_tops),
        cmocka_unit_test(a_comparison_is_refused_on_a_page),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests_name("page figures", tests, NULL, NULL);
}
