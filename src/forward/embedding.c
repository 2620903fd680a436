/* A token's row of the embedding: looked up or drawn, then scaled. */
#include "forward/embedding.h"

#include <string.h>

void fw_embed_row(const fw_model *m, float *out, uint32_t token)
{
    const size_t e = m->embed_dim;
    if (m->embed) /* else drawn: the token's row made by position */
        memcpy(out, m->embed + (size_t)token * e, e * sizeof *out);
    else
        fw_draw_values(&m->embed_draw, out, e, (uint64_t)token * e);
    if (m->embed_scale != 1.0f) /* Gemma's sqrt(d), one float product */
        for (size_t i = 0; i < e; i++)
            out[i] *= m->embed_scale;
}

vp_status fw_embedding_check(const vp_forward_options *o, vp_error *err)
{
    const vp_status status = vp_embedding_norm_check(o->embedding_norm, err);
    if (status != VP_OK)
        return status;
    const int narrow = o->embed_dim != 0 && o->embed_dim != o->width;
    if (narrow && vp_embedding_norm_traits_of(o->embedding_norm)->norm)
        return vp_fail(err, VP_EINVAL,
                       "embedding norm %s with an embedding of width %zu on a stream of %zu: "
                       "the norm runs on the stream's width; use embedding norm none, or an "
                       "embedding as wide as the stream",
                       vp_embedding_norm_name(o->embedding_norm), o->embed_dim, o->width);
    if (!narrow)
        return VP_OK;
    if (o->embed_dim > o->width)
        return vp_fail(err, VP_EINVAL,
                       "an embedding of width %zu on a stream of %zu: project_in maps a "
                       "narrower embedding to the stream, never a wider one",
                       o->embed_dim, o->width);
    if (!o->weights)
        return vp_fail(err, VP_EINVAL,
                       "an embedding of width %zu on a stream of %zu: project_in and "
                       "project_out are read from a weights file, never drawn",
                       o->embed_dim, o->width);
    return VP_OK;
}
