/* The models table (data/models.csv): well-known models, where they put
 * their norms, and the source of each fact. */
#ifndef VARPROF_MODELS_H
#define VARPROF_MODELS_H

#include <stddef.h>

#include "varprof/placement.h"
#include "varprof/profile.h"
#include "varprof/status.h"

/* A model's own DeepNet alpha or beta, where it used its own rather than
 * DeepNet's defaults: a number, or (c N)^(p) in its layers N. */
typedef struct {
    char text[32];        /* as the table writes it; "" for the placement's default */
    double factor, power; /* the value (factor N)^power, or factor when !per_layer */
    int per_layer;
} vp_model_scale;

typedef struct {
    char name[64]; /* a slug: lowercase letters, digits, '.' and '-' */
    int year;
    size_t layers; /* 1 .. VP_MAX_LAYERS */
    vp_placement placement;
    vp_norm norm;               /* VP_NORM_LAYERNORM or VP_NORM_RMSNORM */
    int qk_norm;                /* 0 or 1 */
    char source[1024];          /* a paper or a configuration file */
    vp_model_scale alpha, beta; /* DeepNorm's, when the model used its own */
    char scale_source[1024];    /* where alpha and beta come from; "" without them */
} vp_model;

typedef struct {
    vp_model *models; /* in file order */
    size_t count;
} vp_model_table;

/* Reads the table: a header `name,year,layers,placement,norm,qk_norm,source`
 * and optionally `,alpha,beta,alpha_beta_source`, then one model per row
 * with the header's cells. alpha and beta are empty (the placement's
 * defaults) or, for a deepnorm model only, a number > 0 or `(cN)^(p)` (c > 0,
 * N the layers, p a number or a fraction a/b), with a source when either is
 * given. On success fills *table (free with vp_model_table_free). Fails with
 * VP_EIO (cannot read), VP_EFORMAT naming the line and what is wrong in it
 * (a wrong header or cell count, a bad name, year, layer count, placement,
 * norm, qk_norm, alpha or beta, an empty source, a name given twice),
 * VP_ENOMEM. */
vp_status vp_models_read(const char *path, vp_model_table *table, vp_error *err);

/* Frees the table's rows; NULL and an empty table are allowed. */
void vp_model_table_free(vp_model_table *table);

/* The value of a model's alpha or beta for a stack of `layers` layers:
 * (factor layers)^power, or factor. NaN when the text is empty: the
 * placement's default applies. */
double vp_model_scale_value(const vp_model_scale *scale, size_t layers);

/* The model named `name`, or NULL. */
const vp_model *vp_model_find(const vp_model_table *table, const char *name);

#endif
