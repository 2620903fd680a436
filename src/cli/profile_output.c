/* varprof [profile]'s output: each combination computed and written as text, CSV, JSON or page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "page_tables.h"
#include "profile_compute.h"
#include "profile_output.h"
#include "wrap_text.h"

/* A sampled figure agrees with the closed form within this many standard
 * errors, or within this many eps relative: the norms' eps moves a sampled
 * stream by about eps, which no standard error covers where a norm pins it. */
#define AGREEMENT_SE 3.0
#define AGREEMENT_EPS_MULTIPLE 10.0

/* One profile as a table for a page, a blank line between two. */
static vp_status write_page_profile(const profile_request *req, FILE *out,
                                    const vp_profile *profile, int first)
{
    vp_page_table table;
    vp_status status = vp_page_table_of_profile(profile, req->every, &table);
    if (status != VP_OK)
        return status;
    if (!first)
        fputc('\n', out);
    status = req->format == FORMAT_MARKDOWN ? vp_markdown_write_table(out, &table)
                                            : vp_latex_write_table(out, &table);
    vp_page_table_free(&table);
    return status;
}

/* Whether the text's heading is written before each run: text, with one
 * engine (several are compared side by side after their runs). */
static int heading_first(const profile_request *req, const FILE *out)
{
    return out && req->format == FORMAT_TEXT && (req->engines & (req->engines - 1)) == 0;
}

/* Writes one profile in the chosen format; the caller starts and ends the document. */
static vp_status write_profile(const profile_request *req, FILE *out, vp_json_writer *json,
                               const vp_profile *profile, int first)
{
    switch (req->format) {
    case FORMAT_CSV: return vp_csv_write_profile(out, profile, req->every);
    case FORMAT_JSON: return vp_json_add_profile(json, profile, req->every);
    case FORMAT_MARKDOWN:
    case FORMAT_LATEX: return write_page_profile(req, out, profile, first);
    default:
        if (heading_first(req, out)) /* the heading came before the run */
            return vp_text_write_rows(out, profile, req->every,
                                      req->wide ? VP_TEXT_WIDE : VP_TEXT_FIT_80);
        if (!first)
            fputc('\n', out);
        return vp_text_write_profile(out, profile, req->every);
    }
}

/* Every placement must have as many sub-blocks as the file has gains; said
 * before anything is written, so that no profile is half-delivered. */
static int check_gain_count(const profile_request *req)
{
    for (size_t i = 0; req->gains && i < req->n_combinations; i++) {
        const vp_sweep_point point = profile_point(req, i);
        vp_config cfg = req->base;
        cfg.placement = point.placement;
        cfg.layers = point.layers;
        size_t k_total = vp_config_sub_blocks(&cfg);
        if (req->n_gains != k_total)
            return cli_runtime_error("--gains: %s holds %zu gains, but %zu layers of %s make %zu "
                                     "sub-blocks: give one gain per sub-block",
                                     req->gains_path, req->n_gains, point.layers,
                                     vp_placement_name(point.placement), k_total);
    }
    return EXIT_OK;
}

static void write_model_heading(const profile_request *req, FILE *out)
{
    const vp_model *m = &req->model;
    char here[96] = "", line[1400];
    if (req->layers_text.n > 1)
        snprintf(here, sizeof here, " (%s here, as --layers says)", req->args->value[OPT_LAYERS]);
    else if (req->base.layers != m->layers)
        snprintf(here, sizeof here, " (%zu here, as --layers says)", req->base.layers);
    snprintf(line, sizeof line, "model %s (%d): %zu layers%s, %s, %s, QK-norm %s; source: %s",
             m->name, m->year, m->layers, here, vp_placement_name(m->placement),
             vp_norm_name(m->norm), m->qk_norm ? "yes" : "no", m->source);
    write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
    if (m->alpha.text[0] || m->beta.text[0]) {
        snprintf(line, sizeof line, "its own alpha %s, beta %s%s; source: %s",
                 m->alpha.text[0] ? m->alpha.text : "DeepNet's",
                 m->beta.text[0] ? m->beta.text : "DeepNet's",
                 m->alpha.per_layer || m->beta.per_layer ? ", N its layers" : "", m->scale_source);
        write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
    }
}

/* The text's heading for combination i, written and flushed before its
 * engine runs, so that a long run says first what it computes. The bytes are
 * those the profile's own heading would have been. */
static int write_heading_first(const profile_request *req, FILE *out, size_t i)
{
    vp_sweep_point point;
    vp_config cfg;
    vp_mc_options mc;
    vp_forward_options fw;
    int rc = profile_combination(req, i, &point, &cfg, &mc, &fw);
    if (rc != EXIT_OK)
        return rc;
    const vp_engine engine = req->engines == ENGINE_MC        ? VP_ENGINE_MC
                             : req->engines == ENGINE_FORWARD ? VP_ENGINE_FORWARD
                                                              : VP_ENGINE_CLOSED;
    if (i > 0)
        fputc('\n', out);
    if (vp_text_write_heading(out, engine, &cfg, &mc, &fw,
                              req->wide ? VP_TEXT_WIDE : VP_TEXT_FIT_80) != VP_OK ||
        fflush(out) != 0)
        return cli_runtime_error("cannot write the output: %s", strerror(errno));
    return EXIT_OK;
}

/* In a sweep, what sets a combination apart beyond its placement. */
static void write_point(FILE *out, const profile_request *req, size_t i, const char *then)
{
    const vp_sweep_point p = profile_point(req, i);
    fprintf(out, "gain %.6g, %zu layer%s", p.gain, p.layers, p.layers == 1 ? "" : "s");
    if (p.width)
        fprintf(out, ", width %zu", p.width);
    fputs(then, out);
}

/* The closed form is the same at every width: a sweep writes it once, with
 * the first width of its placement, gain and layers. */
static int first_width(const profile_request *req, size_t i)
{
    return (req->first_combination + i) % req->sweep.n_widths == 0;
}

static vp_status write_placement(const profile_request *req, FILE *out, vp_json_writer *json,
                                 const placement_profiles *pp, size_t i, int *first)
{
    vp_status status = VP_OK;
    if (req->format == FORMAT_TEXT && profile_comparing(req)) {
        if (!*first)
            fputc('\n', out);
        *first = 0;
        if (req->sweeping) {
            write_point(out, req, i, ":\n");
        }
        if (pp->sampled) {
            vp_comparison cmp;
            status = vp_text_write_side_by_side(out, pp->closed, pp->sampled, req->every,
                                                profile_text_width(req));
            if (status == VP_OK && (pp->sampled->fields & VP_HAS_GRAD)) {
                fputc('\n', out);
                status = vp_text_write_grad_side_by_side(out, pp->closed, pp->sampled, req->every,
                                                         profile_text_width(req));
            }
            if (status == VP_OK && vp_compare(pp->closed, pp->sampled, AGREEMENT_SE,
                                              AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) == VP_OK)
                status = vp_text_write_verdict(out, pp->closed, &cmp, profile_text_width(req));
        }
        if (status == VP_OK && pp->forward) {
            if (pp->sampled)
                fputc('\n', out);
            status = vp_text_write_forward_comparison(out, pp->closed, pp->predicted, pp->forward,
                                                      req->every, profile_text_width(req));
            if (status == VP_OK && (pp->forward->fields & VP_HAS_GRAD)) {
                fputc('\n', out);
                status = vp_text_write_grad_forward_comparison(out, pp->predicted, pp->forward,
                                                               req->every, profile_text_width(req));
            }
            if (status == VP_OK)
                status = vp_text_write_forward_verdict(out, pp->predicted, pp->forward,
                                                       profile_text_width(req));
        }
        return status;
    }
    vp_profile *const all[] = {first_width(req, i) ? pp->closed : NULL, pp->sampled, pp->forward};
    for (size_t e = 0; e < 3 && status == VP_OK; e++)
        if (all[e]) {
            status = write_profile(req, out, json, all[e], *first);
            *first = 0;
        }
    return status;
}

/* What sets a sweep's tops apart on a page, as in the text's table; no gain
 * where --gains gave one per sub-block. */
static unsigned tops_shown(const profile_request *req)
{
    if (!req->sweeping)
        return 0;
    return (req->args->given[OPT_GAINS] ? 0 : TOPS_GAIN) | TOPS_LAYERS |
           (profile_has(req, ENGINE_MC | ENGINE_FORWARD) ? TOPS_WIDTH : 0);
}

/* One line per combination, after the tables: the verdicts together. */
static vp_status write_verdicts(const profile_request *req, FILE *out,
                                const placement_profiles *all)
{
    if (profile_has(req, ENGINE_MC)) {
        char line[256];
        snprintf(line, sizeof line,
                 "Verdicts: the Monte Carlo against the closed form, each figure within %g "
                 "standard errors or %g eps relative, and none beyond what chance allows the "
                 "largest of them",
                 AGREEMENT_SE, AGREEMENT_EPS_MULTIPLE);
        fputc('\n', out);
        write_wrapped(out, line, 0, 2, req->wide ? 0 : TEXT_COLUMNS);
        for (size_t i = 0; i < req->n_combinations; i++) {
            vp_comparison cmp;
            if (vp_compare(all[i].closed, all[i].sampled, AGREEMENT_SE,
                           AGREEMENT_EPS_MULTIPLE * req->mc.eps, &cmp) != VP_OK)
                continue;
            if (req->sweeping) /* in 80 columns the verdict starts a line */
                write_point(out, req, i, req->wide ? ": " : ":\n");
            vp_text_write_verdict(out, all[i].closed, &cmp, profile_text_width(req));
        }
    }
    if (profile_has(req, ENGINE_FORWARD)) {
        fprintf(out, "\nThe forward pass against the closed form fed with its measured gains:\n");
        for (size_t i = 0; i < req->n_combinations; i++) {
            if (req->sweeping)
                write_point(out, req, i, req->wide ? ": " : ":\n");
            vp_text_write_forward_verdict(out, all[i].predicted, all[i].forward,
                                          profile_text_width(req));
        }
    }
    return ferror(out) ? VP_EIO : VP_OK;
}

/* The tops a combination adds to the sweep's table and figure: each engine's,
 * the closed form's once across the widths. */
static size_t add_tops(const profile_request *req, const placement_profiles *pp, size_t i,
                       vp_sweep_top *tops)
{
    const vp_sweep_point point = profile_point(req, i);
    vp_profile *const each[] = {first_width(req, i) ? pp->closed : NULL, pp->sampled, pp->forward};
    size_t n = 0;
    for (size_t e = 0; e < 3; e++)
        if (each[e]) {
            tops[n].point = point;
            tops[n].point.width = each[e]->sampling.generator ? each[e]->sampling.width : 0;
            tops[n++].top = vp_profile_get_top(each[e]);
        }
    return n;
}

/* Ends the text: the verdicts where engines were compared, then the top of
 * each stack: a sweep's, or each placement's. */
static vp_status write_ending(const profile_request *req, FILE *out, const placement_profiles *all,
                              const run_results *res)
{
    vp_status status = VP_OK;
    if (profile_comparing(req) && req->n_combinations > 1)
        status = write_verdicts(req, out, all);
    if (status != VP_OK)
        return status;
    if (req->sweeping)
        return vp_sweep_write_tops(out, res->tops, res->n_tops,
                                   profile_has(req, ENGINE_MC | ENGINE_FORWARD),
                                   profile_text_width(req));
    if (profile_comparing(req) || req->n_combinations < 2)
        return VP_OK;
    vp_profile_top tops[VP_PLACEMENT_COUNT];
    for (size_t i = 0; i < req->n_combinations; i++) {
        const placement_profiles *pp = &all[i];
        tops[i] = vp_profile_get_top(pp->closed    ? pp->closed
                                     : pp->sampled ? pp->sampled
                                                   : pp->forward);
    }
    return vp_text_write_comparison(out, tops, req->n_combinations);
}

/* Starts the document: the model's heading, CSV's header, JSON's opening. */
static vp_status begin_output(const profile_request *req, FILE *out, vp_json_writer *json)
{
    if (out && req->format == FORMAT_TEXT && req->model.name[0])
        write_model_heading(req, out);
    if (out && req->format == FORMAT_CSV)
        return vp_csv_write_header(out);
    if (out && req->format == FORMAT_JSON)
        return vp_json_begin(json, out);
    return VP_OK;
}

/* Ends the document: JSON's closing, the text's ending, a page's table of tops. */
static vp_status end_output(const profile_request *req, FILE *out, vp_json_writer *json,
                            const placement_profiles *all, const run_results *res)
{
    if (req->format == FORMAT_JSON)
        return vp_json_end(json);
    if (req->format == FORMAT_TEXT)
        return write_ending(req, out, all, res);
    if (is_page_format(req->format) && req->n_combinations > 1)
        return write_tops_page(out, res->tops, res->n_tops, tops_shown(req), req->format);
    return VP_OK;
}

/* Computes and writes each combination in turn; what outlives its
 * combination's writing stays in all: the profiles a plot of one stack per
 * placement draws (keep), and those the ending reads (the verdicts, the
 * table of the placements' tops). */
static int run_combinations(const profile_request *req, FILE *out, vp_json_writer *json,
                            progress_line *line, placement_profiles *all, int keep,
                            run_results *res, vp_status *status)
{
    const int ending_reads = out && req->format == FORMAT_TEXT && req->n_combinations > 1 &&
                             (profile_comparing(req) || !req->sweeping);
    int first = 1, rc = EXIT_OK;
    for (size_t i = 0; i < req->n_combinations && *status == VP_OK; i++) {
        placement_profiles *pp = &all[i];
        if (heading_first(req, out) && (rc = write_heading_first(req, out, i)) != EXIT_OK)
            break;
        if (pp->done) /* run ahead (profile_compute_ahead) */
            warn_overflows(pp), pp->done = 0;
        else if ((rc = compute_placement(req, i, 0, line, pp)) != EXIT_OK)
            break;
        if (out)
            *status = write_placement(req, out, json, pp, i, &first);
        res->n_tops += add_tops(req, pp, i, res->tops + res->n_tops);
        if (!keep && !ending_reads)
            free_placement(pp);
    }
    return rc;
}

/* Hands each combination's profiles to res where kept (res owns them
 * then), and frees the rest. */
static void keep_or_free(placement_profiles *all, size_t n, int keep, run_results *res)
{
    for (size_t i = 0; i < n; i++) {
        if (!keep) {
            free_placement(&all[i]);
            continue;
        }
        vp_profile *const each[] = {all[i].closed, all[i].sampled, all[i].forward};
        for (size_t e = 0; e < 3; e++)
            if (each[e])
                res->kept[res->n_kept++] = each[e];
        vp_profile_free(all[i].predicted);
    }
}

int profile_compute_and_write(const profile_request *req, FILE *out, progress_line *line,
                              run_results *res)
{
    int rc = check_gain_count(req);
    if (rc != EXIT_OK)
        return rc;
    placement_profiles *all = calloc(req->n_combinations, sizeof *all);
    res->tops = calloc(3 * req->n_combinations, sizeof *res->tops);
    if (!all || !res->tops) {
        free(all);
        return cli_runtime_error("no memory for %zu combinations", req->n_combinations);
    }
    vp_json_writer json;
    vp_status status = begin_output(req, out, &json);
    const int keep = res->keep && !req->sweeping;
    if (status == VP_OK) {
        profile_compute_ahead(req, line, all);
        rc = run_combinations(req, out, &json, line, all, keep, res, &status);
    }
    if (rc == EXIT_OK && out && status == VP_OK)
        status = end_output(req, out, &json, all, res);
    keep_or_free(all, req->n_combinations, keep && rc == EXIT_OK, res);
    free(all);
    if (rc != EXIT_OK)
        return rc;
    if (status != VP_OK)
        return cli_runtime_error("cannot write the output: %s",
                                 status == VP_EIO ? strerror(errno) : vp_strerror(status));
    return EXIT_OK;
}

int profile_write_grads(const cli_args *args, output_file *grads, const profile_request *req)
{
    vp_grad_norms stored = {0};
    vp_status status = VP_OK;
    if (req->checkpoint && !req->varprof_names) {
        vp_error err;
        if ((status = vp_hf_grad_norms_stored(&req->weights, req->grad_norms, &stored, &err)) !=
            VP_OK) {
            output_abort(grads);
            return cli_library_error("--grads-out", status, &err);
        }
    }
    status = vp_grads_csv_write(grads->stream, stored.rows ? &stored : req->grad_norms);
    vp_grad_norms_free(&stored);
    if (status != VP_OK) {
        output_abort(grads);
        return status == VP_EIO ? cli_runtime_error("--grads-out: cannot write %s: %s",
                                                    args->value[OPT_GRADS_OUT], strerror(errno))
                                : cli_library_error("--grads-out", status, NULL);
    }
    return output_commit(grads);
}
