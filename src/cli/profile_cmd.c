/* varprof [profile]: compute each placement's profile and write it. */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "output_file.h"
#include "output_paths.h"
#include "profile_output.h"
#include "profile_request.h"
#include "progress_line.h"
#include "weights_options.h"

/* The files the run writes, opened before it runs so that a file in the
   way stops it early. */
typedef struct {
    output_file out, grads;
    int writing, plotting;
} run_files;

/* Opens --output (with --plot only where --output or --format asks for the
 * table) and --grads-out, and reads --gains. */
static int open_files(const cli_args *args, profile_request *req, run_files *f)
{
    f->plotting = args->given[OPT_PLOT];
    f->writing = !f->plotting || args->given[OPT_OUTPUT] || args->given[OPT_FORMAT];
    int rc;
    if (f->writing &&
        (rc = output_open(&f->out, args->value[OPT_OUTPUT], args->given[OPT_FORCE])) != EXIT_OK)
        return rc;
    if (args->given[OPT_GRADS_OUT]) {
        req->grad_norms = calloc(1, sizeof *req->grad_norms);
        if (!req->grad_norms) {
            output_abort(&f->out);
            return cli_runtime_error("no memory for the gradients");
        }
        if ((rc = output_open(&f->grads, args->value[OPT_GRADS_OUT], args->given[OPT_FORCE])) !=
            EXIT_OK) {
            output_abort(&f->out);
            return rc;
        }
    }
    if (args->given[OPT_GAINS]) {
        vp_error err;
        req->gains_path = args->value[OPT_GAINS];
        if (vp_gains_read(args->value[OPT_GAINS], &req->gains, &req->n_gains, &err) != VP_OK) {
            output_abort(&f->out);
            output_abort(&f->grads);
            return cli_runtime_error("--gains: %s", err.message);
        }
    }
    return EXIT_OK;
}

/* --plot: the sweep's tops, or each placement's profiles under the model's name. */
static int plot_results(const cli_args *args, const profile_request *req, const run_results *res)
{
    if (req->sweeping)
        return plot_sweep_tops(args, res->tops, res->n_tops, vp_sweep_x_axis(&req->sweep));
    char title[128] = "";
    if (req->model.name[0])
        snprintf(title, sizeof title, "%s: %s, %zu layers", req->model.name,
                 vp_placement_name(req->model.placement), req->base.layers);
    return plot_profiles(args, (const vp_profile *const *)res->kept, res->n_kept,
                         title[0] ? title : NULL);
}

/* Computes, writes and plots, once the request is read. */
static int profile_and_write(const cli_args *args, profile_request *req)
{
    run_files f = {0};
    int rc = open_files(args, req, &f);
    if (rc != EXIT_OK)
        return rc;
    run_results res = {.keep = f.plotting};
    progress_line line;
    progress_line_init(&line, args);
    rc = profile_compute_and_write(req, f.writing ? f.out.stream : NULL, &line, &res);
    if (rc != EXIT_OK) {
        if (f.writing)
            output_abort(&f.out);
        output_abort(&f.grads);
    } else {
        if (f.writing)
            rc = output_commit(&f.out);
        if (args->given[OPT_GRADS_OUT])
            rc = rc == EXIT_OK ? profile_write_grads(args, &f.grads, req)
                               : (output_abort(&f.grads), rc);
    }
    /* the output is written even when gnuplot then fails or is missing */
    if (rc == EXIT_OK && f.plotting)
        rc = plot_results(args, req, &res);
    for (size_t i = 0; i < res.n_kept; i++)
        vp_profile_free(res.kept[i]);
    free(res.tops);
    return rc;
}

int run_profile(const cli_args *args)
{
    profile_request req = {0};
    int rc = profile_read_request(args, &req);
    if (rc == EXIT_OK)
        rc = check_distinct_outputs(args);
    if (rc == EXIT_OK)
        rc = check_plot_options(args);
    if (rc == EXIT_OK) {
        weights_warn_random_tokens(args, &req.forward);
        rc = profile_and_write(args, &req);
    }
    profile_request_free(&req);
    return rc;
}
