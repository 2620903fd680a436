/* The trainer's options: their defaults, names, ranges, and the learning
 * rate of each step (include/varprof/train.h). */
#include <gsl/gsl_math.h> /* M_PI, which C11 does not define */
#include <math.h>
#include <string.h>

#include "core/name_table.h"
#include "varprof/train.h"

void vp_train_options_init(vp_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->task = VP_TASK_COPY;
    o->lr = VP_TRAIN_DEFAULT_LR;
    o->steps = VP_TRAIN_DEFAULT_STEPS;
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
    const char *name = name_table_name(NAME_LIST(task_names), (int)task);
    return name ? name : "unknown";
}

const char *vp_schedule_name(vp_schedule schedule)
{
    const char *name = name_table_name(NAME_LIST(schedule_names), (int)schedule);
    return name ? name : "unknown";
}

vp_status vp_task_parse(const char *name, vp_task *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_LIST(task_names), "task", name, &value, err);
    if (s == VP_OK)
        *out = (vp_task)value;
    return s;
}

vp_status vp_schedule_parse(const char *name, vp_schedule *out, vp_error *err)
{
    int value = 0;
    const vp_status s = name_table_parse(NAME_LIST(schedule_names), "schedule", name, &value, err);
    if (s == VP_OK)
        *out = (vp_schedule)value;
    return s;
}
