/* The gain init's MLP scales: the activation's second moment under a
 * Gaussian input (its row in core's activation table), then fc2's variance. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <math.h>

#include "forward/network.h"

typedef struct {
    double t_scale; /* s: the pre-activation's standard deviation */
    double (*ratio)(double z);
} act_moment_args;

/* t^2 r(s t)^2 phi(t), r(z) = act(z) / z (vp_activation_traits.ratio):
   E[act(s t)^2] / s^2 integrates it */
static double act_moment_integrand(double t, void *params)
{
    const act_moment_args *a = params;
    const double r = a->ratio(a->t_scale * t);
    return t * t * r * r * exp(-0.5 * t * t) / 2.5066282746310002; /* sqrt(2 pi) */
}

/* E[act(z)^2] / s^2, z ~ N(0, s^2), into *out. */
static vp_status act_moment(vp_mlp mlp, double s2, double input_ms, double *out, vp_error *err)
{
    const vp_activation_traits *act = vp_activation_traits_of(vp_mlp_traits_of(mlp)->activation);
    if (act->exact_moment > 0.0) {
        *out = act->exact_moment;
        return VP_OK;
    }
    act_moment_args args = {sqrt(s2), act->ratio};
    gsl_function f = {act_moment_integrand, &args};
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    if (!w)
        return vp_fail(err, VP_ENOMEM, "no memory for GSL's integration");
    double result = 0.0, abserr = 0.0;
    int status = gsl_integration_qagi(&f, 1e-13, 1e-10, 200, w, &result, &abserr);
    gsl_integration_workspace_free(w);
    if (status != GSL_SUCCESS || !(result > 0.0))
        return vp_fail(err, VP_EINVAL, "%s's second moment at input mean square %g: %s",
                       vp_mlp_name(mlp), input_ms, gsl_strerror(status));
    *out = result;
    return VP_OK;
}

vp_status fw_mlp_scales(vp_mlp mlp, size_t d, size_t hidden, double input_ms, double gain,
                        double fc1_scale, double *fc1_var, double *fc2_var, vp_error *err)
{
    *fc1_var = fc1_scale * fc1_scale / (double)d;
    const double s2 = *fc1_var * (double)d * input_ms; /* pre-activation variance */
    double result = 0.0;
    const vp_status status = act_moment(mlp, s2, input_ms, &result, err);
    if (status != VP_OK)
        return status;
    double moment = s2 * result; /* E[act(z)^2], 0 when fc1 is (beta 0) */
    if (vp_mlp_gated(mlp))
        moment *= s2; /* E[b^2] of the independent up projection */
    *fc2_var = gain == 0.0 ? 0.0 : gain * gain * input_ms / ((double)hidden * moment);
    return VP_OK;
}
