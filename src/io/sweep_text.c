/* The text table that ends a sweep: the top of each stack, one line per
 * combination and engine. */
#include <stdio.h>

#include "varprof/format.h"
#include "varprof/sweep.h"
#include "varprof/text.h"

/* The 80-column table: four digits of gain, no sub-blocks (the layers tell
 * them), shorter headings, a share without its power of two, and an
 * overflow on a line of its own. */
static void write_tops_in_80(FILE *out, const vp_sweep_top *tops, size_t n, int with_width)
{
    fprintf(out, "%-12s  %6s  %6s", "placement", "gain", "layers");
    if (with_width)
        fprintf(out, "  %6s", "width");
    fprintf(out, "  %-7s  %9s  %8s  %10s\n", "engine", "size", "update", "emb. share");
    for (size_t i = 0; i < n; i++) {
        const vp_sweep_point *p = &tops[i].point;
        const vp_profile_top *t = &tops[i].top;
        char update[32] = "-", share[64], width[24] = "-";
        if (t->sub_block > 0)
            vp_format_percent(update, sizeof update, t->update_ratio);
        vp_format_percent(share, sizeof share, t->embedding_share);
        if (p->width)
            snprintf(width, sizeof width, "%zu", p->width);
        fprintf(out, "%-12s  %6.4g  %6zu", vp_placement_name(p->placement), p->gain, p->layers);
        if (with_width)
            fprintf(out, "  %6s", width);
        fprintf(out, "  %-7s  %9.4g  %8s  %10s\n", vp_engine_name(t->engine), t->stream_size,
                update, share);
        if (t->overflow_at)
            fprintf(out, "  (%s overflows at sub-block %zu)\n", vp_overflow_name(t->overflowed),
                    t->overflow_at);
    }
}

vp_status vp_sweep_write_tops(FILE *out, const vp_sweep_top *tops, size_t n, int with_width,
                              vp_text_width text_width)
{
    fprintf(out, "\nThe top of each stack:\n");
    if (text_width == VP_TEXT_FIT_80) {
        write_tops_in_80(out, tops, n, with_width);
        return ferror(out) ? VP_EIO : VP_OK;
    }
    fprintf(out, "%-12s  %8s  %7s", "placement", "gain", "layers");
    if (with_width)
        fprintf(out, "  %7s", "width");
    fprintf(out, "  %-8s  %10s  %11s  %12s  %18s\n", "engine", "sub-blocks", "stream size",
            "last update", "embedding share");
    for (size_t i = 0; i < n; i++) {
        const vp_sweep_point *p = &tops[i].point;
        const vp_profile_top *t = &tops[i].top;
        char update[32] = "-", share[64], width[24] = "-";
        if (t->sub_block > 0)
            vp_format_percent(update, sizeof update, t->update_ratio);
        vp_format_share(share, sizeof share, t->embedding_share, t->log2_share);
        if (p->width)
            snprintf(width, sizeof width, "%zu", p->width);
        fprintf(out, "%-12s  %8.6g  %7zu", vp_placement_name(p->placement), p->gain, p->layers);
        if (with_width)
            fprintf(out, "  %7s", width);
        fprintf(out, "  %-8s  %10zu  %11.4g  %12s  %18s", vp_engine_name(t->engine), t->sub_blocks,
                t->stream_size, update, share);
        if (t->overflow_at)
            fprintf(out, "  (%s overflows at sub-block %zu)", vp_overflow_name(t->overflowed),
                    t->overflow_at);
        fputc('\n', out);
    }
    return ferror(out) ? VP_EIO : VP_OK;
}
