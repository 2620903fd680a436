/* Writing profiles as a readable table with a summary of the top of the stack. */
#ifndef VARPROF_TEXT_H
#define VARPROF_TEXT_H

#include <stdio.h>

#include "varprof/compare.h"
#include "varprof/forward.h"
#include "varprof/mc.h"
#include "varprof/profile.h"

/* How wide a profile's text is: its rows, and its heading's lines. */
typedef enum {
    VP_TEXT_WIDE,   /* every column: the stream variance; for the Monte Carlo the
                       variance's interval and the size's percentiles; for the
                       forward pass the cosine and the stream norm (to 150 columns) */
    VP_TEXT_FIT_80, /* the columns that fit 80: sub-block, layer, part, the gain,
                       stream size, update ratio and embedding share (with their
                       intervals for the Monte Carlo) */
} vp_text_width;

/* Writes a heading naming the engine, placement and configuration, one line
 * per sub-block vp_profile_shows_row selects (every >= 1), a note where the
 * profile overflowed, and the top of the stack: stream size in multiples of
 * the embedding's, last update ratio and embedding share as percentages.
 * VP_EIO on a stream error. */
vp_status vp_text_write_profile(FILE *out, const vp_profile *profile, size_t every);

/* The heading vp_text_write_profile starts with, written before the engine
 * runs, from what it will run: engine VP_ENGINE_CLOSED (mc and forward
 * unused), VP_ENGINE_MC with mc, VP_ENGINE_FORWARD with forward. A long run
 * then says what it computes before it computes it; the bytes are those
 * vp_text_write_profile writes, its lines broken after a comma to fit 80
 * columns with VP_TEXT_FIT_80. VP_EINVAL for an engine without its
 * options, VP_EIO on a stream error. */
vp_status vp_text_write_heading(FILE *out, vp_engine engine, const vp_config *cfg,
                                const vp_mc_options *mc, const vp_forward_options *forward,
                                vp_text_width width);

/* vp_text_write_profile after its heading: the rows in the given width, the
 * overflow note and the top of the stack. vp_text_write_profile writes them
 * VP_TEXT_WIDE. */
vp_status vp_text_write_rows(FILE *out, const vp_profile *profile, size_t every,
                             vp_text_width width);

/* Writes one line per profile comparing their tops, for several placements.
 * VP_EIO on a stream error. */
vp_status vp_text_write_comparison(FILE *out, const vp_profile_top *tops, size_t count);

/* Writes a sampled profile beside the closed form, row by row (every >= 1),
 * with each figure's difference in standard errors. VP_TEXT_WIDE shows the
 * closed form's figures beside the sampled ones (116 columns); VP_TEXT_FIT_80
 * the sampled ones alone, a difference of 1000 standard errors or more
 * whole, under a title of two lines. VP_EIO on a stream error. */
vp_status vp_text_write_side_by_side(FILE *out, const vp_profile *closed, const vp_profile *sampled,
                                     size_t every, vp_text_width width);

/* Writes the one-line verdict of a comparison (vp_compare), and the why of a
 * finite width's share; with VP_TEXT_FIT_80 broken to fit 80 columns, after
 * a comma past column 60 or else at a space, each further line indented two
 * spaces more than its first. VP_EIO on a stream error. */
vp_status vp_text_write_verdict(FILE *out, const vp_profile *closed, const vp_comparison *cmp,
                                vp_text_width width);

/* Writes the forward pass beside the closed form at the configured gain and
 * the closed form at its measured gains (its prediction), row by row (every
 * >= 1), with the measured gain and update-stream cosine (VP_TEXT_WIDE, 128
 * columns); VP_TEXT_FIT_80 keeps the prediction and the measurement alone,
 * its title and network lines broken as vp_text_write_verdict's. VP_EIO on
 * a stream error. */
vp_status vp_text_write_forward_comparison(FILE *out, const vp_profile *closed,
                                           const vp_profile *predicted, const vp_profile *forward,
                                           size_t every, vp_text_width width);

/* The backward half side by side, where both profiles have it
 * (VP_HAS_GRAD; nothing is written otherwise): the sampled profile's
 * gradient variance and weight gradient with their distance from the closed
 * form's in standard errors, and its gradient size; with VP_TEXT_WIDE the
 * closed form's figures too. VP_EIO on a stream error. */
vp_status vp_text_write_grad_side_by_side(FILE *out, const vp_profile *closed,
                                          const vp_profile *sampled, size_t every,
                                          vp_text_width width);

/* The forward pass's backward half against its prediction (the closed form
 * at its measured gains), where both have it: the gradient's size relative
 * to the top, its variance (predicted only for the random loss, whose
 * gradient at the head is the closed form's unit one) and the measured
 * weight gradient. VP_EIO on a stream error. */
vp_status vp_text_write_grad_forward_comparison(FILE *out, const vp_profile *predicted,
                                                const vp_profile *forward, size_t every,
                                                vp_text_width width);

/* One line: where the forward pass parts from its prediction, and by how
 * much; broken as vp_text_write_verdict's with VP_TEXT_FIT_80. */
vp_status vp_text_write_forward_verdict(FILE *out, const vp_profile *predicted,
                                        const vp_profile *forward, vp_text_width width);

#endif
