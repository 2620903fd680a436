/* varprof [profile]: compute each placement's profile and write it. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "output_file.h"
#include "varprof/varprof.h"

enum { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON };

typedef struct {
    vp_placement placements[VP_PLACEMENT_COUNT];
    size_t n_placements;
    vp_config base;
    int format;
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
    static const char *const engines[] = {"closed", NULL};
    int engine = 0, rc;
    req->every = 1;
    if (args->given[OPT_MODEL])
        rc = read_model(args, req);
    else if ((rc = read_placements(args, req)) == EXIT_OK)
        rc = read_stack_options(args, VP_DEFAULT_LAYERS, &req->base);
    if (rc != EXIT_OK ||
        (rc = cli_choice(args, OPT_FORMAT, formats, &req->format)) != EXIT_OK ||
        (rc = cli_choice(args, OPT_ENGINE, engines, &engine)) != EXIT_OK ||
        (rc = cli_size(args, OPT_EVERY, 1, 2 * (size_t)VP_MAX_LAYERS, &req->every)) != EXIT_OK)
        return rc;
    if (args->given[OPT_GAINS] && args->given[OPT_GAIN])
        return cli_usage_error("--gain and --gains both given; a file of gains replaces the "
                               "single gain, so give one of them");
    if (args->given[OPT_FORCE] && !args->given[OPT_OUTPUT] && !args->given[OPT_PLOT])
        return cli_usage_error("--force only applies with --output, --plot or --plot-script");
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

/* Computes every placement's profile and writes it (out may be NULL: only a
 * plot was asked for). With keep, the profiles are returned in kept[] for
 * the plot; otherwise each is freed once written. */
static int compute_and_write(const profile_request *req, FILE *out, vp_profile **kept)
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
    for (size_t i = 0; i < req->n_placements && status == VP_OK; i++) {
        vp_config cfg = req->base;
        cfg.placement = req->placements[i];
        cfg.gains = req->gains;
        cfg.n_gains = req->n_gains;
        vp_profile *profile;
        vp_error err;
        status = vp_closed_profile(&cfg, &profile, &err);
        if (status != VP_OK)
            return cli_runtime_error("%s", err.message);
        if (profile->overflow_at)
            warn_overflow(profile);
        if (out)
            status = write_profile(req, out, &json, profile, i == 0);
        tops[i] = vp_profile_get_top(profile);
        if (kept)
            kept[i] = profile;
        else
            vp_profile_free(profile);
    }
    if (!out)
        return status == VP_OK ? EXIT_OK : cli_runtime_error("%s", vp_strerror(status));
    if (status == VP_OK && req->format == FORMAT_JSON)
        status = vp_json_end(&json);
    if (status == VP_OK && req->format == FORMAT_TEXT && req->n_placements > 1)
        status = vp_text_write_comparison(out, tops, req->n_placements);
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
    vp_profile *kept[VP_PLACEMENT_COUNT] = {0};
    rc = compute_and_write(&req, writing ? out.stream : NULL, plotting ? kept : NULL);
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
        rc = plot_profiles(args, (const vp_profile *const *)kept, req.n_placements,
                           title[0] ? title : NULL);
    }
    for (size_t i = 0; i < VP_PLACEMENT_COUNT; i++)
        vp_profile_free(kept[i]);
    return rc;
}
