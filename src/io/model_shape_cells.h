/* The models table's shape columns: their names, and reading one row's
 * shape cells into vp_model_shape. */
#ifndef VARPROF_MODEL_SHAPE_CELLS_H
#define VARPROF_MODEL_SHAPE_CELLS_H

#include <stddef.h>

#include "varprof/models.h"

enum { MODEL_SHAPE_COLUMNS = 16, MODEL_FORM_COLUMNS = 6, MODEL_ATTENTION_COLUMNS = 7 };

/* The shape columns' header cells, in table order. */
extern const char *const model_shape_header[MODEL_SHAPE_COLUMNS];

/* Reads cells[0 .. MODEL_SHAPE_COLUMNS - 1], the row's shape cells, into
 * m->shape; m->layers and the rest of m are already read. All empty: the
 * shape is unknown (m->shape.known = 0). Fails with VP_EFORMAT naming the
 * line, the column and what it allows. */
vp_status model_shape_parse(size_t line, char *const *cells, vp_model *m, vp_error *err);

/* VP_EFORMAT naming the line and the first of cells[0 .. n - 1] given on
 * a row without a shape ("line 3, logit_scale: a form needs the row's
 * shape; ..."), what saying what needs it; VP_OK where m has a shape or the
 * cells are empty. */
vp_status model_cells_need_shape(size_t line, char *const *cells, int n, const char *const *header,
                                 const char *what, const vp_model *m, vp_error *err);

/* The forms' header cells, in table order (after shape_source). */
extern const char *const model_form_header[MODEL_FORM_COLUMNS];

/* Sets m->shape's forms to their defaults (the placement's residual form,
 * the whole head turned by rotate-half where rope runs, no embedding norm,
 * logit scale 1, a bias on LayerNorms), then reads cells[0 ..
 * MODEL_FORM_COLUMNS - 1] over them where cells is not NULL; m's shape is
 * already read. Fails with VP_EFORMAT naming the line, the column and what
 * it allows: a form cell on a row without a shape, partial-rope without a
 * fraction, a parallel form for another placement. */
vp_status model_forms_parse(size_t line, char *const *cells, vp_model *m, vp_error *err);

/* Attention's header cells, in table order (after the forms'). */
extern const char *const model_attention_header[MODEL_ATTENTION_COLUMNS];

/* Sets m->shape's attention to none (no window, no second RoPE base, no
 * linear factor, hd's score scale, no soft caps), then reads cells[0 ..
 * MODEL_ATTENTION_COLUMNS - 1] over it where cells is not NULL; m's shape
 * and forms are already read (model_attention_cells.c). Fails with
 * VP_EFORMAT naming the line, the column and what it allows: a cell on a
 * row without a shape, a pattern without a window, a local base without a
 * pattern or rope, a linear factor without rope. */
vp_status model_attention_parse(size_t line, char *const *cells, vp_model *m, vp_error *err);

#endif
