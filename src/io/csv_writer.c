#include <csv.h>
#include <string.h>

#include "varprof/csv.h"

const char *const vp_csv_columns[VP_CSV_COLUMN_COUNT] = {
    "engine",          "placement",       "norm",
    "layers",          "sub_block",       "layer",
    "part",            "gain",            "stream_var",
    "stream_size",     "update_ratio",    "embedding_share",
    "stream_var_lo",   "stream_var_hi",   "update_ratio_lo",
    "update_ratio_hi", "embedding_share_lo", "embedding_share_hi",
    "measured_gain",   "update_cosine",   "stream_norm",
    /* after the first 21, at the end as varprof(1), OUTPUT allows: the Monte Carlo's spread */
    "stream_size_p05", "stream_size_p50", "stream_size_p95",
};

/* Text fields go through libcsv's quoting only when they need it, so that
 * the common case stays plain. */
static void text_field(FILE *out, const char *text, int first)
{
    if (!first)
        fputc(',', out);
    if (strpbrk(text, ",\"\r\n"))
        csv_fwrite(out, text, strlen(text));
    else
        fputs(text, out);
}

static void number_field(FILE *out, double value, int present)
{
    fputc(',', out);
    if (present)
        fprintf(out, "%.17g", value);
}

vp_status vp_csv_write_header(FILE *out)
{
    for (int c = 0; c < VP_CSV_COLUMN_COUNT; c++)
        text_field(out, vp_csv_columns[c], c == 0);
    fputc('\n', out);
    return ferror(out) ? VP_EIO : VP_OK;
}

vp_status vp_csv_write_profile(FILE *out, const vp_profile *profile, size_t every)
{
    const vp_placement placement = profile->config.placement;
    const int bounds = (profile->fields & VP_HAS_BOUNDS) != 0;
    const int measured = (profile->fields & VP_HAS_MEASURED) != 0;
    const int norm = (profile->fields & VP_HAS_STREAM_NORM) != 0;
    const int spread = (profile->fields & VP_HAS_PERCENTILES) != 0;
    for (size_t k = 0; k < profile->n_rows; k++) {
        if (!vp_profile_shows_row(profile, k, every))
            continue;
        const vp_row *row = &profile->rows[k];
        const int branch = k > 0;
        text_field(out, vp_engine_name(profile->engine), 1);
        text_field(out, vp_placement_name(placement), 0);
        text_field(out, vp_norm_name(profile->norm), 0);
        fprintf(out, ",%zu,%zu,", profile->config.layers, k);
        if (branch)
            fprintf(out, "%zu", vp_config_layer_of(&profile->config, k));
        text_field(out, vp_part_name(vp_config_part_of(&profile->config, k)), 0);
        number_field(out, row->gain, branch);
        number_field(out, row->stream_var, 1);
        number_field(out, vp_profile_stream_size(profile, k), 1);
        number_field(out, row->update_ratio, branch);
        number_field(out, row->embedding_share, 1);
        number_field(out, row->stream_var_lo, bounds);
        number_field(out, row->stream_var_hi, bounds);
        number_field(out, row->update_ratio_lo, bounds && branch);
        number_field(out, row->update_ratio_hi, bounds && branch);
        number_field(out, row->embedding_share_lo, bounds);
        number_field(out, row->embedding_share_hi, bounds);
        number_field(out, row->measured_gain, measured && branch);
        number_field(out, row->update_cosine, measured && branch);
        number_field(out, row->stream_norm, norm);
        number_field(out, row->stream_size_p05, spread);
        number_field(out, row->stream_size_p50, spread);
        number_field(out, row->stream_size_p95, spread);
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}
