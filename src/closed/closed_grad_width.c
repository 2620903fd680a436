/* The backward half at a finite width d, varprof-maths(7), GRADIENTS,
 * Finite width: the Monte Carlo's model taken literally (each branch A h
 * with A of iid N(0, b^2 / d) entries, real norms without eps, the loss's
 * gradient N(0, I_d) at the head's input) and its expectation derived.
 *
 * A norm projects out p directions: the input's own (scale invariance) and,
 * for LayerNorm, the mean's; so p = 1 for RMSNorm, 2 for LayerNorm. */
#include "closed/closed_grad_width.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>

#define WORKSPACE 256

static double norm_directions(vp_norm norm)
{
    return norm == VP_NORM_LAYERNORM ? 2.0 : 1.0;
}

size_t closed_grad_min_width(const vp_placement_traits *t, vp_norm norm)
{
    return t->norm_out ? 16 : (size_t)norm_directions(norm) + 4;
}

static double branch_gain(const vp_config *cfg, const vp_placement_traits *t, double g)
{
    return t->branch_beta ? cfg->beta * (cfg->beta * g) : g;
}

/* ---- Post-LN and DeepNorm: one noncentral chi-square per sub-block ---- */

/* y = alpha x + A x with |x|^2 = d B (B = 1 but in the first sub-block
 * under LayerNorm): after the norm's projection |y|^2 = (alpha sqrt(dB) +
 * b z)^2 + b^2 c, c ~ chi-square(m). With the Laplace transform 1/Q =
 * int exp(-tQ) dt and t = v / (2 b^2 (lambda - v)), lambda = alpha^2 d B /
 * (2 b^2):
 *     d E[1/Q]   = K_0 / (alpha^2 B),
 *     d E[c/Q^2] = m K_1 / (alpha^4 d B^2),
 *     K_j = int_0^lambda v^j (1 - v/lambda)^((m-3)/2) e^-v dv. */
typedef struct {
    double lambda, power;
    int moment;
} laplace_integrand;

static double laplace_at(double v, void *params)
{
    const laplace_integrand *l = params;
    const double base = 1.0 - v / l->lambda;
    const double value = base > 0.0 ? pow(base, l->power) * exp(-v) : 0.0;
    return l->moment ? v * value : value;
}

typedef struct {
    gsl_integration_workspace *inner, *outer;
    int failed; /* an integral that did not converge */
    /* the last K_0, K_1 and what they were for: a stack of one gain
       integrates once, not once per sub-block */
    double last_lambda, last_m, last_k[2];
} integrator;

static double integrate(integrator *in, gsl_integration_workspace *ws, gsl_function *fn, double a,
                        double b)
{
    double value = 0.0, error = 0.0;
    const int status =
        gsl_integration_qag(fn, a, b, 0.0, 1e-11, WORKSPACE, GSL_INTEG_GAUSS21, ws, &value, &error);
    /* roundoff at 1e-11 is an answer good to far better than a test sees */
    if (status != GSL_SUCCESS && status != GSL_EROUND)
        in->failed = 1;
    return value;
}

static double laplace_moment(integrator *in, double lambda, double m, int moment)
{
    laplace_integrand l = {lambda, 0.5 * (m - 3.0), moment};
    gsl_function fn = {laplace_at, &l};
    /* e^-745 is below double's least */
    return integrate(in, in->inner, &fn, 0.0, lambda < 745.0 ? lambda : 745.0);
}

/* K_0 and K_1; both 1 without a branch (lambda infinite) */
static void laplace_k(integrator *in, double lambda, double m, double k[2])
{
    if (isinf(lambda)) {
        k[0] = k[1] = 1.0;
        return;
    }
    if (lambda == in->last_lambda && m == in->last_m) {
        k[0] = in->last_k[0];
        k[1] = in->last_k[1];
        return;
    }
    k[0] = laplace_moment(in, lambda, m, 0);
    k[1] = laplace_moment(in, lambda, m, 1);
    in->last_lambda = lambda;
    in->last_m = m;
    in->last_k[0] = k[0];
    in->last_k[1] = k[1];
}

/* One sub-block's factors at this B: the gradient's mean square below over
 * the part above the norm keeps (F), and d E[1/Q] (reach, which o's
 * gradient has). q: the directions the branch's fresh A'^T delta loses, 1
 * for the whole gradient, p for the part a norm below will keep. */
typedef struct {
    double factor, reach;
} post_ln_step;

static post_ln_step post_ln_factors(integrator *in, double d, double m, double q, double alpha,
                                    double b, double big_b)
{
    const double lambda = b == 0.0 ? INFINITY : alpha * alpha * d * big_b / (2.0 * b * b);
    double k[2];
    laplace_k(in, lambda, m, k);
    const double a2b = alpha * alpha * big_b;
    post_ln_step s;
    s.reach = k[0] / a2b;
    s.factor = (alpha * alpha + b * b * (1.0 - q / d)) * k[0] / a2b - b * b * k[1] / (a2b * d);
    return s;
}

/* The first sub-block under LayerNorm: x_0 keeps B = 1 - cos^2 of itself
 * after the mean is taken out, B ~ Beta((d-1)/2, 1/2); averaged over
 * B = 1 - t^2, which takes the root singularity at B = 1 away. */
typedef struct {
    integrator *in;
    double d, alpha, b, log_beta;
    int want_reach;
} beta_average;

static double beta_average_at(double t, void *params)
{
    const beta_average *a = params;
    const double big_b = 1.0 - t * t;
    if (big_b <= 0.0)
        return 0.0;
    const post_ln_step s = post_ln_factors(a->in, a->d, a->d - 2.0, 1.0, a->alpha, a->b, big_b);
    const double density = 2.0 * exp(0.5 * (a->d - 3.0) * log(big_b) - a->log_beta);
    return density * (a->want_reach ? s.reach : s.factor);
}

static post_ln_step first_sub_block(integrator *in, double d, vp_norm norm, double alpha, double b)
{
    if (norm == VP_NORM_RMSNORM)
        return post_ln_factors(in, d, d - 1.0, 1.0, alpha, b, 1.0);
    beta_average a = {in, d, alpha, b, gsl_sf_lnbeta(0.5 * (d - 1.0), 0.5), 0};
    gsl_function fn = {beta_average_at, &a};
    post_ln_step s;
    s.factor = integrate(in, in->outer, &fn, 0.0, 1.0);
    a.want_reach = 1;
    s.reach = integrate(in, in->outer, &fn, 0.0, 1.0);
    return s;
}

/* Post-LN, DeepNorm. H_k: the mean square of the gradient at x_k in the
 * d - p directions the norm below x_k keeps (all of it but LayerNorm's
 * mean; x_k's own direction it has none of, L being scale-invariant in
 * x_k). H_K = (d - p)/d; H_{k-1} = F_k H_k; the mean's direction gets
 * b^2 H_k E[1/Q] from the fresh A'^T; x_0's gradient has E[d/|x_0|^2] =
 * d/((d-2) v_0). */
static void post_ln_width(integrator *in, vp_profile *profile, size_t top, double d, vp_norm norm)
{
    const vp_config *cfg = &profile->config;
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    const double p = norm_directions(norm);
    const double alpha = t->residual_alpha ? cfg->alpha : 1.0;
    vp_row *rows = profile->rows;
    double h = (d - p) / d;
    rows[top].grad_var = vp_config_has_final_norm(cfg) ? h : 1.0;
    for (size_t k = top; k >= 1; k--) {
        const double b = branch_gain(cfg, t, rows[k].gain);
        if (k == 1) {
            const post_ln_step s = first_sub_block(in, d, norm, alpha, b);
            const double inverse_v0 = d / ((d - 2.0) * rows[0].stream_var);
            rows[0].grad_var = h * inverse_v0 * s.factor;
            rows[1].weight_grad = sqrt(h * d / (d - 2.0) * s.reach);
            break;
        }
        const post_ln_step s = post_ln_factors(in, d, d - p, p, alpha, b, 1.0);
        rows[k].weight_grad = sqrt(h * s.reach);
        const double below = s.factor * h;
        rows[k - 1].grad_var = below + (p == 2.0 ? b * b * h * s.reach / d : 0.0);
        h = below;
    }
}

/* ---- no norm: linear, and scale-invariant only through a final norm ---- */

/* With a final norm, m_k^2 = |dL/dx_k|^2 |x_k|^2 is independent of x_k and
 * E m_{k-1}^2 = F_k E m_k^2 (Post-LN's factor at alpha = 1), E m_K^2 =
 * d (d - 1); |x_k|^2 = |x_0|^2 times independent |y_j|^2 / d, so
 * E[1/|x_k|^2] = prod_j (d E[1/Q_j]) / ((d - 2) v_0). LayerNorm's final
 * norm sees the stream without its mean, B = 1 - cos^2 of it:
 * (d - 2)/(d - 1) E[1/B] = (d - 2)^2 / ((d - 1)(d - 3)) of RMSNorm's. */
static void no_norm_width(integrator *in, vp_profile *profile, size_t top, double d, vp_norm norm)
{
    vp_row *rows = profile->rows;
    const double v0 = rows[0].stream_var;
    /* E[1/|x_k|^2], up the stack, kept in grad_var for the way down */
    double inverse = 1.0 / ((d - 2.0) * v0);
    rows[0].grad_var = inverse;
    for (size_t k = 1; k <= top; k++) {
        inverse *= post_ln_factors(in, d, d - 1.0, 1.0, 1.0, rows[k].gain, 1.0).reach;
        rows[k].grad_var = inverse;
    }
    const double centring =
        norm == VP_NORM_LAYERNORM ? (d - 2.0) * (d - 2.0) / ((d - 1.0) * (d - 3.0)) : 1.0;
    double m2 = (d - 1.0) * centring; /* E m_k^2 / d */
    double stream = v0;
    for (size_t k = 0; k < top; k++)
        stream *= 1.0 + rows[k + 1].gain * rows[k + 1].gain;
    for (size_t k = top;; k--) {
        rows[k].grad_var *= m2;
        if (k == 0)
            break;
        const double g = rows[k].gain;
        stream /= 1.0 + g * g; /* v_{k-1} */
        rows[k].weight_grad = sqrt(rows[k].grad_var * stream);
        m2 *= post_ln_factors(in, d, d - 1.0, 1.0, 1.0, g, 1.0).factor;
    }
}

/* ---- pre-norm, parallel: a Laguerre-Galerkin expansion ---- */

#define LAGUERRE_MAX 960

/* The expansion of 1/u converges as i^-a: slowly at small widths. Against
 * degree 960, over 2000 sub-blocks (pre-norm, gain 1.7, v_0 0.3): 48 is
 * within 2e-11 at d = 32, 240 within 1.3e-7 at d = 16; below, 240 and 960
 * still differ by 7e-3 at d = 5 over 64 sub-blocks, and 2e-4 at d = 8.
 * Each step costs O(degree). */
static size_t laguerre_degree(size_t width)
{
    return width < 16 ? LAGUERRE_MAX : width < 32 ? 240 : 48;
}

/* Without eps, the stream without its mean is a Gaussian walk in m = d -
 * p + 1 dimensions, x_k ~ N(0, s_k^2 I), s_k^2 = v_0 + n sum b_j^2; each
 * branch's A'^T delta reaches it through the input norm's Jacobian, so
 * E[|delta_{k-1}|^2 | rho] = (1 + n b_k^2 (d - p) / rho_{k-1}) E[|delta_k|^2
 * | rho], rho = |x|^2 (x without its mean). psi_k(rho) = E[|delta_k|^2 |
 * rho_k] is kept as sum_i c_i L_i^(a)(rho / (2 s_k^2)), a = m/2 - 1: the
 * walk's step maps L_i to q^i L_i, q = s_{k-1}^2 / s_k^2, exactly (the
 * generating function of L^(a) against the noncentral chi-square's
 * Laplace transform), and 1/u in this basis is (1/a) (1 above the
 * diagonal, prod_{l=j+1}^{i} l / (l + a) below), projected onto the first
 * N + 1 polynomials. G_k = c_0 / d. */
static void times_inverse(double *out, const double *c, size_t n, double a)
{
    double tail = 0.0, lower = 0.0;
    for (size_t i = n + 1; i-- > 0;) {
        tail += c[i];
        out[i] = tail; /* sum_{j >= i} c_j */
    }
    for (size_t i = 0; i <= n; i++) {
        if (i > 0)
            lower = (lower + c[i - 1]) * ((double)i / ((double)i + a));
        out[i] = (out[i] + lower) / a;
    }
}

static void pre_norm_width(vp_profile *profile, size_t top, size_t width, vp_norm norm)
{
    const vp_config *cfg = &profile->config;
    vp_row *rows = profile->rows;
    const double d = (double)width, p = norm_directions(norm);
    const double a = 0.5 * (d - p + 1.0) - 1.0;
    const double n = (double)vp_config_branches(cfg);
    const size_t degree = laguerre_degree(width);
    double c[LAGUERRE_MAX + 1] = {0.0}, inv[LAGUERRE_MAX + 1];
    /* s_K^2 */
    double s2 = rows[0].stream_var;
    for (size_t k = 1; k <= top; k++)
        s2 += n * rows[k].gain * rows[k].gain;
    if (vp_config_has_final_norm(cfg)) {
        /* d (d - p) / rho: 1/u's coefficients Gamma(a) i! / Gamma(i + a + 1) */
        double coefficient = d * (d - p) / (2.0 * s2 * a);
        for (size_t i = 0; i <= degree; i++) {
            if (i > 0)
                coefficient *= (double)i / ((double)i + a);
            c[i] = coefficient;
        }
    } else {
        c[0] = d;
    }
    rows[top].grad_var = c[0] / d;
    for (size_t k = top; k >= 1; k--) {
        const double g = rows[k].gain, below = s2 - n * g * g;
        rows[k].weight_grad = sqrt(rows[k].grad_var); /* |h|^2 / d = 1 */
        const double q = below / s2;
        double qi = 1.0;
        for (size_t i = 0; i <= degree; i++) {
            c[i] *= qi;
            qi *= q;
        }
        times_inverse(inv, c, degree, a);
        const double reach = n * g * g * (d - p) / (2.0 * below);
        for (size_t i = 0; i <= degree; i++)
            c[i] += reach * inv[i];
        rows[k - 1].grad_var = c[0] / d;
        s2 = below;
    }
}

/* ---- sandwich, output norm: first order in 1/d ---- */

/* Both add gamma sqrt(d) w to the stream, w a uniform direction (across
 * the mean under LayerNorm) whatever the stream: rho = |x|^2 (sandwich
 * under LayerNorm: without its mean) has mean d v_k, v_k = v_0 + k gamma^2
 * (less v_0 for the mean taken out) and variance d (2 v_0^2 + 4 gamma^2
 * sum_{j<k} v_j). psi_k(rho) = E[|delta_k|^2 | rho] = d (Ghat_k(rho/d) +
 * phi_k(rho/d) / d): Ghat_k(v) the infinite width's from sub-block k with
 * v there, phi_k its first correction, from the step's exact expectation
 *     psi_{k-1}(rho') = E[psi_k] + gamma^2 d (d-1)/((d-p-1) rho')
 *                       E[|delta_k|^2 - <delta_k, w>^2 - <delta_k, 1>^2/d]
 * expanded in 1/d; chi_k (along x_k) and omega_k (along the mean) are the
 * gradient's parts the infinite width does not see. G_k = Ghat_k + Ghat_k''
 * var_k / 2 + phi_k / d at the mean. */
typedef struct {
    double g, g1, g2; /* Ghat_k and its derivatives in v, at v_k */
    double phi, chi, omega;
} first_order;

static void output_norm_width(vp_profile *profile, size_t top, size_t width, vp_norm norm)
{
    const vp_config *cfg = &profile->config;
    const vp_placement_traits *t = vp_placement_traits_of(cfg->placement);
    vp_row *rows = profile->rows;
    const double d = (double)width, p = norm_directions(norm), v0 = rows[0].stream_var;
    const int layer = norm == VP_NORM_LAYERNORM;
    /* what 1/chi-square(d - p + 1) of the branch's |f| and the fresh A'^T's
       d - 1 (d - 2 through the input norm) give beyond 1: e / d */
    const double e = t->norm_in ? 1.0 : p;
    const int mean_grows = layer && !t->norm_in; /* A'^T reaches the mean's direction */
    const int mean_out = layer && t->norm_in;    /* rho is without the stream's mean */
    /* v_K and var_K */
    double v = v0, var = 2.0 * v0 * v0;
    for (size_t k = 1; k <= top; k++) {
        const double gamma2 = rows[k].gain > 0.0 ? cfg->gamma * cfg->gamma : 0.0;
        var += 4.0 * gamma2 * v;
        v += gamma2;
    }
    first_order f = {1.0, 0.0, 0.0, 0.0, 1.0, layer ? 1.0 : 0.0};
    if (vp_config_has_final_norm(cfg)) {
        f = (first_order){1.0 / v, -1.0 / (v * v), 2.0 / (v * v * v), -p / v, 0.0, 0.0};
        if (layer && !t->norm_in) /* the norm sees |x|^2 less the mean's v_0 */
            f.phi += v0 / (v * v);
    }
    for (size_t k = top;; k--) {
        rows[k].grad_var =
            f.g + 0.5 * f.g2 * var / d + f.phi / d - (mean_out ? f.g1 * v0 / d : 0.0);
        if (k == 0)
            break;
        if (t->norm_in && cfg->gamma > 0.0 && rows[k].gain > 0.0) {
            /* |dL/df|^2 = gamma^2 d |P delta_k|^2 / |f|^2, |f|^2 = b^2
               chi-square(d - p + 1), P taking out w, x_k's and the mean's
               share of w */
            const double c2 = cfg->gamma * cfg->gamma / v, b = branch_gain(cfg, t, rows[k].gain);
            const double kept = rows[k].grad_var - (f.g * (1.0 - c2) + f.chi * c2 + f.omega) / d;
            rows[k].weight_grad = cfg->gamma * sqrt(d * kept / (d - p - 1.0)) / b;
        }
        const double g = rows[k].gain, gamma2 = g > 0.0 ? cfg->gamma * cfg->gamma : 0.0;
        const double below = v - gamma2, r = gamma2 / below, c2 = gamma2 / v;
        var -= 4.0 * gamma2 * below;
        first_order next;
        next.g = (1.0 + r) * f.g;
        next.g1 = (1.0 + r) * f.g1 - r / below * f.g;
        next.g2 = (1.0 + r) * f.g2 - 2.0 * r / below * f.g1 + 2.0 * r / (below * below) * f.g;
        next.phi = (1.0 + r) * (f.phi + 2.0 * gamma2 * below * f.g2) +
                   r * (f.g * (e - 1.0 + c2) - f.chi * c2 - f.omega);
        next.chi = f.chi * below / v + gamma2 * f.g / v;
        next.omega = f.omega + (mean_grows ? r * f.g : 0.0);
        f = next;
        v = below;
    }
    /* weight_grad^2 = E[|dL/df|^2 / d] E[|h|^2 / d]; without an input norm
       E|h|^2 / d = v_{k-1}, and G_{k-1} - G_k is (d - 1) b^2 / d of the first
       exactly (A'^T's d - 1 directions across h) */
    v = v0;
    for (size_t k = 1; k <= top; k++) {
        const double g = rows[k].gain, b = branch_gain(cfg, t, g);
        const double drop = rows[k - 1].grad_var - rows[k].grad_var;
        /* as at infinite width: nothing reaches a map under gamma = 0, and a
           silent branch's is infinite */
        if (cfg->gamma == 0.0)
            rows[k].weight_grad = 0.0;
        else if (b == 0.0)
            rows[k].weight_grad = HUGE_VAL;
        else if (!t->norm_in)
            rows[k].weight_grad = sqrt(d * drop * v / ((d - 1.0) * b * b));
        v += g > 0.0 ? cfg->gamma * cfg->gamma : 0.0;
    }
}

vp_status closed_grad_width(vp_profile *profile, size_t top, size_t width, vp_norm norm,
                            vp_error *err)
{
    const vp_placement_traits *t = vp_placement_traits_of(profile->config.placement);
    const double d = (double)width;
    if (t->norm_out) {
        output_norm_width(profile, top, width, norm);
        return VP_OK;
    }
    if (t->norm_in) {
        pre_norm_width(profile, top, width, norm);
        return VP_OK;
    }
    integrator in = {gsl_integration_workspace_alloc(WORKSPACE),
                     gsl_integration_workspace_alloc(WORKSPACE),
                     0,
                     NAN,
                     NAN,
                     {0.0, 0.0}};
    vp_status status = VP_OK;
    if (!in.inner || !in.outer) {
        status = vp_fail(err, VP_ENOMEM, "no memory for the finite-width gradient's integrals");
    } else {
        gsl_set_error_handler_off(); /* statuses are checked, never aborted on */
        if (t->norm_stream)
            post_ln_width(&in, profile, top, d, norm);
        else
            no_norm_width(&in, profile, top, d, norm);
        if (in.failed)
            status = vp_fail(err, VP_EOVERFLOW,
                             "an integral of the finite-width gradient did not converge at "
                             "width %zu",
                             width);
    }
    gsl_integration_workspace_free(in.inner);
    gsl_integration_workspace_free(in.outer);
    return status;
}
