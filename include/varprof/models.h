/* The models table (data/models.csv): well-known models, where they put
 * their norms, and the source of each fact. */
#ifndef VARPROF_MODELS_H
#define VARPROF_MODELS_H

#include <stddef.h>

#include "varprof/placement.h"
#include "varprof/profile.h"
#include "varprof/status.h"

typedef struct {
    char name[64]; /* a slug: lowercase letters, digits, '.' and '-' */
    int year;
    size_t layers; /* 1 .. VP_MAX_LAYERS */
    vp_placement placement;
    vp_norm norm;      /* VP_NORM_LAYERNORM or VP_NORM_RMSNORM */
    int qk_norm;       /* 0 or 1 */
    char source[1024]; /* a paper or a configuration file */
} vp_model;

typedef struct {
    vp_model *models; /* in file order */
    size_t count;
} vp_model_table;

/* Reads the table: a header `name,year,layers,placement,norm,qk_norm,source`,
 * then one model per row. On success fills *table (free with
 * vp_model_table_free). Fails with VP_EIO (cannot read), VP_EFORMAT naming
 * the line and what is wrong in it (a wrong header or column count, a bad
 * name, year, layer count, placement, norm or qk_norm, an empty source, a
 * name given twice), VP_ENOMEM. */
vp_status vp_models_read(const char *path, vp_model_table *table, vp_error *err);

/* Frees the table's rows; NULL and an empty table are allowed. */
void vp_model_table_free(vp_model_table *table);

/* The model named `name`, or NULL. */
const vp_model *vp_model_find(const vp_model_table *table, const char *name);

#endif
