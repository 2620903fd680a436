/* A conformance case's checkpoint read as safetensors with its tensors
 * renamed to varprof's in memory, so that a test can run it through the
 * library with options set by hand, apart from the checkpoint reader (the
 * harness of test_embed_projection and test_logit_scale). Each function
 * fails the running cmocka test, saying why, on a file it cannot read. */
#ifndef VARPROF_TESTS_RENAMED_CASE_H
#define VARPROF_TESTS_RENAMED_CASE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "varprof/varprof.h"

/* A family's tensor names after its prefix, and varprof's ("%zu" a layer). */
typedef struct {
    const char *family, *own;
} name_pair;

typedef struct {
    const char *prefix; /* the family's, "model." */
    const name_pair *pairs;
    size_t count;
    size_t layers;
} name_map;

/* varprof's name of the family's `name` into out (1), or the family's name of
   varprof's `name` (own 1); 0 when the map has none. */
int name_map_rename(const name_map *map, const char *name, int own, char *out, size_t size);

/* path's tensors into *file, each renamed to varprof's; a tensor the map does
   not name fails the test. Free with vp_safetensors_free. */
void renamed_case_read(const char *path, const name_map *map, vp_safetensors *file);

/* Each parameter's gradient norm, by varprof's name (a vp_param_grad_fn),
   for up to CASE_GRADIENTS_MOST parameters; case_gradient_find gives a
   name's, or NULL. */
#define CASE_GRADIENTS_MOST 256
typedef struct {
    char name[CASE_GRADIENTS_MOST][96];
    double frobenius[CASE_GRADIENTS_MOST];
    size_t count;
} case_gradients;

void case_gradients_collect(void *ctx, const vp_param_grad *g);
const double *case_gradient_find(const case_gradients *all, const char *name);

/* The JSON document at path (free with cJSON_Delete). */
cJSON *case_read_json(const char *path);

/* n token ids from the CSV at path. */
void case_read_tokens(const char *path, unsigned *ids, size_t n);

/* |got - want| / |want| */
double case_relative(double got, double want);

/* Fails the test, naming what, when got is not within tolerance (relative)
   of transformers' want. */
void case_near(const char *what, double got, double want, double tolerance);

#endif
