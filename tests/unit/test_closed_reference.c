/* The closed-form engine held against an independent reference.
 *
 * tests/data/closed_reference.csv is computed by gen_closed_reference.py from
 * the formulas of varprof-maths(7), PLACEMENTS, in 50-digit decimal arithmetic,
 * starting from the very doubles this test parses back. Every case is run
 * through vp_closed_profile and every figure of every sub-block compared.
 * A case is a run of rows with k = 0..K and one name; the file is checked to
 * be whole first, so that a truncated or empty file fails rather than passes.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_filter.h"
#include "varprof/closed.h"
#include "varprof/config.h"
#include "varprof/placement.h"
#include "varprof/profile.h"

#include "../support/reference.h"

#define REF_FILE "closed_reference.csv"

/* What gen_closed_reference.py prints to stderr ("353 cases"): a file with
 * fewer is truncated, one with more was regenerated without updating this. */
#define REF_EXPECTED_CASES 353u

/* The engine and the reference start from identical doubles; the reference
 * rounds once from 50 digits, the engine rounds at each of up to 200 steps
 * of a recursion whose steps are well conditioned (sums of positives,
 * products, quotients, square roots), so its error is a few hundred ulp at
 * worst, about 1e-13. 1e-12 relative leaves room for that and no more. */
#define REL_TOL 1e-12

/* How many mismatching figures are printed before the rest are only counted. */
#define MAX_PRINTED 40

/* Rows [first, first + n_rows) of the table are one case. */
typedef struct {
    size_t first, n_rows;
    vp_placement placement;
    size_t sub_blocks;
} ref_case;

typedef struct {
    ref_table table;
    ref_case *cases;
    size_t n_cases;
} reference;

/* |a - b| relative to the larger magnitude. Equal values (both zero included)
 * differ by 0; a NaN differs by infinity, so that it always fails. */
static double rel_diff(double a, double b)
{
    if (isnan(a) || isnan(b))
        return INFINITY;
    if (a == b)
        return 0.0;
    return fabs(a - b) / fmax(fabs(a), fabs(b));
}

static void reference_free(reference *ref)
{
    ref_table_free(&ref->table);
    free(ref->cases);
    *ref = (reference){0};
}

/* The inputs every row of a case repeats, so a mixed-up case is caught. */
static bool same_inputs(const ref_row *a, const ref_row *b)
{
    return strcmp(a->case_name, b->case_name) == 0 && strcmp(a->placement, b->placement) == 0 &&
           a->layers == b->layers && a->has_gain == b->has_gain && a->gain == b->gain &&
           a->gamma == b->gamma && a->alpha == b->alpha && a->beta == b->beta &&
           a->embedding_var == b->embedding_var;
}

/* The placement a row names, which must be the canonical name, not an alias. */
static bool parse_placement(const ref_row *row, vp_placement *out)
{
    vp_error err;
    return vp_placement_parse(row->placement, out, &err) == VP_OK &&
           strcmp(vp_placement_name(*out), row->placement) == 0;
}

/* Checks the case starting at row `first` and fills *c; on a malformed case
 * returns false with one sentence in msg. */
static bool read_case(const ref_table *t, size_t first, ref_case *c, char *msg, size_t size)
{
    const ref_row *head = &t->rows[first];
    if (head->k != 0 || head->has_update_ratio) {
        snprintf(msg, size, "row %zu (case %s) starts a case but has k = %zu or an update ratio",
                 first + 1, head->case_name, head->k);
        return false;
    }
    if (!parse_placement(head, &c->placement) || head->layers < 1 || head->layers > VP_MAX_LAYERS) {
        snprintf(msg, size, "case %s: placement \"%s\" or layers %zu is not valid", head->case_name,
                 head->placement, head->layers);
        return false;
    }
    c->first = first;
    c->sub_blocks = vp_sub_block_count(c->placement, head->layers);
    c->n_rows = c->sub_blocks + 1;
    if (!head->has_gain && head->n_gains != c->sub_blocks) {
        snprintf(msg, size, "case %s: %zu per-sub-block gains for %zu sub-blocks", head->case_name,
                 head->n_gains, c->sub_blocks);
        return false;
    }
    if (head->has_gain && head->gains) {
        snprintf(msg, size, "case %s has both gain and gains", head->case_name);
        return false;
    }
    for (size_t k = 1; k <= c->sub_blocks; k++) {
        const ref_row *row = first + k < t->n_rows ? &t->rows[first + k] : NULL;
        if (!row || row->k != k || !same_inputs(row, head) || !row->has_update_ratio ||
            row->gains) {
            snprintf(msg, size,
                     "case %s: row k = %zu of %zu is missing or has other inputs, no update "
                     "ratio, or gains",
                     head->case_name, k, c->sub_blocks);
            return false;
        }
    }
    return true;
}

static bool name_seen(const reference *ref, const char *name)
{
    for (size_t i = 0; i < ref->n_cases; i++)
        if (strcmp(ref->table.rows[ref->cases[i].first].case_name, name) == 0)
            return true;
    return false;
}

/* Reads the file and splits it into checked cases; false with msg if either fails. */
static bool split_cases(reference *ref, char *msg, size_t size)
{
    const ref_table *t = &ref->table;
    ref->cases = calloc(t->n_rows ? t->n_rows : 1, sizeof *ref->cases);
    if (!ref->cases) {
        snprintf(msg, size, "out of memory for %zu cases", t->n_rows);
        return false;
    }
    size_t first = 0;
    while (first < t->n_rows) {
        ref_case *c = &ref->cases[ref->n_cases];
        if (!read_case(t, first, c, msg, size))
            return false;
        if (name_seen(ref, t->rows[first].case_name)) {
            snprintf(msg, size, "case %s appears twice", t->rows[first].case_name);
            return false;
        }
        ref->n_cases++;
        first += c->n_rows;
    }
    return true;
}

/* Loads and checks the reference; fails the test (after freeing) when the
 * file is missing, malformed, or has not every case. */
static void load_reference(reference *ref)
{
    char msg[600];
    *ref = (reference){0};
    if (ref_table_load_data(REF_FILE, &ref->table, msg, sizeof msg) != 0)
        fail_msg("cannot read %s/%s: %s", ref_testdata_dir(), REF_FILE, msg);
    if (!split_cases(ref, msg, sizeof msg)) {
        reference_free(ref);
        fail_msg("%s/%s: %s", ref_testdata_dir(), REF_FILE, msg);
    }
    if (ref->n_cases != REF_EXPECTED_CASES) {
        size_t n = ref->n_cases;
        reference_free(ref);
        fail_msg("%s/%s has %zu cases, expected %u", ref_testdata_dir(), REF_FILE, n,
                 REF_EXPECTED_CASES);
    }
}

static void test_reference_is_complete(void **state)
{
    (void)state;
    reference ref;
    load_reference(&ref);
    size_t per_placement[VP_PLACEMENT_COUNT] = {0};
    size_t per_sub_block_gains = 0;
    for (size_t i = 0; i < ref.n_cases; i++) {
        per_placement[ref.cases[i].placement]++;
        per_sub_block_gains += !ref.table.rows[ref.cases[i].first].has_gain;
    }
    reference_free(&ref);
    for (int p = 0; p < VP_PLACEMENT_COUNT; p++) {
        if (per_placement[p] == 0)
            fail_msg("no case for placement %s", vp_placement_name((vp_placement)p));
    }
    /* Per-sub-block gains go down another path of the engine: they must be covered. */
    assert_true(per_sub_block_gains >= VP_PLACEMENT_COUNT);
}

/* The config a case describes; gains points into the table's first row. */
static vp_config case_config(const reference *ref, const ref_case *c)
{
    const ref_row *head = &ref->table.rows[c->first];
    vp_config cfg;
    vp_config_init(&cfg, c->placement, head->layers);
    if (head->has_gain) {
        cfg.gain = head->gain;
    } else {
        cfg.gains = head->gains;
        cfg.n_gains = head->n_gains;
    }
    cfg.gamma = head->gamma;
    cfg.alpha = head->alpha;
    cfg.beta = head->beta;
    cfg.embedding_var = head->embedding_var;
    return cfg;
}

/* Tally of the comparison over every case, for the summary and the verdict. */
typedef struct {
    size_t compared, mismatches, failed_cases;
    double max_diff;
    const char *max_case, *max_what;
    size_t max_k;
} tally;

static void compare_figure(tally *t, const char *case_name, const char *placement, size_t k,
                           const char *what, double engine, double reference_value)
{
    double d = rel_diff(engine, reference_value);
    t->compared++;
    if (d > t->max_diff || (isinf(d) && !isinf(t->max_diff))) {
        t->max_diff = d;
        t->max_case = case_name;
        t->max_what = what;
        t->max_k = k;
    }
    /* The tolerance, REL_TOL = 1e-12 relative: see its definition above. */
    if (d <= REL_TOL)
        return;
    if (t->mismatches++ < MAX_PRINTED)
        print_error("case %s placement %s k %zu %s: engine %.17g reference %.17g "
                    "(relative difference %.3g)\n",
                    case_name, placement, k, what, engine, reference_value, d);
}

/* Runs the engine on one case and compares its rows with the reference's. */
static void compare_case(const reference *ref, const ref_case *c, tally *t)
{
    const ref_row *rows = &ref->table.rows[c->first];
    vp_config cfg = case_config(ref, c);
    vp_profile *profile = NULL;
    vp_error err = {0};
    vp_status status = vp_closed_profile(&cfg, &profile, &err);
    if (status != VP_OK || !profile || profile->sub_blocks != c->sub_blocks ||
        profile->n_rows != c->n_rows || profile->overflow_at != 0) {
        t->failed_cases++;
        print_error("case %s placement %s: engine returned %s (%s), %zu rows, overflow at %zu; "
                    "expected %zu rows\n",
                    rows->case_name, rows->placement, vp_strerror(status), err.message,
                    profile ? profile->n_rows : 0, profile ? profile->overflow_at : 0, c->n_rows);
        vp_profile_free(profile);
        return;
    }
    for (size_t k = 0; k < c->n_rows; k++) {
        const vp_row *got = &profile->rows[k];
        const ref_row *want = &rows[k];
        compare_figure(t, want->case_name, want->placement, k, "stream_var", got->stream_var,
                       want->stream_var);
        if (k >= 1) /* u_0 is not defined */
            compare_figure(t, want->case_name, want->placement, k, "update_ratio",
                           got->update_ratio, want->update_ratio);
        compare_figure(t, want->case_name, want->placement, k, "embedding_share",
                       got->embedding_share, want->embedding_share);
    }
    vp_profile_free(profile);
}

static void test_engine_matches_reference(void **state)
{
    (void)state;
    reference ref;
    load_reference(&ref);
    tally t = {0};
    for (size_t i = 0; i < ref.n_cases; i++)
        compare_case(&ref, &ref.cases[i], &t);
    if (t.mismatches > MAX_PRINTED)
        print_error("... and %zu more mismatches\n", t.mismatches - MAX_PRINTED);
    print_message("compared %zu figures of %zu cases: %zu beyond %g relative, %zu cases not "
                  "run; max relative difference %.3g (case %s, k %zu, %s)\n",
                  t.compared, ref.n_cases, t.mismatches, REL_TOL, t.failed_cases, t.max_diff,
                  t.max_case ? t.max_case : "-", t.max_k, t.max_what ? t.max_what : "-");
    reference_free(&ref);
    assert_true(t.compared > 0);
    if (t.failed_cases || t.mismatches)
        fail_msg("%zu cases not run and %zu figures beyond %g relative (max %.3g)", t.failed_cases,
                 t.mismatches, REL_TOL, t.max_diff);
}

/* The "grid-" cases use DeepNet's defaults, computed by the generator as the
 * nearest double to (2M)^(1/4) and (8M)^(-1/4); vp_config_init's pow() may be
 * a few ulp off that, not more. */
static void test_deepnet_defaults_match_reference(void **state)
{
    (void)state;
    reference ref;
    load_reference(&ref);
    size_t checked = 0, wrong = 0;
    for (size_t i = 0; i < ref.n_cases; i++) {
        const ref_row *head = &ref.table.rows[ref.cases[i].first];
        if (strncmp(head->case_name, "grid-", 5) != 0)
            continue;
        vp_config cfg;
        vp_config_init(&cfg, ref.cases[i].placement, head->layers);
        checked++;
        if (rel_diff(cfg.alpha, head->alpha) > 4 * DBL_EPSILON ||
            rel_diff(cfg.beta, head->beta) > 4 * DBL_EPSILON) {
            wrong++;
            print_error("case %s: defaults alpha %.17g beta %.17g, reference %.17g %.17g\n",
                        head->case_name, cfg.alpha, cfg.beta, head->alpha, head->beta);
        }
    }
    reference_free(&ref);
    assert_true(checked > 0);
    assert_int_equal(wrong, 0);
}

/* The reference itself against the figures varprof-maths(7) quotes (32 layers): if
 * the generator were wrong, these would say so before the engine is blamed.
 * The reference is correctly rounded, so only the double formulas' own
 * rounding (a few ulp) separates them. */
static double reference_figure(const reference *ref, const char *case_name, size_t k,
                               const char *what)
{
    for (size_t i = 0; i < ref->n_cases; i++) {
        const ref_row *rows = &ref->table.rows[ref->cases[i].first];
        if (strcmp(rows->case_name, case_name) != 0 || k >= ref->cases[i].n_rows)
            continue;
        if (strcmp(what, "stream_var") == 0)
            return rows[k].stream_var;
        if (strcmp(what, "update_ratio") == 0)
            return rows[k].update_ratio;
        return rows[k].embedding_share;
    }
    return NAN;
}

static void test_reference_reproduces_maths_figures(void **state)
{
    (void)state;
    reference ref;
    load_reference(&ref);
    const struct {
        const char *case_name, *what;
        double expected;
    } figures[] = {
        {"grid-pre-norm-L32-g1", "stream_var", 65.0},
        {"grid-pre-norm-L32-g1", "update_ratio", 0.125},
        {"grid-pre-norm-L32-g1", "embedding_share", 1.0 / sqrt(65.0)},
        {"grid-post-ln-L32-g1", "embedding_share", 0x1p-32},
        {"grid-pre-norm-L32-g2", "stream_var", 257.0},
        {"grid-output-norm-L32-g2", "stream_var", 65.0},
    };
    size_t wrong = 0;
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
        double got = reference_figure(&ref, figures[i].case_name, 64, figures[i].what);
        if (rel_diff(got, figures[i].expected) > 4 * DBL_EPSILON) {
            wrong++;
            print_error("reference %s k 64 %s: %.17g, varprof-maths(7) says %.17g\n",
                        figures[i].case_name, figures[i].what, got, figures[i].expected);
        }
    }
    reference_free(&ref);
    assert_int_equal(wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_is_complete),
        cmocka_unit_test(test_reference_reproduces_maths_figures),
        cmocka_unit_test(test_deepnet_defaults_match_reference),
        cmocka_unit_test(test_engine_matches_reference),
    };
    test_filter_from_environment();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
