/* The models table's shape columns: their names, and reading one row's
 * shape cells into vp_model_shape. */
#ifndef VARPROF_MODEL_SHAPE_CELLS_H
#define VARPROF_MODEL_SHAPE_CELLS_H

#include <stddef.h>

#include "varprof/models.h"

enum { MODEL_SHAPE_COLUMNS = 16 };

/* The shape columns' header cells, in table order. */
extern const char *const model_shape_header[MODEL_SHAPE_COLUMNS];

/* Reads cells[0 .. MODEL_SHAPE_COLUMNS - 1], the row's shape cells, into
 * m->shape; m->layers and the rest of m are already read. All empty: the
 * shape is unknown (m->shape.known = 0). Fails with VP_EFORMAT naming the
 * line, the column and what it allows. */
vp_status model_shape_parse(size_t line, char *const *cells, vp_model *m, vp_error *err);

#endif
