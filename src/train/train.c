/* The training loop (include/varprof/train.h): one model and a gradient
 * arena laid out like its tensors (forward/grads.h), into which the
 * backward pass makes every gradient; then clipped, and Adam run tensor by
 * tensor over the values, the gradient and the moments, each moment block
 * in the arena's layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/grads.h"
#include "forward/network.h"
#include "forward/workspace.h"
#include "sys/big_block.h"
#include "train/adam.h"
#include "train/tokens.h"
#include "varprof/train.h"

typedef struct {
    fw_model *model;
    fw_grads *grads;
    const fw_grad_slot *slots; /* the arena's, fw_model_tensors' order */
    size_t count;
    float *moments;      /* Adam's m, then v: two blocks of the arena's layout */
    float *m, *v;        /* into moments */
    double *grad_square; /* [count]: |grad|^2 of this step's gradient */
    size_t given;        /* gradients the backward handed out this step */
} trainer;

/* ---- the arena and Adam's state ---- */

static vp_status trainer_make(trainer *tr, fw_model *model, vp_error *err)
{
    memset(tr, 0, sizeof *tr);
    tr->model = model;
    vp_status status = fw_grads_create(model, &tr->grads, err);
    if (status != VP_OK)
        return status;
    tr->slots = fw_grads_slots(tr->grads);
    tr->count = fw_grads_count(tr->grads);
    const size_t floats = fw_grads_floats(tr->grads);
    tr->grad_square = calloc(tr->count ? tr->count : 1, sizeof *tr->grad_square);
    /* huge pages where the kernel gives them: the moments are written whole
       every step, and 4 KiB pages fault in one at a time */
    tr->moments = big_block_alloc((floats ? 2 * floats : 1) * sizeof(float));
    if (!tr->grad_square || !tr->moments)
        return vp_fail(err, VP_ENOMEM, "no memory for Adam's state (%zu floats)", 2 * floats);
    memset(tr->moments, 0, 2 * floats * sizeof(float));
    tr->m = tr->moments;
    tr->v = tr->moments + floats;
    return VP_OK;
}

static void trainer_free(trainer *tr)
{
    fw_grads_free(tr->grads);
    free(tr->moments);
    free(tr->grad_square);
}

/* The backward makes each gradient in its arena slot; the trainer only
   counts them, to know the pass gave every one. */
static void count_grad(void *ctx, const vp_param_grad *g)
{
    (void)g;
    ((trainer *)ctx)->given++;
}

/* ---- one step ---- */

/* The global L2 norm in double: each tensor's |grad|^2 (the kernel's fixed
   lanes, the same sum whatever the threads did and on every set), added in
   the model's order. */
static double global_grad_norm(trainer *tr)
{
    double total = 0.0;
    for (size_t i = 0; i < tr->count; i++) {
        const fw_grad_slot *s = &tr->slots[i];
        tr->grad_square[i] = tr->model->kernels->square_sum_wide(s->grad, s->n);
        total += tr->grad_square[i];
    }
    return sqrt(total);
}

/* torch.nn.utils.clip_grad_norm_: coef = C / (norm + 1e-6), clamped to 1,
   each gradient multiplied in float */
static void clip(trainer *tr, double norm, double max_norm)
{
    const double coef = max_norm / (norm + 1e-6);
    if (coef >= 1.0)
        return;
    const float c = (float)coef;
    for (size_t i = 0; i < tr->count; i++)
        for (size_t j = 0; j < tr->slots[i].n; j++)
            tr->slots[i].grad[j] *= c;
}

static double square_sum(const float *x, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += (double)x[i] * x[i];
    return sum;
}

static double update_square_sum(const float *after, const float *before, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double u = (double)after[i] - before[i];
        sum += u * u;
    }
    return sum;
}

/* Adam on every tensor, one loop over the values, the gradient and the
   moments at the slot's offset; with on_tensor, each one's norms reported. */
static void update(trainer *tr, const vp_train_options *o, size_t step, double lr, float *before)
{
    const adam_step s = {lr, o->beta1, o->beta2, o->adam_eps, o->weight_decay, step + 1};
    for (size_t i = 0; i < tr->count; i++) {
        const fw_grad_slot *p = &tr->slots[i];
        if (o->on_tensor)
            memcpy(before, p->param, p->n * sizeof(float));
        adam_update(tr->model->kernels, p->param, tr->m + p->offset, tr->v + p->offset, p->grad,
                    p->n, &s);
        if (p->linear) /* W packed while Adam's writes are still in cache */
            fw_linear_pack(tr->model, p->linear);
        if (o->on_tensor) {
            const vp_train_tensor t = {step, p->name, sqrt(tr->grad_square[i]),
                                       sqrt(square_sum(before, p->n)),
                                       sqrt(update_square_sum(p->param, before, p->n))};
            o->on_tensor(o->tensor_ctx, &t);
        }
    }
    fw_model_repack_tied(tr->model);
}

/* The values at the end, copied into the result. */
static vp_status keep_weights(const trainer *tr, vp_train_result *res, vp_error *err)
{
    size_t floats = 0;
    for (size_t i = 0; i < tr->count; i++)
        floats += tr->slots[i].n;
    /* a model has an embedding at least: count and floats are not 0 */
    res->weights = calloc(tr->count ? tr->count : 1, sizeof *res->weights);
    res->weight_names = malloc((tr->count ? tr->count : 1) * FW_TENSOR_NAME_MAX);
    res->weight_data = malloc((floats ? floats : 1) * sizeof(float));
    if (!res->weights || !res->weight_names || !res->weight_data)
        return vp_fail(err, VP_ENOMEM, "no memory for the trained weights");
    float *data = res->weight_data;
    for (size_t i = 0; i < tr->count; i++) {
        const fw_grad_slot *p = &tr->slots[i];
        char *name = res->weight_names + i * FW_TENSOR_NAME_MAX;
        snprintf(name, FW_TENSOR_NAME_MAX, "%s", p->name);
        memcpy(data, p->param, p->n * sizeof(float));
        res->weights[i] = (vp_tensor_out){name, p->cols ? 2 : 1, {p->rows, p->cols}, data};
        data += p->n;
    }
    res->n_weights = tr->count;
    return VP_OK;
}

/* ---- checks ---- */

static vp_status check_options(const vp_forward_options *network, const vp_train_options *o,
                               vp_error *err)
{
    if ((unsigned)o->task >= VP_TASK_COUNT)
        return vp_fail(err, VP_EINVAL, "task %d is not one of: copy, next", (int)o->task);
    if ((unsigned)o->schedule >= VP_SCHEDULE_COUNT)
        return vp_fail(err, VP_EINVAL, "schedule %d is not one of: constant, cosine",
                       (int)o->schedule);
    if (!(o->lr > 0.0 && isfinite(o->lr)))
        return vp_fail(err, VP_EINVAL, "learning rate %g: it must be positive and finite", o->lr);
    if (o->steps < 1 || o->steps > VP_TRAIN_MAX_STEPS)
        return vp_fail(err, VP_EINVAL, "steps is %zu; it must be from 1 to %u", o->steps,
                       VP_TRAIN_MAX_STEPS);
    if (o->warmup > o->steps)
        return vp_fail(err, VP_EINVAL,
                       "warm-up of %zu steps is longer than the run of %zu; it must be from 0 "
                       "to %zu",
                       o->warmup, o->steps, o->steps);
    if (!(o->beta1 >= 0.0 && o->beta1 < 1.0) || !(o->beta2 >= 0.0 && o->beta2 < 1.0))
        return vp_fail(err, VP_EINVAL, "Adam's betas %g and %g: each must be in [0, 1)", o->beta1,
                       o->beta2);
    if (!(o->adam_eps > 0.0 && isfinite(o->adam_eps)))
        return vp_fail(err, VP_EINVAL, "Adam's eps %g: it must be positive and finite",
                       o->adam_eps);
    if (!(o->weight_decay >= 0.0 && isfinite(o->weight_decay)))
        return vp_fail(err, VP_EINVAL, "weight decay %g: it must be 0 or more, and finite",
                       o->weight_decay);
    if (!(o->clip_norm >= 0.0 && isfinite(o->clip_norm)))
        return vp_fail(err, VP_EINVAL, "clip norm %g: it must be 0 (none) or positive, and finite",
                       o->clip_norm);
    if (!o->token_stream)
        return VP_OK;
    const size_t per_step = network->batch * network->tokens;
    if (o->token_stream_steps < o->steps)
        return vp_fail(err, VP_EINVAL,
                       "the token stream holds %zu steps of %zu x %zu ids; the run needs %zu",
                       o->token_stream_steps, network->batch, network->tokens, o->steps);
    for (size_t i = 0; i < o->steps * per_step; i++)
        if (o->token_stream[i] >= network->vocab)
            return vp_fail(err, VP_EINVAL,
                           "token id %u at step %zu, row %zu, column %zu is not below the "
                           "vocab size %zu",
                           o->token_stream[i], i / per_step, i % per_step / network->tokens + 1,
                           i % network->tokens + 1, network->vocab);
    return VP_OK;
}

/* The network's options as the trainer runs them: the task's loss, the
   trainer's gradient callback, its own tokens, no progress per pass. */
static void network_of(vp_config *cfg, vp_forward_options *fo, const vp_config *given,
                       const vp_forward_options *network, const vp_train_options *o)
{
    *cfg = *given;
    cfg->grad = 1;
    *fo = *network;
    fo->loss = o->task == VP_TASK_NEXT ? VP_LOSS_NEXT : VP_LOSS_COPY;
    fo->token_ids = NULL;
    fo->progress = NULL;
    fo->on_param_grad = NULL;
    fo->param_grad_dest = NULL;
    fo->param_grad_ctx = NULL;
}

vp_status vp_train_check(const vp_config *cfg, const vp_forward_options *network,
                         const vp_train_options *options, vp_error *err)
{
    const vp_config *given = cfg;
    const vp_train_options *o = options;
    vp_config run_cfg;
    vp_forward_options fo;
    vp_status status = check_options(network, o, err);
    if (status != VP_OK)
        return status;
    network_of(&run_cfg, &fo, given, network, o);
    return vp_forward_check(&run_cfg, &fo, err);
}

/* ---- the run ---- */

/* One forward and backward on the step's ids, the gradients in the arena. */
static vp_status run_step(trainer *tr, const vp_config *cfg, const vp_forward_options *fo,
                          const unsigned *ids, vp_profile *profile, fw_workspace *ws, vp_error *err)
{
    tr->given = 0;
    profile->overflow_at = 0; /* the profile is reused: nothing of the last step */
    profile->overflowed = VP_OVERFLOW_NONE;
    profile->n_rows = profile->sub_blocks + 1;
    return fw_run_network(tr->model, cfg, fo, (const uint32_t *)ids, profile, ws, err);
}

static vp_status run(trainer *tr, const vp_config *cfg, vp_forward_options *fo,
                     const vp_train_options *o, vp_train_result *res, vp_error *err)
{
    const size_t per_step = fo->batch * fo->tokens;
    fw_model *m = tr->model;
    unsigned *ids = malloc(per_step * sizeof *ids);
    uint32_t *next = malloc(fo->vocab * sizeof *next);
    vp_profile *profile = vp_profile_alloc(vp_config_sub_blocks(cfg));
    size_t biggest = 0;
    for (size_t i = 0; i < tr->count; i++)
        biggest = tr->slots[i].n > biggest ? tr->slots[i].n : biggest;
    float *before = o->on_tensor ? malloc((biggest ? biggest : 1) * sizeof *before) : NULL;
    vp_status status = VP_OK;
    if (!ids || !next || !profile || (o->on_tensor && !before))
        status = vp_fail(err, VP_ENOMEM, "no memory for a training step");
    /* every step's buffers and threads, made once */
    fw_workspace *ws = NULL;
    if (status == VP_OK)
        status = fw_workspace_create(m, fo->batch, fo->tokens, fo->threads, &ws, err);
    if (status == VP_OK) {
        fw_workspace_skip_weight_grad(ws); /* no profile rows are read */
        fw_workspace_set_measured(ws, 0);
        fw_workspace_set_grads(ws, tr->grads);
        train_successors(next, fo->vocab, fo->seed);
        fw_set_header(profile, cfg, fo);
    }
    for (size_t step = 0; step < o->steps && status == VP_OK; step++) {
        if (o->token_stream)
            memcpy(ids, o->token_stream + step * per_step, per_step * sizeof *ids);
        else
            train_tokens(ids, fo->batch, fo->tokens, fo->vocab, o->task, next, fo->seed, step);
        status = run_step(tr, cfg, fo, ids, profile, ws, err);
        double norm = status == VP_OK ? global_grad_norm(tr) : NAN;
        if (status == VP_OK && !(isfinite(profile->loss) && isfinite(norm))) {
            /* the run looked for no overflow: the step again, measured,
               says where float overflowed (the same bits up to there) */
            fw_workspace_set_measured(ws, 1);
            status = run_step(tr, cfg, fo, ids, profile, ws, err);
            fw_workspace_set_measured(ws, 0);
            norm = global_grad_norm(tr);
        }
        if (status != VP_OK)
            break;
        double loss = profile->loss;
        if (profile->overflow_at) {
            /* float overflowed: no loss after a forward overflow, no whole
               gradient after a backward one */
            const int backward = profile->overflowed == VP_OVERFLOW_FLOAT_GRAD ||
                                 profile->overflowed == VP_OVERFLOW_GRAD_VAR;
            loss = backward ? loss : NAN;
            norm = backward ? INFINITY : NAN;
            res->overflowed = profile->overflowed;
            res->overflow_at = profile->overflow_at;
        }
        vp_train_step *row = &res->steps[res->steps_run++];
        *row = (vp_train_step){step, vp_train_lr(o, step), loss, norm};
        if (o->on_step)
            o->on_step(o->step_ctx, row);
        if (!isfinite(loss) || !isfinite(norm)) {
            res->diverged = 1;
            res->diverged_at = step;
            break;
        }
        if (tr->given != tr->count) {
            status = vp_fail(err, VP_EINVAL,
                             "the backward pass gave %zu gradients for the model's %zu tensors",
                             tr->given, tr->count);
            break;
        }
        if (o->clip_norm > 0.0)
            clip(tr, norm, o->clip_norm);
        update(tr, o, step, row->lr, before);
    }
    fw_workspace_free(ws);
    free(ids);
    free(next);
    free(before);
    vp_profile_free(profile);
    return status;
}

vp_status vp_train(const vp_config *cfg, const vp_forward_options *network,
                   const vp_train_options *options, vp_train_result **out, vp_error *err)
{
    const vp_config *given = cfg;
    const vp_train_options *o = options;
    *out = NULL;
    vp_status status = vp_train_check(given, network, o, err);
    if (status != VP_OK)
        return status;
    vp_config run_cfg;
    vp_forward_options fo;
    network_of(&run_cfg, &fo, given, network, o);
    trainer tr = {0};
    fw_model *m = fw_model_alloc_trainable(&run_cfg, &fo, kern_current());
    vp_train_result *res = calloc(1, sizeof *res);
    if (res)
        res->steps = calloc(o->steps, sizeof *res->steps);
    if (!m || !res || !res->steps)
        status = vp_fail(err, VP_ENOMEM, "no memory for the network to train");
    if (status == VP_OK)
        status =
            fo.weights ? fw_model_load(m, fo.weights, err) : fw_model_init(m, &run_cfg, &fo, err);
    if (status == VP_OK)
        status = trainer_make(&tr, m, err);
    if (status == VP_OK) {
        fo.on_param_grad = count_grad;
        fo.param_grad_ctx = &tr;
        status = run(&tr, &run_cfg, &fo, o, res, err);
    }
    if (status == VP_OK && o->keep_weights)
        status = keep_weights(&tr, res, err);
    trainer_free(&tr);
    fw_model_free(m);
    if (status != VP_OK) {
        vp_train_result_free(res);
        return status;
    }
    *out = res;
    return VP_OK;
}

void vp_train_result_free(vp_train_result *result)
{
    if (!result)
        return;
    free(result->steps);
    free(result->weights);
    free(result->weight_names);
    free(result->weight_data);
    free(result);
}
