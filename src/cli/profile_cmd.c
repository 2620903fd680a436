/* varprof [profile]: compute each placement's profile and write it. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output_file.h"
#include "varprof/varprof.h"

enum { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };
enum { ENGINE_CLOSED, ENGINE_MC, ENGINE_ALL };

/* Each placement's profiles: the closed form's, the Monte Carlo's, or both. */
#define MAX_PROFILES (2 * VP_PLACEMENT_COUNT)

/* A sampled figure agrees with the closed form within this many standard
 * errors, or within this many eps relative: the norms' eps moves a sampled
 * stream by about eps, which no standard error covers where a norm pins it. */
#define AGREEMENT_SE 3.0
#define AGREEMENT_EPS_MULTIPLE 10.0

typedef struct {
    vp_placement placements[VP_PLACEMENT_COUNT];
    size_t n_placements;
    vp_config base;
    int format;
    int engine;
    vp_mc_options mc;
    size_t every;
    vp_model model; /* from --model; model.name is empty without it */
    const char *gains_path;
    double *gains; /* from --gains, owned */
    size_t n_gains;
} profile_request;

/* --model NAME: the model's placement, and its layers unless --layers says otherwise. */
static int read_model(const cli_args *args, profile_request *req)
{
    if (args->given[OPT_PLACEMENT])
        return cli_usage_error("--model and --placement both given; the model decides the "
                               "placement, so give one of them");
    vp_model_table table;
    int rc = load_models(&table);
    if (rc != EXIT_OK)
        return rc;
    const vp_model *m = vp_model_find(&table, args->value[OPT_MODEL]);
    if (!m) {
        vp_model_table_free(&table);
        return cli_usage_error("--model: '%s' is not in the models table; 'varprof models' "
                               "lists them", args->value[OPT_MODEL]);
    }
    req->placements[req->n_placements++] = m->placement;
    req->model = *m;
    vp_model_table_free(&table);
    return read_stack_options(args, req->model.layers, &req->base);
}

/* "all", or a comma list of names, each once. */
static int read_placements(const cli_args *args, profile_request *req)
{
    const char *list = args->given[OPT_PLACEMENT] ? args->value[OPT_PLACEMENT] : "pre-norm";
    if (strcmp(list, "all") == 0) {
        for (int p = 0; p < VP_PLACEMENT_COUNT; p++)
            req->placements[req->n_placements++] = (vp_placement)p;
        return EXIT_OK;
    }
    char name[64];
    const char *start = list;
    for (;;) {
        const char *comma = strchr(start, ',');
        size_t length = comma ? (size_t)(comma - start) : strlen(start);
        if (length == 0 || length >= sizeof name)
            return cli_usage_error("--placement: '%s' is not a comma-separated list of "
                                   "placement names",
                                   list);
        memcpy(name, start, length);
        name[length] = '\0';
        vp_placement p;
        vp_error err;
        if (vp_placement_parse(name, &p, &err) != VP_OK)
            return cli_usage_error("--placement: %s", err.message);
        for (size_t i = 0; i < req->n_placements; i++)
            if (req->placements[i] == p)
                return cli_usage_error("--placement: '%s' names %s twice", list,
                                       vp_placement_name(p));
        req->placements[req->n_placements++] = p;
        if (!comma)
            return EXIT_OK;
        start = comma + 1;
    }
}

static int read_request(const cli_args *args, profile_request *req)
{
    static const char *const formats[] = {"text", "csv", "json", NULL};
    static const char *const engines[] = {"closed", "mc", "all", NULL};
    int rc;
    req->every = 1;
    if (args->given[OPT_MODEL])
        rc = read_model(args, req);
    else if ((rc = read_placements(args, req)) == EXIT_OK)
        rc = read_stack_options(args, VP_DEFAULT_LAYERS, &req->base);
    if (rc != EXIT_OK ||
        (rc = cli_choice(args, OPT_FORMAT, formats, &req->format)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_ENGINE, engines, &req->engine)) != EXIT_OK ||
        (rc = read_sampling_options(args, &req->mc)) != EXIT_OK ||
        (rc = cli_size(args, OPT_EVERY, 1, 2 * (size_t)VP_MAX_LAYERS, &req->every)) != EXIT_OK)
        return rc;
    const option_id sampling[] = {OPT_WIDTH, OPT_TRIALS, OPT_SEED, OPT_THREADS, OPT_NORM,
                                  OPT_METHOD};
    for (size_t i = 0; req->engine == ENGINE_CLOSED && i < sizeof sampling / sizeof *sampling;
         i++)
        if (args->given[sampling[i]])
            return cli_usage_error("%s applies to the Monte Carlo: add --engine mc or --engine "
                                   "all", cli_option_name(sampling[i]));
    if (args->given[OPT_GAINS] && args->given[OPT_GAIN])
        return cli_usage_error("--gain and --gains both given; a file of gains replaces the "
                               "single gain, so give one of them");
    if (args->given[OPT_FORCE] && !args->given[OPT_OUTPUT] && !args->given[OPT_PLOT])
        return cli_usage_error("--force only applies with --output, --plot or --plot-script");
    /* the Monte Carlo's sizes, memory included, are checked before anything is allocated */
    for (size_t i = 0; req->engine != ENGINE_CLOSED && i < req->n_placements; i++) {
        vp_config cfg = req->base;
        cfg.placement = req->placements[i];
        vp_error err;
        if (vp_mc_check(&cfg, &req->mc, &err) != VP_OK)
            return cli_usage_error("--engine %s: %s", req->engine == ENGINE_MC ? "mc" : "all",
                                   err.message);
    }
    return EXIT_OK;
}

/* Writes one profile in the chosen format; the caller starts and ends the document. */
static vp_status write_profile(const profile_request *req, FILE *out, vp_json_writer *json,
                               const vp_profile *profile, int first)
{
    switch (req->format) {
    case FORMAT_CSV:
        return vp_csv_write_profile(out, profile, req->every);
    case FORMAT_JSON:
        return vp_json_add_profile(json, profile, req->every);
    default:
        if (!first)
            fputc('\n', out);
        return vp_text_write_profile(out, profile, req->every);
    }
}

static void warn_overflow(const vp_profile *p)
{
    fprintf(stderr, "varprof: warning: %s: the %s overflows double at sub-block %zu; rows stop "
                    "at sub-block %zu\n",
            vp_placement_name(p->config.placement), p->overflowed, p->overflow_at,
            p->overflow_at - 1);
}

/* Every placement must have as many sub-blocks as the file has gains; said
 * before anything is written, so that no profile is half-delivered. */
static int check_gain_count(const profile_request *req)
{
    for (size_t i = 0; req->gains && i < req->n_placements; i++) {
        size_t k_total = vp_sub_block_count(req->placements[i], req->base.layers);
        if (req->n_gains != k_total)
            return cli_runtime_error("--gains: %s holds %zu gains, but %zu layers of %s make %zu "
                                     "sub-blocks: give one gain per sub-block",
                                     req->gains_path, req->n_gains, req->base.layers,
                                     vp_placement_name(req->placements[i]), k_total);
    }
    return EXIT_OK;
}

static void write_model_heading(const profile_request *req, FILE *out)
{
    const vp_model *m = &req->model;
    fprintf(out, "model %s (%d): %zu layers", m->name, m->year, m->layers);
    if (req->base.layers != m->layers)
        fprintf(out, " (%zu here, as --layers says)", req->base.layers);
    fprintf(out, ", %s, %s, QK-norm %s; source: %s\n", vp_placement_name(m->placement),
            vp_norm_name(m->norm), m->qk_norm ? "yes" : "no", m->source);
}

/* The profiles of one placement: closed and sampled, either possibly NULL. */
typedef struct {
    vp_profile *closed, *sampled;
} placement_profiles;

static int compute_placement(const profile_request *req, size_t i, placement_profiles *out)
{
    vp_config cfg = req->base;
    cfg.placement = req->placements[i];
    cfg.gains = req->gains;
    cfg.n_gains = req->n_gains;
    vp_error err;
    *out = (placement_profiles){0};
    if (req->engine != ENGINE_MC && vp_closed_profile(&cfg, &out->closed, &err) != VP_OK)
        return cli_runtime_error("%s", err.message);
    if (req->engine != ENGINE_CLOSED && vp_mc_profile(&cfg, &req->mc, &out->sampled, &err) != VP_OK) {
        vp_profile_free(out->closed);
        out->closed = NULL;
        return cli_runtime_error("Monte Carlo: %s", err.message);
    }
    if (out->closed && out->closed->overflow_at)
        warn_overflow(out->closed);
    if (out->sampled && out->sampled->overflow_at)
        warn_overflow(out->sampled);
    return EXIT_OK;
}

static vp_status write_placement(const profile_request *req, FILE *out, vp_json_writer *json,
                                 const placement_profiles *pp, size_t i)
{
    vp_status status = VP_OK;
    if (req->format == FORMAT_TEXT && req->engine == ENGINE_ALL) {
        if (i > 0)
            fputc('\n', out);
        vp_comparison cmp;
        status = vp_text_write_side_by_side(out, pp->closed, pp->sampled, req->every);
        if (status == VP_OK &&
            vp_compare(pp->closed, pp->sampled, AGREEMENT_SE,
                       AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) == VP_OK)
            status = vp_text_write_verdict(out, pp->closed, &cmp);
        return status;
    }
    if (pp->closed)
        status = write_profile(req, out, json, pp->closed, i == 0);
    if (status == VP_OK && pp->sampled)
        status = write_profile(req, out, json, pp->sampled, i == 0 && !pp->closed);
    return status;
}

/* One line per placement, after the tables: the verdicts together. */
static vp_status write_verdicts(const profile_request *req, FILE *out,
                                const placement_profiles *all)
{
    fprintf(out, "\nVerdicts: the Monte Carlo against the closed form, each figure within %g "
                 "standard errors or %g eps relative, and none beyond what chance allows the "
                 "largest of them\n", AGREEMENT_SE, AGREEMENT_EPS_MULTIPLE);
    for (size_t i = 0; i < req->n_placements; i++) {
        vp_comparison cmp;
        if (vp_compare(all[i].closed, all[i].sampled, AGREEMENT_SE,
                       AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) == VP_OK)
            vp_text_write_verdict(out, all[i].closed, &cmp);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

/* Computes every placement's profiles and writes them (out may be NULL: only
 * a plot was asked for). With kept, the profiles are handed back for the
 * plot (*n_kept of them); otherwise each is freed once written. */
static int compute_and_write(const profile_request *req, FILE *out, vp_profile **kept,
                             size_t *n_kept)
{
    int rc = check_gain_count(req);
    if (rc != EXIT_OK)
        return rc;
    if (out && req->format == FORMAT_TEXT && req->model.name[0])
        write_model_heading(req, out);
    vp_json_writer json;
    vp_status status = VP_OK;
    if (out && req->format == FORMAT_CSV)
        status = vp_csv_write_header(out);
    else if (out && req->format == FORMAT_JSON)
        status = vp_json_begin(&json, out);
    vp_profile_top tops[VP_PLACEMENT_COUNT];
    placement_profiles all[VP_PLACEMENT_COUNT] = {{0}};
    for (size_t i = 0; i < req->n_placements && status == VP_OK; i++) {
        placement_profiles *pp = &all[i];
        if ((rc = compute_placement(req, i, pp)) != EXIT_OK)
            break;
        if (out)
            status = write_placement(req, out, &json, pp, i);
        tops[i] = vp_profile_get_top(pp->closed ? pp->closed : pp->sampled);
        if (!kept && req->engine != ENGINE_ALL) {
            vp_profile_free(pp->closed);
            vp_profile_free(pp->sampled);
            *pp = (placement_profiles){0};
        }
    }
    if (rc == EXIT_OK && out && status == VP_OK) {
        if (req->format == FORMAT_JSON)
            status = vp_json_end(&json);
        else if (req->format == FORMAT_TEXT && req->engine == ENGINE_ALL && req->n_placements > 1)
            status = write_verdicts(req, out, all);
        else if (req->format == FORMAT_TEXT && req->n_placements > 1)
            status = vp_text_write_comparison(out, tops, req->n_placements);
    }
    for (size_t i = 0; i < req->n_placements; i++) {
        if (kept && rc == EXIT_OK) {
            if (all[i].closed)
                kept[(*n_kept)++] = all[i].closed;
            if (all[i].sampled)
                kept[(*n_kept)++] = all[i].sampled;
        } else {
            vp_profile_free(all[i].closed);
            vp_profile_free(all[i].sampled);
        }
    }
    if (rc != EXIT_OK)
        return rc;
    if (status != VP_OK)
        return cli_runtime_error("cannot write the output: %s", vp_strerror(status));
    return EXIT_OK;
}

int run_profile(const cli_args *args)
{
    profile_request req = {0};
    int rc = read_request(args, &req);
    if (rc != EXIT_OK || (rc = check_plot_options(args)) != EXIT_OK)
        return rc;
    /* with --plot, the table is written only where --output or --format asks */
    const int plotting = args->given[OPT_PLOT];
    const int writing = !plotting || args->given[OPT_OUTPUT] || args->given[OPT_FORMAT];
    output_file out = {0};
    if (writing &&
        (rc = output_open(&out, args->value[OPT_OUTPUT], args->given[OPT_FORCE])) != EXIT_OK)
        return rc;
    if (args->given[OPT_GAINS]) {
        vp_error err;
        req.gains_path = args->value[OPT_GAINS];
        if (vp_gains_read(args->value[OPT_GAINS], &req.gains, &req.n_gains, &err) != VP_OK) {
            output_abort(&out);
            return cli_runtime_error("--gains: %s", err.message);
        }
    }
    vp_profile *kept[MAX_PROFILES] = {0};
    size_t n_kept = 0;
    rc = compute_and_write(&req, writing ? out.stream : NULL, plotting ? kept : NULL, &n_kept);
    free(req.gains);
    if (rc != EXIT_OK) {
        if (writing)
            output_abort(&out);
    } else if (writing) {
        rc = output_commit(&out);
    }
    /* the output is written even when gnuplot then fails or is missing */
    if (rc == EXIT_OK && plotting) {
        char title[128] = "";
        if (req.model.name[0])
            snprintf(title, sizeof title, "%s: %s, %zu layers", req.model.name,
                     vp_placement_name(req.model.placement), req.base.layers);
        rc = plot_profiles(args, (const vp_profile *const *)kept, n_kept,
                           title[0] ? title : NULL);
    }
    for (size_t i = 0; i < n_kept; i++)
        vp_profile_free(kept[i]);
    return rc;
}
