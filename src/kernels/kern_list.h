/* The kernels, each written once: name, return type, parameters and
 * contract, grouped by family in the table's order. Each entry,
 * KERN(type, name, (parameters)), makes
 *
 *   kern_table.h    the table's field        type (*name)(parameters);
 *   kern_variants.h each set's prototype     type kern_name_ISA(parameters);
 *   kern_table.c    each set's table entry   .name = kern_name_ISA,
 *
 * so a new kernel is one entry here and its body, defined once per set as
 * KERN_FN(kern_name) (kern_variants.h). Read several times, hence no include
 * guard: the including file defines KERN(type, name, parameters) before and
 * undefines it after, and has included kern_table.h's types before (the
 * struct itself includes it between its braces). */

/* ---- the matmul (matmul_ISA.c) ---- */
/* The floats of a w [m][k] (PyTorch's [out][in]) packed as the
   micro-kernel reads it. */
KERN(size_t, matmul_packed_floats, (size_t k, size_t m))
/* Packed weights: w laid out so, into matmul_packed_floats(k, m) floats,
   once, when the network is made. */
KERN(void, matmul_pack, (float *packed, const float *w, size_t k, size_t m))
/* Floats of workspace one matmul call of n rows needs (e.g. packed x). */
KERN(size_t, matmul_workspace_floats, (size_t n, size_t k, size_t m))
/* out[i][j] = sum_p x[i][p] w[j][p] + bias[j] (bias may be NULL), for
   i < n, j < m; x with row stride ldx >= k, out with ldo >= m. */
KERN(void, matmul,
     (float *out, size_t ldo, const float *x, size_t ldx, const float *packed, const float *bias,
      size_t n, size_t k, size_t m, float *workspace))
/* The columns' block of matmul_columns: the tile's panel of columns. */
KERN(size_t, matmul_column_block, (size_t m))
/* The tile's rows (MR) for a matmul of m columns: a caller that splits
   the rows as well as the columns gives each thread whole tiles. */
KERN(size_t, matmul_row_block, (size_t m))
/* matmul's columns j0 <= j < j1 alone, the same bits as the whole call
   gives them, the others untouched: j0 a multiple of
   matmul_column_block(m) (the tile's panel of columns), j1 <= m. So
   that threads can share a matmul's columns, each reading its part of
   W, when the rows are too few to split. */
KERN(void, matmul_columns,
     (float *out, size_t ldo, const float *x, size_t ldx, const float *packed, const float *bias,
      size_t n, size_t k, size_t m, size_t j0, size_t j1, float *workspace))

/* Floats of workspace one matmul_drawn_columns call needs. */
KERN(size_t, matmul_drawn_workspace_floats, (size_t n, size_t k, size_t m))
/* matmul_columns with W made as it is used, never stored whole: for
   each block of k and of columns, w->fill writes the packed panels
   (matmul_internal.h's layout; the scalar variant's panel is one row of
   W) into the workspace, and the micro-kernels read them there. The
   same bits as packing W whole and calling matmul_columns. workspace:
   matmul_drawn_workspace_floats(n, k, m) floats. */
KERN(void, matmul_drawn_columns,
     (float *out, size_t ldo, const float *x, size_t ldx, const kern_panel_source *w,
      const float *bias, size_t n, size_t k, size_t m, size_t j0, size_t j1, float *workspace))

/* ---- the matmul's backward (matmul_ISA.c, matmul_grad_body.h) ----
   For y = x W^T + b with W [m][k] (out = m, in = k) and n rows:
   dx = dy W, dW += dy^T x, db += the column sums of dy. */
/* The packing matmul_pack makes of w [m][k], made from its transpose:
   w[j][p] = wt[p * ldwt + j], wt [k][m] with row stride ldwt >= m;
   matmul_packed_floats(k, m) floats. dx = dy W is then the matmul of dy
   with W^T, packed from W itself: matmul_pack_transposed(packed, W, k,
   m, k) (in = m, out = k), then matmul(dx, .., dy, .., packed, NULL,
   n, m, k, ..): rows of dx split across threads as the forward's. */
KERN(void, matmul_pack_transposed,
     (float *packed, const float *wt, size_t ldwt, size_t k, size_t m))
/* Whether matmul_wt_columns reads a W^T [k][m] (row stride ldwt) where
   it lies: m a whole number of the tile's column panels and W^T small
   (matmul_internal.h); the scalar set: any. Else pack it. */
KERN(int, matmul_wt_fits, (size_t k, size_t m, size_t ldwt))
/* matmul_columns (its sums, their order, so its bits) with W [m][k]
   given as its transpose wt [k][m] (row stride ldwt >= m) and read
   where it lies, not packed: dx = dy W reads W itself, dW = dy^T x
   reads x. The workspace of matmul_columns.
   accumulate: the sums start from out's values, bias ignored (as
   matmul_accumulate). Needs matmul_wt_fits(k, m, ldwt). */
KERN(void, matmul_wt_columns,
     (float *out, size_t ldo, const float *x, size_t ldx, const float *wt, size_t ldwt,
      const float *bias, size_t n, size_t k, size_t m, size_t j0, size_t j1, int accumulate,
      float *workspace))
/* out[i][j] += sum_p x[i][p] w[j][p]: matmul's contract and order of
   the sums (matmul_internal.h), starting from out's own values instead
   of the bias; the same workspace. For sums of gradients (dh = dq Wq +
   dk Wk + dv Wv). */
KERN(void, matmul_accumulate,
     (float *out, size_t ldo, const float *x, size_t ldx, const float *packed, size_t n, size_t k,
      size_t m, float *workspace))
/* Floats of workspace one matmul_weight_grad call over n rows needs. */
KERN(size_t, matmul_weight_grad_workspace_floats, (size_t n, size_t k, size_t m))
/* dw[j][p] += sum_i dy[i][j] x[i][p] and, if db is not NULL, db[j] +=
   sum_i dy[i][j], for j < m, p < k, i < n; dy [n][m] (row stride ldy),
   x [n][k] (stride ldx), dw [m][k] (stride ldw). dw is the matmul of dy^T
   (transposed into the workspace) with x, packed as a W [k][n]
   (matmul_pack_transposed): each dw[j][p] takes one multiply-add per i,
   i = 0, 1, .., n - 1 in that order, onto its own value; db's column
   sums in double, in i order, added to db[j] once (one rounding). With
   accumulate 0, dw and db are set, not added to: the bits of adding to
   zeros, without reading what they held (a cleared gradient costs a
   pass over memory). A caller splits the work over the rows j of dW
   (pass dy + j0, dw + j0 * ldw, db + j0 and m = the rows' count), never
   over i: then every bit is the same for any split. Calls over
   consecutive blocks of rows of dy and x, the later ones accumulating,
   give what one call would, but for db's rounding. */
KERN(void, matmul_weight_grad,
     (float *dw, size_t ldw, float *db, const float *dy, size_t ldy, const float *x, size_t ldx,
      size_t n, size_t k, size_t m, int accumulate, float *workspace))

/* ---- the forward pass's other kernels (nn_ISA.c) ---- */
/* out[i] = (x[i] - mean) / sqrt(var + eps) * weight + bias, per row of
   d (biased variance, as PyTorch; mean and variance summed in double);
   out may be x. */
KERN(void, layernorm,
     (float *out, const float *x, const float *weight, const float *bias, size_t n, size_t d,
      float eps))
/* out[i] = x[i] / sqrt(mean(x^2) + eps) * weight, per row of d. */
KERN(void, rmsnorm,
     (float *out, const float *x, const float *weight, size_t n, size_t d, float eps))
/* The norms again, and each row's statistics into stats [n][2] as norm_stats
   lays them out (mean, or 0 for RMSNorm, then the reciprocal root):
   the floats the row was normalised with, norm_stats's bits, so that
   the backward need not sum them again. */
/* layernorm, keeping its statistics. */
KERN(void, layernorm_keep,
     (float *out, float *stats, const float *x, const float *weight, const float *bias, size_t n,
      size_t d, float eps))
/* rmsnorm, keeping its statistics. */
KERN(void, rmsnorm_keep,
     (float *out, float *stats, const float *x, const float *weight, size_t n, size_t d, float eps))
/* out = x * (1 + erf(x / sqrt 2)) / 2: PyTorch's default GELU, not the
   tanh one; out may be x. */
KERN(void, gelu, (float *out, const float *x, size_t n))
/* gelu, keeping cdf[i] = (1 + erf(x[i] / sqrt 2)) / 2, Phi(x[i]), for
   gelu_backward: out is gelu's bit for bit; out may be x, cdf may
   not. */
KERN(void, gelu_keep, (float *out, float *cdf, const float *x, size_t n))
/* GPT-2's GELU, PyTorch's gelu(approximate='tanh'): 0.5 x (1 + tanh(u)),
   u = sqrt(2/pi) (x + 0.044715 x^3), evaluated as x / (1 + exp(-2u))
   (nn_internal.h); out may be x. */
KERN(void, gelu_tanh, (float *out, const float *x, size_t n))
/* out = max(x, 0) (0 for -0 and NaN); out may be x. */
KERN(void, relu, (float *out, const float *x, size_t n))
/* The gated MLPs' product, elementwise: out = silu(a) b, silu(a) = a /
   (1 + exp(-a)) (SwiGLU), and out = gelu(a) b with gelu's erf form
   (GeGLU); the activation rounded to float before the product, as
   PyTorch's two ops. out may be a or b. */
/* SwiGLU's out = silu(a) b. */
KERN(void, silu_mul, (float *out, const float *a, const float *b, size_t n))
/* GeGLU's out = gelu(a) b. */
KERN(void, gelu_mul, (float *out, const float *a, const float *b, size_t n))
/* In place over one row of n: exp(x - max) / sum. */
KERN(void, softmax, (float *x, size_t n))
/* Causal self-attention of one sequence of T tokens and H heads of hd:
   head h owns columns h*hd .. h*hd+hd-1 of q, k, v (PyTorch's
   view(B, T, H, hd)); out[t] over head h = softmax_s<=t(cap(q_t . k_s
   scale)) . v_s, scale 1/sqrt(hd) for the usual attention (Gemma-2's
   query_pre_attn_scalar^-1/2), cap(z) = softcap tanh(z / softcap) when
   softcap > 0 (Gemma-2's attn_logit_softcapping, PyTorch's order of
   operations, tanhf), z itself when softcap is 0. slopes: NULL, or
   ALiBi's H per-head slopes: head h's score for key s is then
   q_t . k_s scale + slopes[h] s (two float products, then their sum:
   BLOOM's baddbmm of alibi), before the cap. window: 0, every key
   s <= t; else a sliding window of that many keys, query t seeing keys
   s with t - window < s <= t, itself included (transformers'
   sliding_window_overlay, kv_idx > q_idx - sliding_window, on the causal
   mask): the keys outside get probability exactly 0, as the -inf mask
   gives, the softmax running over the window's keys alone. q, k, v rows
   of stride ld, out of stride ldo; scratch holds T floats. */
KERN(void, attention,
     (float *out, size_t ldo, const float *q, const float *k, const float *v, size_t ld, size_t T,
      size_t H, size_t hd, float scale, float softcap, const float *slopes, size_t window,
      float *scratch))

/* ---- rotary position embedding (rope_ISA.c, rope_body.h) ---- */
/* In place over n rows of H heads of hd coordinates (hd even; head h
   owns columns h*hd .. h*hd+hd-1 of a row of stride ld): Hugging Face
   Llama's rotate-half pairing, coordinate i < hd/2 with i + hd/2. Row
   r's angles come from cos_t, sin_t [n][hd/2] (the caller's table at
   the rows' positions, row r at position p: cos(p theta^(-2i/hd))):
   x_i' = x_i c - x_{i+hd/2} s, x_{i+hd/2}' = x_{i+hd/2} c + x_i s.
   inverse: the transposed rotation (s negated), the backward's. Each
   result two float products and their float sum, none fused: every
   variant gives the scalar one's bits. */
KERN(void, rope,
     (float *x, size_t ld, const float *cos_t, const float *sin_t, size_t n, size_t H, size_t hd,
      int inverse))
/* rope with GPT-J's interleaved pairing: coordinate 2i with 2i + 1, at
   the angles rope gives pair i: x_{2i}' = x_{2i} c - x_{2i+1} s,
   x_{2i+1}' = x_{2i+1} c + x_{2i} s; otherwise as rope, the same bits
   in every variant (one scalar loop). */
KERN(void, rope_interleaved,
     (float *x, size_t ld, const float *cos_t, const float *sin_t, size_t n, size_t H, size_t hd,
      int inverse))

/* ---- the backward pass's other kernels (nn_backward_ISA.c) ----
   Each the exact derivative of its forward kernel above as PyTorch's
   autograd computes it, with the forward's row statistics recomputed
   as the forward computes them (double sums, rounded to float); the
   sums over a row in double. dx may be dy. Each row's result depends
   on that row alone: a caller splits rows across threads, as forward.
   The SIMD variants equal the scalar one within the tolerances their
   tests state (sums in another order, vector exp and erf). */
/* The forward's row statistics of n rows of d, as the backward
   recomputes them: stats[2 i] = mean (as float) and stats[2 i + 1] =
   1/sqrt(var + eps) for layernorm, 0 and 1/sqrt(mean(x^2) + eps) for
   rms. Each row's bits are its own, whatever n: the three kernels
   below take them (stats) in place of summing them again, which a
   norm's dx and its parameters' gradients would each do. */
KERN(void, norm_stats, (float *stats, const float *x, size_t n, size_t d, float eps, int rms))
/* dx = dL/dx of layernorm, given dy = dL/dout, per row of d:
   xhat = (x - mean) rstd, g = dy weight,
   dx = rstd (g - mean(g) - xhat mean(g xhat)); the statistics from
   stats (norm_stats of these rows), or summed when stats is NULL. */
KERN(void, layernorm_backward,
     (float *dx, const float *dy, const float *x, const float *stats, const float *weight, size_t n,
      size_t d, float eps))
/* dx of rmsnorm: xhat = x rrms, g = dy weight,
   dx = rrms (g - xhat mean(g xhat)), per row of d, stats as above. QK-norm's backward
   is this over rows of one head: q, dq [rows][H * hd] read as
   [rows * H][hd], n = rows * H, d = hd, as the forward calls rmsnorm. */
KERN(void, rmsnorm_backward,
     (float *dx, const float *dy, const float *x, const float *stats, const float *weight, size_t n,
      size_t d, float eps))
/* The norm's parameters' gradients, for columns j0 <= j < j1 of rows of
   d (the row statistics from the whole row): dweight[j] += sum_i dy[i][j]
   xhat[i][j] and, if dbias is not NULL, dbias[j] += sum_i dy[i][j],
   i = 0 .. n - 1 in that order, in double, added to dweight[j] and
   dbias[j] once. rms: xhat of rmsnorm (dbias NULL), else of layernorm.
   A caller splits the columns across threads, never the rows: then the
   bits do not depend on the split. The column sums are the scalar
   one's bits wherever xhat is (the products are exact in double).
   stats as above. */
KERN(void, norm_param_grads,
     (float *dweight, float *dbias, const float *dy, const float *x, const float *stats, size_t n,
      size_t d, size_t j0, size_t j1, float eps, int rms))
/* dx = dy (Phi(x) + x phi(x)), the exact-erf GELU's derivative
   (PyTorch's default, not the tanh one), with Phi(x) = cdf as
   gelu_keep kept it in the forward pass: exp alone, not erf again.
   dx may be dy or x. */
KERN(void, gelu_backward, (float *dx, const float *dy, const float *x, const float *cdf, size_t n))
/* dx of gelu_tanh: dy (s + x 2u' s (1 - s)), s = 1 / (1 + exp(-2u)),
   the second term with x clamped to +-1e4 (where it is below 1e-30)
   so that no inf * 0 arises; dx may be dy or x. */
KERN(void, gelu_tanh_backward, (float *dx, const float *dy, const float *x, size_t n))
/* dx of relu: dy where x > 0, else 0 (PyTorch's threshold_backward). */
KERN(void, relu_backward, (float *dx, const float *dy, const float *x, size_t n))
/* The gated products' backward, given dy = dL/dout: db = dy act(a) and
   da = (dy b) act'(a), autograd's order (act' of silu: s (1 + a (1 -
   s)), s the sigmoid; of gelu: Phi(a) + a phi(a)). Elementwise: da and
   db may each be any input, but not each other. */
/* da and db of silu_mul. */
KERN(void, silu_mul_backward,
     (float *da, float *db, const float *dy, const float *a, const float *b, size_t n))
/* da and db of gelu_mul. */
KERN(void, gelu_mul_backward,
     (float *da, float *db, const float *dy, const float *a, const float *b, size_t n))
/* The backward of attention for one sequence (same q, k, v, ld, T, H,
   hd, scale, softcap, slopes, window; ALiBi's bias is a constant, so it
   enters only the recomputed softmax): given dout (stride ldo), writes
   dq, dk, dv (stride ldg) over the T rows and H * hd columns, recomputing
   each softmax as the forward does; a key outside query t's window
   has p 0, so it adds nothing to dq[t], dk[s] or dv[s]. dk[s] and dv[s]
   sum over t >= s in t order (the SIMD variants:
   blocks of KERN_ATTENTION_BACKWARD_BLOCK rows summed apart, then
   added in t order). scratch holds KERN_ATTENTION_BACKWARD_SCRATCH(T,
   hd) floats. dq, dk, dv must not overlap the inputs. */
KERN(void, attention_backward,
     (float *dq, float *dk, float *dv, size_t ldg, const float *dout, size_t ldo, const float *q,
      const float *k, const float *v, size_t ld, size_t T, size_t H, size_t hd, float scale,
      float softcap, const float *slopes, size_t window, float *scratch))
/* The output head's loss: per row of V logits, loss_i = log sum exp -
   logits[targets[i]] (max subtracted; sums in double); returns
   sum_i loss_i in double, and writes dlogits = (softmax - onehot) scale
   (dlogits may be logits). PyTorch's F.cross_entropy (mean) is scale =
   1 / n and the returned sum times 1 / n. targets[i] < V (the caller's
   check). The embedding's backward (rows of dx added into dE[token])
   is not a kernel: the network's code does it. */
KERN(double, cross_entropy,
     (float *dlogits, const float *logits, const uint32_t *targets, size_t n, size_t V,
      double scale))

/* ---- the forward pass's measurements (residual_ISA.c) ---- */
/* The residual update of n floats (rows of the stream side by side) and
   what the forward pass measures of it: the KERN_RESIDUAL_* sums up to
   FF of x, o, h and f as given, then, if add, x = x + o (float, as
   PyTorch adds) and |x|^2 in sums[KERN_RESIDUAL_XX]. h may be x and f
   may be o. Sums in double, in eight lanes added in a fixed order:
   every variant gives the scalar one's bits. */
KERN(void, residual,
     (float *x, const float *o, const float *h, const float *f, size_t n, int add, double *sums))

/* ---- the stream's steps in double (stream_ISA.c) ----
   Each element's IEEE double operations as written, none fused: every
   variant gives the scalar one's bits. */
/* |v|^2 of n floats: four lanes (element i in lane i mod 4) added in
   one fixed order. */
KERN(double, square_sum, (const float *v, size_t n))
/* |v|^2 of n floats for a gradient's norm: 32 lanes (element i in lane
   i mod 32), then the lanes pairwise, 16 apart, 8, .., 1. Another order
   than square_sum's, whose four lanes are one chain of dependent adds:
   this one runs three times as fast. */
KERN(double, square_sum_wide, (const float *v, size_t n))
/* out[i] = (float)(alpha x[i] + o[i]), or (float)(alpha x[i]) when o is
   NULL; out may be x. */
KERN(void, scale_add, (float *out, const float *x, const float *o, size_t n, double alpha))
/* x[i] = (float)((x[i] - mean) inv weight[i] + bias[i]), + 0.0 when bias
   is NULL: a norm applied at statistics the caller summed. */
KERN(void, norm_apply,
     (float *x, const float *weight, const float *bias, size_t d, double mean, double inv))

/* ---- the optimiser (adam_ISA.c) ---- */
/* Adam over n floats, in torch.optim.Adam's order of float operations:
   p *= decay; m = m beta1 + (1 - beta1) g; v = v beta2 + (1 - beta2) g g;
   p += step_size (m / (sqrt(v) / correction2_sqrt + eps)). p, m, v, g
   must not overlap. Nothing fused: every variant gives the scalar
   one's bits. */
KERN(void, adam, (float *p, float *m, float *v, const float *g, size_t n, const kern_adam_step *s))

/* ---- the Gaussian generator (gauss_ISA.c) ---- */
/* vp_gauss_fill's contract (include/varprof/gauss.h); every variant
   gives the scalar one's bits. */
KERN(void, gauss_fill,
     (float *out, size_t n, uint64_t seed, uint32_t token, uint32_t sub_block, uint64_t first))
/* gauss_fill's draws laid out as a packed matmul panel reads them
   (matmul_internal.h) and scaled: panel[p nr + c] = (float)(scale *
   draw(first + c row_stride + p)), the product in double, for c < rows,
   p < kc, zeros in columns rows .. nr - 1; each draw gauss_fill's bits.
   So W's panel is made without a transpose: a lane is a row of W, and
   its Philox block's four draws four consecutive p. first, row_stride
   and kc multiples of 4 and every block (first + (rows - 1) row_stride
   + kc) / 4 below 2^32; a caller goes through gauss_fill otherwise. */
KERN(void, gauss_panel,
     (float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed, uint32_t token,
      uint32_t sub_block, uint64_t first, uint64_t row_stride, double scale))
/* The same layout of uniform draws, PyTorch's nn.Linear init as
   forward/weight_draw.c makes it: draw i is word i mod 4 of Philox4x32-10
   on the counter {stream, word, i / 4 (low, high)}, r; then (float)((2 u
   - 1) bound) with u = (r + 0.5) 2^-32, and times factor (in double,
   rounded to float) unless factor is 1. Its preconditions are
   gauss_panel's. */
KERN(void, uniform_panel,
     (float *panel, size_t nr, size_t rows, size_t kc, uint64_t seed, uint32_t stream,
      uint32_t word, uint64_t first, uint64_t row_stride, double bound, double factor))

/* ---- the full Monte Carlo's loops over a token's d coordinates
   (mc_loops_ISA.c): explicit lanes and no fused multiply-add, so every
   variant gives the scalar one's bits ---- */
/* out: <1, xi>, <x, xi>, |xi|^2 */
KERN(void, mc_noise_sums, (double *out, const double *x, const float *xi, size_t d))
/* x <- alpha x + a xi + b; out: |x|^2, <1, x>; returns |a xi + b|^2 */
KERN(double, mc_add_branch,
     (double *x, double *out, const float *xi, size_t d, double alpha, double a, double b))
/* x <- (alpha x + a xi + b - shift) scale, c <- (alpha c - c_shift) scale;
   out: |x|^2, <1, x>, |c|^2, <1, c>; returns |a xi + b|^2 */
KERN(double, mc_add_and_normalise,
     (double *x, double *c, double *out, const float *xi, size_t d, double alpha, double a,
      double b, double shift, double scale, double c_shift))
