/* The row-field table: every output column, its name and how to read it. */
#include "core/row_fields.h"

/* The derived fields: figures of the profile or of the sub-block's place in
 * the stack rather than members of vp_row. */

static const char *field_engine(const vp_profile *profile, size_t k)
{
    (void)k;
    return vp_engine_name(profile->engine);
}

static const char *field_placement(const vp_profile *profile, size_t k)
{
    (void)k;
    return vp_placement_name(profile->config.placement);
}

static const char *field_norm(const vp_profile *profile, size_t k)
{
    (void)k;
    return vp_norm_name(profile->norm);
}

static size_t field_layers(const vp_profile *profile, size_t k)
{
    (void)k;
    return profile->config.layers;
}

static size_t field_sub_block(const vp_profile *profile, size_t k)
{
    (void)profile;
    return k;
}

static size_t field_layer(const vp_profile *profile, size_t k)
{
    return vp_config_layer_of(&profile->config, k);
}

static const char *field_part(const vp_profile *profile, size_t k)
{
    return vp_part_name(vp_config_part_of(&profile->config, k));
}

/* The sweep's values on every row, sub-block 0 included, so that a long-format
 * reader can group the rows of one combination: the --gain the stack ran
 * with (none when --gains gave one per sub-block, or loaded weights gave
 * theirs) and the sampled width. */
static double field_gain_setting(const vp_profile *profile, size_t k)
{
    (void)k;
    return profile->config.gain;
}

/* Loaded weights have no gain set: their gains are measured (measured_gain) */
static int has_set_gains(const vp_profile *profile)
{
    return profile->sampling.method != VP_SAMPLING_LOADED;
}

static int has_gain_setting(const vp_profile *profile)
{
    return !profile->gains_from_file && has_set_gains(profile);
}

static size_t field_width(const vp_profile *profile, size_t k)
{
    (void)k;
    return profile->sampling.width;
}

static int has_width(const vp_profile *profile)
{
    return profile->sampling.generator != NULL;
}

/* The forward pass's loss on the batch (--grad), on every row of its profile
   as gain_setting and width are: CSV only; JSON has it once, "loss". */
static double field_loss(const vp_profile *profile, size_t k)
{
    (void)k;
    return profile->loss;
}

static int has_loss(const vp_profile *profile)
{
    return (profile->fields & VP_HAS_GRAD) && profile->sampling.has_loss;
}

static double field_grad_size(const vp_profile *profile, size_t k)
{
    return vp_profile_grad_size(profile, k);
}

static double field_stream_size(const vp_profile *profile, size_t k)
{
    return vp_profile_stream_size(profile, k);
}

#define BOTH (ROW_FIELD_CSV | ROW_FIELD_JSON)
#define MEMBER(m) ROW_FIELD_DOUBLE, .offset = offsetof(vp_row, m)
#define SE_OF(m) .se_offset = offsetof(vp_row, m)

const row_field row_field_table[] = {
    /* the 21 columns varprof(1), OUTPUT, lists, in its order; JSON writes engine, placement, norm
       and layers once per profile, not per row */
    {"engine", ROW_FIELD_TEXT, .text = field_engine, .appears = ROW_FIELD_CSV},
    {"placement", ROW_FIELD_TEXT, .text = field_placement, .appears = ROW_FIELD_CSV},
    {"norm", ROW_FIELD_TEXT, .text = field_norm, .appears = ROW_FIELD_CSV},
    {"layers", ROW_FIELD_SIZE, .size = field_layers, .appears = ROW_FIELD_CSV},
    {"sub_block", ROW_FIELD_SIZE, .size = field_sub_block, .appears = BOTH},
    {"layer", ROW_FIELD_SIZE, .size = field_layer, .branch_only = 1, .appears = BOTH},
    {"part", ROW_FIELD_TEXT, .text = field_part, .appears = BOTH},
    {"gain", MEMBER(gain), .has = has_set_gains, .branch_only = 1, .appears = BOTH},
    {"stream_var", MEMBER(stream_var), .appears = BOTH, .compared_as = "stream variance",
     SE_OF(stream_var_se)},
    {"stream_size", ROW_FIELD_DOUBLE, .number = field_stream_size, .appears = BOTH},
    {"update_ratio", MEMBER(update_ratio), .branch_only = 1, .appears = BOTH,
     .compared_as = "update ratio", SE_OF(update_ratio_se)},
    {"embedding_share", MEMBER(embedding_share), .appears = BOTH, .compared_as = "embedding share",
     SE_OF(embedding_share_se)},
    {"stream_var_lo", MEMBER(stream_var_lo), .needs = VP_HAS_BOUNDS, .appears = BOTH},
    {"stream_var_hi", MEMBER(stream_var_hi), .needs = VP_HAS_BOUNDS, .appears = BOTH},
    {"update_ratio_lo", MEMBER(update_ratio_lo), .needs = VP_HAS_BOUNDS, .branch_only = 1,
     .appears = BOTH},
    {"update_ratio_hi", MEMBER(update_ratio_hi), .needs = VP_HAS_BOUNDS, .branch_only = 1,
     .appears = BOTH},
    {"embedding_share_lo", MEMBER(embedding_share_lo), .needs = VP_HAS_BOUNDS, .appears = BOTH},
    {"embedding_share_hi", MEMBER(embedding_share_hi), .needs = VP_HAS_BOUNDS, .appears = BOTH},
    {"measured_gain", MEMBER(measured_gain), .needs = VP_HAS_MEASURED, .branch_only = 1,
     .appears = BOTH},
    {"update_cosine", MEMBER(update_cosine), .needs = VP_HAS_MEASURED, .branch_only = 1,
     .appears = BOTH},
    {"stream_norm", MEMBER(stream_norm), .needs = VP_HAS_STREAM_NORM, .appears = BOTH},
    /* added since, at the end as varprof(1), OUTPUT, allows: the Monte Carlo's spread */
    {"stream_size_p05", MEMBER(stream_size_p05), .needs = VP_HAS_PERCENTILES, .appears = BOTH},
    {"stream_size_p50", MEMBER(stream_size_p50), .needs = VP_HAS_PERCENTILES, .appears = BOTH},
    {"stream_size_p95", MEMBER(stream_size_p95), .needs = VP_HAS_PERCENTILES, .appears = BOTH},
    /* CSV only, as engine and layers: JSON has them once per profile ("gain", "sampling" "width") */
    {"gain_setting", ROW_FIELD_DOUBLE, .number = field_gain_setting, .has = has_gain_setting,
     .appears = ROW_FIELD_CSV},
    {"width", ROW_FIELD_SIZE, .size = field_width, .has = has_width, .appears = ROW_FIELD_CSV},
    /* the share by its log2, which the closed form keeps where the share
       underflows double (Post-LN at 2000 layers: 0 as a share, -1000 here) */
    {"log2_embedding_share", MEMBER(log2_share), .appears = BOTH},
    /* the backward half (--grad), varprof-maths(7), GRADIENTS */
    {"grad_var", MEMBER(grad_var), .needs = VP_HAS_GRAD, .appears = BOTH,
     .compared_as = "gradient variance", SE_OF(grad_var_se)},
    {"grad_size", ROW_FIELD_DOUBLE, .number = field_grad_size, .needs = VP_HAS_GRAD,
     .appears = BOTH},
    {"weight_grad", MEMBER(weight_grad), .needs = VP_HAS_GRAD, .branch_only = 1, .appears = BOTH,
     .compared_as = "weight gradient", SE_OF(weight_grad_se)},
    {"grad_var_lo", MEMBER(grad_var_lo), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS, .appears = BOTH},
    {"grad_var_hi", MEMBER(grad_var_hi), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS, .appears = BOTH},
    {"grad_size_lo", MEMBER(grad_size_lo), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS, .appears = BOTH},
    {"grad_size_hi", MEMBER(grad_size_hi), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS, .appears = BOTH},
    {"weight_grad_lo", MEMBER(weight_grad_lo), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS,
     .branch_only = 1, .appears = BOTH},
    {"weight_grad_hi", MEMBER(weight_grad_hi), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS,
     .branch_only = 1, .appears = BOTH},
    {"loss", ROW_FIELD_DOUBLE, .number = field_loss, .has = has_loss, .appears = ROW_FIELD_CSV},
    /* JSON only: the standard errors the bounds come from */
    {"stream_var_se", MEMBER(stream_var_se), .needs = VP_HAS_BOUNDS, .appears = ROW_FIELD_JSON},
    {"update_ratio_se", MEMBER(update_ratio_se), .needs = VP_HAS_BOUNDS, .branch_only = 1,
     .appears = ROW_FIELD_JSON},
    {"embedding_share_se", MEMBER(embedding_share_se), .needs = VP_HAS_BOUNDS,
     .appears = ROW_FIELD_JSON},
    {"grad_var_se", MEMBER(grad_var_se), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS,
     .appears = ROW_FIELD_JSON},
    {"weight_grad_se", MEMBER(weight_grad_se), .needs = VP_HAS_GRAD | VP_HAS_BOUNDS,
     .branch_only = 1, .appears = ROW_FIELD_JSON},
};

const size_t row_field_table_size = sizeof row_field_table / sizeof row_field_table[0];

static double member(const vp_profile *profile, size_t k, size_t offset)
{
    const char *row = (const char *)&profile->rows[k];
    return *(const double *)(const void *)(row + offset);
}

int row_field_applies(const row_field *field, size_t k)
{
    return !(field->branch_only && k == 0);
}

int row_field_present(const row_field *field, const vp_profile *profile, size_t k)
{
    return row_field_applies(field, k) && (profile->fields & field->needs) == field->needs &&
           (!field->has || field->has(profile));
}

double row_field_double(const row_field *field, const vp_profile *profile, size_t k)
{
    return field->number ? field->number(profile, k) : member(profile, k, field->offset);
}

size_t row_field_size(const row_field *field, const vp_profile *profile, size_t k)
{
    return field->size(profile, k);
}

const char *row_field_text(const row_field *field, const vp_profile *profile, size_t k)
{
    return field->text(profile, k);
}

double row_field_se(const row_field *field, const vp_profile *profile, size_t k)
{
    return member(profile, k, field->se_offset);
}

const row_field *row_field_compared(size_t n)
{
    for (size_t f = 0; f < row_field_table_size; f++)
        if (row_field_table[f].compared_as && n-- == 0)
            return &row_field_table[f];
    return NULL;
}
