/* The models table's shape columns: their names, and reading one row's
 * shape cells into vp_model_shape. */
#ifndef VARPROF_MODEL_SHAPE_CELLS_H
#define VARPROF_MODEL_SHAPE_CELLS_H

#include <stddef.h>

#include "varprof/models.h"

enum { MODEL_SHAPE_COLUMNS = 16, MODEL_FORM_COLUMNS = 6 };

/* The shape columns' header cells, in table order. */
extern const char *const model_shape_header[MODEL_SHAPE_COLUMNS];

/* Reads cells[0 .. MODEL_SHAPE_COLUMNS - 1], the row's shape cells, into
 * m->shape; m->layers and the rest of m are already read. All empty: the
 * shape is unknown (m->shape.known = 0). Fails with VP_EFORMAT naming the
 * line, the column and what it allows. */
vp_status model_shape_parse(size_t line, char *const *cells, vp_model *m, vp_error *err);

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

#endif
