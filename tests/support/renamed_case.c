/* A conformance case's tensors under varprof's names (renamed_case.h). */
#include "renamed_case.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

int name_map_rename(const name_map *map, const char *name, int own, char *out, size_t size)
{
    const char *prefix = own ? "" : map->prefix;
    if (strncmp(name, prefix, strlen(prefix)) != 0)
        return 0;
    name += strlen(prefix);
    char spelled[128];
    for (size_t i = 0; i < map->count; i++)
        for (size_t layer = 0; layer < map->layers; layer++) {
            const name_pair *p = &map->pairs[i];
            snprintf(spelled, sizeof spelled, own ? p->own : p->family, layer);
            if (strcmp(spelled, name) == 0) {
                const int used = snprintf(out, size, "%s", own ? map->prefix : "");
                snprintf(out + used, size - (size_t)used, own ? p->family : p->own, layer);
                return 1;
            }
        }
    return 0;
}

void renamed_case_read(const char *path, const name_map *map, vp_safetensors *file)
{
    vp_error err;
    if (vp_safetensors_read(path, file, &err) != VP_OK)
        fail_msg("%s", err.message);
    for (size_t t = 0; t < file->count; t++) {
        char own[96];
        if (!name_map_rename(map, file->tensors[t].name, 0, own, sizeof own))
            fail_msg("%s: tensor '%s' has no varprof name here", path, file->tensors[t].name);
        free(file->tensors[t].name);
        file->tensors[t].name = strdup(own);
        assert_non_null(file->tensors[t].name);
    }
}

void case_gradients_collect(void *ctx, const vp_param_grad *g)
{
    case_gradients *all = ctx;
    assert_true(all->count < CASE_GRADIENTS_MOST);
    const size_t n = g->shape[0] * (g->rank == 2 ? g->shape[1] : 1);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)g->gradient[i] * g->gradient[i];
    snprintf(all->name[all->count], sizeof all->name[all->count], "%s", g->name);
    all->frobenius[all->count++] = sqrt(sum);
}

const double *case_gradient_find(const case_gradients *all, const char *name)
{
    for (size_t i = 0; i < all->count; i++)
        if (strcmp(all->name[i], name) == 0)
            return &all->frobenius[i];
    return NULL;
}

cJSON *case_read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot be opened", path);
    static char text[1 << 16];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *doc = cJSON_Parse(text);
    if (!doc)
        fail_msg("%s: not JSON", path);
    return doc;
}

void case_read_tokens(const char *path, unsigned *ids, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot be opened", path);
    for (size_t i = 0; i < n; i++)
        if (fscanf(f, " %u ,", &ids[i]) != 1)
            fail_msg("%s: token %zu is not a number", path, i);
    fclose(f);
}

double case_relative(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

void case_near(const char *what, double got, double want, double tolerance)
{
    if (!(case_relative(got, want) <= tolerance))
        fail_msg("%s: %.17g, transformers %.17g (%.2g relative > %g)", what, got, want,
                 case_relative(got, want), tolerance);
}
