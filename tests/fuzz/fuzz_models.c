/* The models table reader (data/models.csv, $VARPROF_MODELS): the input is
 * the file. */
#include "fuzz_common.h"

#include <math.h>

#include "varprof/models.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_file(data, size);
    vp_model_table table;
    vp_error err;
    if (vp_models_read(path, &table, &err) == VP_OK) {
        for (size_t i = 0; i < table.count; i++) {
            const vp_model *m = &table.models[i];
            FUZZ_CHECK(m->name[0] != '\0' && memchr(m->name, '\0', sizeof m->name));
            FUZZ_CHECK(m->year >= 1900 && m->year <= 2100);
            FUZZ_CHECK(m->layers >= 1 && m->layers <= VP_MAX_LAYERS);
            FUZZ_CHECK((unsigned)m->placement < VP_PLACEMENT_COUNT);
            FUZZ_CHECK(m->norm == VP_NORM_LAYERNORM || m->norm == VP_NORM_RMSNORM);
            FUZZ_CHECK(m->qk_norm == 0 || m->qk_norm == 1);
            FUZZ_CHECK(m->source[0] != '\0' && memchr(m->source, '\0', sizeof m->source));
            FUZZ_CHECK(vp_model_find(&table, m->name) == m); /* names are unique */
            /* a model's own alpha and beta: a deepnorm model's, with a source */
            const int own = m->alpha.text[0] || m->beta.text[0];
            FUZZ_CHECK(!own || m->placement == VP_DEEPNORM);
            FUZZ_CHECK(own == (m->scale_source[0] != '\0'));
            FUZZ_CHECK(!m->alpha.text[0] || m->alpha.factor > 0.0);
            FUZZ_CHECK(!m->beta.text[0] || m->beta.factor > 0.0);
            /* a shape: heads that fit, kv_heads dividing heads, cells only where
             * their positions have them, and a source */
            const vp_model_shape *s = &m->shape;
            if (s->known) {
                FUZZ_CHECK(s->width >= 1 && s->heads >= 1 && s->heads <= s->width);
                FUZZ_CHECK(s->kv_heads >= 1 && s->heads % s->kv_heads == 0);
                FUZZ_CHECK(s->head_dim >= 1);
                FUZZ_CHECK(s->head_dim_given || s->head_dim * s->heads == s->width);
                FUZZ_CHECK(s->ffn_width >= 1 && s->vocab >= 1);
                FUZZ_CHECK((unsigned)s->activation < VP_MLP_COUNT);
                FUZZ_CHECK((unsigned)s->biases < VP_MODEL_BIASES_COUNT);
                FUZZ_CHECK((unsigned)s->architecture < VP_MODEL_ARCHITECTURE_COUNT);
                FUZZ_CHECK((s->positions == VP_MODEL_POSITIONS_LEARNED) == (s->max_positions > 0));
                FUZZ_CHECK((s->positions == VP_MODEL_POSITIONS_ROPE) == !isnan(s->rope_theta));
                FUZZ_CHECK(isnan(s->norm_eps) || (s->norm_eps > 0.0 && s->norm_eps < 1.0));
                FUZZ_CHECK(s->source[0] != '\0' && memchr(s->source, '\0', sizeof s->source));
            } else {
                FUZZ_CHECK(s->width == 0 && s->source[0] == '\0');
            }
        }
        vp_model_table_free(&table);
        FUZZ_CHECK(table.models == NULL && table.count == 0);
    } else {
        FUZZ_CHECK(table.models == NULL && table.count == 0);
        FUZZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL);
    }
    return 0;
}
