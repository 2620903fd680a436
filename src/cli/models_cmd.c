/* varprof models, and where the program finds the models table. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "page_tables.h"
#include "wrap_text.h"

/* The table beside the program: ../data in a build tree, ../share/varprof
 * once installed. */
static int find_beside_program(char *path, size_t size)
{
    char exe[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (length <= 0)
        return 0;
    exe[length] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    const char *candidates[] = {"../data/models.csv", "../share/varprof/models.csv"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        snprintf(path, size, "%s/%s", exe, candidates[i]);
        if (access(path, R_OK) == 0)
            return 1;
    }
    return 0;
}

int load_models(vp_model_table *table)
{
    char path[PATH_MAX + 64];
    const char *env = getenv("VARPROF_MODELS");
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else if (!find_beside_program(path, sizeof path))
        return cli_runtime_error("cannot find the models table models.csv beside the program "
                                 "(../data or ../share/varprof); set VARPROF_MODELS to its path");
    vp_error err;
    if (vp_models_read(path, table, &err) != VP_OK)
        return cli_runtime_error("models table: %s", err.message);
    return EXIT_OK;
}

int run_models(const cli_args *args)
{
    output_format format = FORMAT_TEXT;
    int rc = read_output_format(args, &format);
    if (rc != EXIT_OK)
        return rc;
    vp_model_table table;
    if ((rc = load_models(&table)) != EXIT_OK)
        return rc;
    if (format != FORMAT_TEXT) {
        vp_page_table page;
        if ((rc = models_page_table(&table, &page)) == EXIT_OK)
            rc = write_page_table(stdout, &page, format);
        vp_page_table_free(&page);
        vp_model_table_free(&table);
        return rc;
    }
    /* in 80 columns the source, up to 200 characters, goes on lines of its own */
    const int wide = args->given[OPT_WIDE];
    printf("%-18s  %4s  %6s  %-12s  %-9s  %-7s%s\n", "model", "year", "layers", "placement", "norm",
           "qk-norm", wide ? "  source" : "");
    // NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) EXIT_OK: filled
    for (size_t i = 0; i < table.count; i++) {
        const vp_model *m = &table.models[i];
        printf("%-18s  %4d  %6zu  %-12s  %-9s  %-*s", m->name, m->year, m->layers,
               vp_placement_name(m->placement), vp_norm_name(m->norm), wide ? 7 : 0,
               m->qk_norm ? "yes" : "no");
        if (wide) {
            printf("  %s\n", m->source);
        } else {
            printf("\n    source: ");
            write_wrapped(stdout, m->source, 12, 12, TEXT_COLUMNS);
        }
        if (m->alpha.text[0] || m->beta.text[0]) {
            char scales[1400];
            snprintf(scales, sizeof scales, "its own alpha %s, beta %s%s; source: %s",
                     m->alpha.text[0] ? m->alpha.text : "DeepNet's",
                     m->beta.text[0] ? m->beta.text : "DeepNet's",
                     m->alpha.per_layer || m->beta.per_layer ? ", N its layers" : "",
                     m->scale_source);
            fputs("    ", stdout);
            write_wrapped(stdout, scales, 4, 4, wide ? 0 : TEXT_COLUMNS);
        }
    }
    vp_model_table_free(&table);
    return fflush(stdout) == 0 ? EXIT_OK : cli_runtime_error("cannot write to standard output");
}
