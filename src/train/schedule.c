/* The trainer's options: their defaults, names, ranges, and the learning
 * rate of each step (include/varprof/train.h). */
#include <gsl/gsl_math.h> /* M_PI, which C11 does not define */
#include <math.h>
#include <string.h>

#include "varprof/train.h"

void vp_train_options_init(vp_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->task = VP_TASK_COPY;
    o->lr = 1e-3;
    o->steps = 301;
    o->schedule = VP_SCHEDULE_CONSTANT;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->adam_eps = 1e-8;
}

double vp_train_lr(const vp_train_options *o, size_t step)
{
    double factor = 1.0;
    if (o->warmup > 0 && step + 1 < o->warmup)
        factor = (double)(step + 1) / (double)o->warmup;
    if (o->schedule == VP_SCHEDULE_COSINE)
        factor *= 0.5 * (1.0 + cos(M_PI * (double)step / (double)o->steps));
    return o->lr * factor;
}

static const char *const task_names[VP_TASK_COUNT] = {"copy", "next"};
static const char *const schedule_names[VP_SCHEDULE_COUNT] = {"constant", "cosine"};

const char *vp_task_name(vp_task task)
{
    return (unsigned)task < VP_TASK_COUNT ? task_names[task] : "unknown";
}

const char *vp_schedule_name(vp_schedule schedule)
{
    return (unsigned)schedule < VP_SCHEDULE_COUNT ? schedule_names[schedule] : "unknown";
}

vp_status vp_task_parse(const char *name, vp_task *out, vp_error *err)
{
    for (unsigned i = 0; i < VP_TASK_COUNT; i++)
        if (strcmp(name, task_names[i]) == 0) {
            *out = (vp_task)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL, "task '%s' is not one of: copy, next", name);
}

vp_status vp_schedule_parse(const char *name, vp_schedule *out, vp_error *err)
{
    for (unsigned i = 0; i < VP_SCHEDULE_COUNT; i++)
        if (strcmp(name, schedule_names[i]) == 0) {
            *out = (vp_schedule)i;
            return VP_OK;
        }
    return vp_fail(err, VP_EINVAL, "schedule '%s' is not one of: constant, cosine", name);
}
