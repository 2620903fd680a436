#!/usr/bin/env python3
"""Tiny Hugging Face checkpoints for varprof's --weights DIR (issue 15).

Thirteen checkpoint directories in tests/data/hf/, each in its family's exact
naming and layout (config.json, and model.safetensors or shards listed in
model.safetensors.index.json), and PyTorch's figures for them from an
independent implementation of each architecture here, written against the
Hugging Face names (nothing of varprof's, and no transformers library):

  case           family  width  heads     layers  storage
  gpt2_d32       gpt2       32  4              2  F32, names without a prefix
  gpt2_d64       gpt2       64  4              2  F32, 'transformer.' prefix, 2 shards
  llama_d32      llama      32  4              2  F32, lm_head apart, theta 10000
  llama_d64      llama      64  4              2  BF16, tied embeddings, theta 500000
  qwen2_d32      qwen2      32  4              2  F16, q/k/v biases, theta 1000000
  qwen2_d64      qwen2      64  4              2  F32, q/k/v biases, tied, 3 shards
  llama_gqa_d64  llama      64  8 (2 kv)       2  F32, grouped-query, H/H_kv = 4
  qwen2_gqa_d32  qwen2      32  4 (1 kv)       2  BF16, multi-query, head_dim 16 (H hd 64)
  olmo2_d32      olmo2      32  4              2  F32, lm_head apart, theta 500000
  olmo2_gqa_d64  olmo2      64  8 (2 kv)       2  BF16, lm_head apart, theta 10000, 2 shards
  gemma2_d32     gemma2     32  4 (2 kv)       2  F32, head_dim 16 (H hd 64), scalar 24,
                                                  caps 1.5 (scores) and 3.0 (logits)
  gemma2_gqa_d64 gemma2     64  8 (2 kv)       2  BF16, head_dim 8, scalar 8, caps 50.0
                                                  and 30.0 (Gemma-2's own), 2 shards
  llama31_d64    llama      64  4              2  F32, tied, theta 500000, Llama 3.1's
                                                  rope_scaling (llama3: factor 8, low 1,
                                                  high 4, original context 8192): with hd
                                                  16 frequency 4 is blended, 5-7 divided

  GPT-2: x_0 = wte[token] + wpe[t]; per layer x += c_proj(attn(ln_1(x))) with
         q, k, v the columns of Conv1D c_attn (x @ W + b, W [d, 3d]), then
         x += mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(x)))); LayerNorm eps 1e-5;
         ln_f; the head is wte (tied), no bias. n_positions 16, n_inner null
         (4 d).
  Llama: x_0 = embed_tokens[token]; x += o_proj(attn(rope(q_proj h),
         rope(k_proj h), v_proj h)), h = input_layernorm(x); x +=
         down_proj(silu(gate_proj h) * up_proj h), h = post_attention_layernorm(x);
         RMSNorm x rsqrt(mean x^2 + eps) w, eps 1e-6; model.norm; lm_head.
         RoPE rotate-half: (x_i, x_{i+hd/2}) turned by t theta^(-2i/hd), angles
         in float64, cos and sin rounded to float32. intermediate_size 3 d + 8
         (not a multiple of d).
  Qwen2: Llama's, with biases on q_proj, k_proj and v_proj.
  GQA:   k_proj and v_proj of H_kv hd rows; query head h uses key and value
         head h // (H / H_kv) (Hugging Face's repeat_kv); o_proj [d, H hd].
  OLMo-2: norms on the branch outputs, none on their inputs: x_0 =
         embed_tokens[token]; x += post_attention_layernorm(o_proj(attn(
         rope(q_norm(q_proj x)), rope(k_norm(k_proj x)), v_proj x))); x +=
         post_feedforward_layernorm(down_proj(silu(gate_proj x) * up_proj x)).
         q_norm and k_norm are RMSNorms over the full q and k widths (H hd and
         H_kv hd weights), before the split into heads; Llama's RMSNorm, RoPE
         and scale 1/sqrt(hd); model.norm; lm_head.
  Gemma-2: sandwich norms: x_0 = embed_tokens[token] sqrt(d) (the factor
         rounded to the run's precision); x += post_attention_layernorm(
         o_proj(attn(h))), h = input_layernorm(x); x += post_feedforward_layernorm(
         down_proj(gelu_tanh(gate_proj h) * up_proj h)), h =
         pre_feedforward_layernorm(x). Gemma's RMSNorm is x rsqrt(mean x^2 +
         eps) (1 + w), eps 1e-6, with w as stored. Scores q k
         query_pre_attn_scalar^-1/2, then cap tanh(scores / cap) with cap
         attn_logit_softcapping, then the causal mask (sliding_window 4096,
         beyond T). model.norm; the head is embed_tokens (tied, no lm_head
         stored), logits capped by final_logit_softcapping the same way.

Weights: N(0, 1/fan_in) for projections, N(0, 0.1^2) for biases, 1 + 0.1 N
for norm weights (0.1 N for Gemma's, which scale by 1 + w), N(0, 4/d) for
embeddings (N(0, 1) would make a tied head's logits of size sqrt(d) and
saturate the softmax, leaving gradients of 1e-14 that float noise swamps);
torch.manual_seed(21 + case index). The BF16 and F16 cases' figures come
from the weights as stored (read back).
Tokens: 2 sequences of 13 (odd) ids below 50, hf_tokens.csv.

hf_expected.csv: case,quantity,key,shape,float32,float64 with stream_norm
(k = 0..4, the Frobenius norm of the batch's stream after sub-block k), loss
(the copy loss: mean cross-entropy of the logits at t against token t),
grad_var (k = 0..4, the mean square of dL/dx_k) and weight_grad (k = 1..4,
RMS(dL/do_k) RMS(h_k) of each branch's last projection, o_k taken before
any norm on the branch's output), and frobenius of embed.weight's gradient
(a tied checkpoint's one parameter: the lookups' and the head's summed) and
of head.weight's where lm_head is its own. float64 is what varprof is held
to. For
the Gemma-2 cases it also prints how far the figures move with each cap
off: they are there to bend the numbers.

Run it from the top of the project (torch is never a build dependency):

    /usr/bin/python3 tests/data/gen_hf_checkpoints.py

The last digits depend on the BLAS behind Debian's torch: the figures here
came from OpenBLAS (libopenblas0-pthread) as libblas.so.3; the reference
BLAS moves float32's last digit and float64's last one or two.
"""
import json
import math
import os
import shutil
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_reference as ref  # noqa: E402  (its safetensors writer and reader only)
from reference_files import Trace  # noqa: E402

ORIGIN = "PyTorch %s, made by tests/data/gen_hf_checkpoints.py" % torch.__version__
V, B, T, LAYERS, HEADS, N_CTX = 50, 2, 13, 2, 4, 16
CASES = [  # name, family, width, dtype, prefix/tied/shards
    dict(name="gpt2_d32", family="gpt2", d=32, dtype="F32", prefix="", shards=1),
    dict(name="gpt2_d64", family="gpt2", d=64, dtype="F32", prefix="transformer.", shards=2),
    dict(name="llama_d32", family="llama", d=32, dtype="F32", tied=False, theta=10000.0, shards=1),
    dict(name="llama_d64", family="llama", d=64, dtype="BF16", tied=True, theta=500000.0, shards=1),
    dict(name="qwen2_d32", family="qwen2", d=32, dtype="F16", tied=False, theta=1e6, shards=1),
    dict(name="qwen2_d64", family="qwen2", d=64, dtype="F32", tied=True, theta=1e6, shards=3),
    dict(name="llama_gqa_d64", family="llama", d=64, dtype="F32", tied=False, theta=10000.0,
         shards=1, heads=8, kv_heads=2),
    dict(name="qwen2_gqa_d32", family="qwen2", d=32, dtype="BF16", tied=False, theta=1e6,
         shards=1, heads=4, kv_heads=1, head_dim=16),
    dict(name="olmo2_d32", family="olmo2", d=32, dtype="F32", tied=False, theta=500000.0,
         shards=1),
    dict(name="olmo2_gqa_d64", family="olmo2", d=64, dtype="BF16", tied=False, theta=10000.0,
         shards=2, heads=8, kv_heads=2),
    dict(name="gemma2_d32", family="gemma2", d=32, dtype="F32", theta=10000.0, shards=1,
         heads=4, kv_heads=2, head_dim=16, query_pre_attn_scalar=24,
         attn_softcap=1.5, final_softcap=3.0),
    dict(name="gemma2_gqa_d64", family="gemma2", d=64, dtype="BF16", theta=10000.0, shards=2,
         heads=8, kv_heads=2, head_dim=8, query_pre_attn_scalar=8,
         attn_softcap=50.0, final_softcap=30.0),
    dict(name="llama31_d64", family="llama", d=64, dtype="F32", tied=True, theta=500000.0,
         shards=1, rope_scaling=dict(factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                     original_max_position_embeddings=8192, rope_type="llama3")),
]


def heads_of(c):
    """H, H_kv, hd of a case."""
    h = c.get("heads", HEADS)
    return h, c.get("kv_heads", h), c.get("head_dim", c["d"] // h)


def proj(out, inp):
    return torch.randn(out, inp) / math.sqrt(inp)


def embedding(rows, d):
    return 2 * torch.randn(rows, d) / math.sqrt(d)


def norm_weight(d):
    return 1 + 0.1 * torch.randn(d)


def gpt2_weights(c):
    d, p = c["d"], c["prefix"]
    w = {p + "wte.weight": embedding(V, d), p + "wpe.weight": embedding(N_CTX, d)}
    for i in range(LAYERS):
        h = p + "h.%d." % i
        w[h + "ln_1.weight"], w[h + "ln_1.bias"] = norm_weight(d), 0.1 * torch.randn(d)
        w[h + "attn.c_attn.weight"] = proj(3 * d, d).t().contiguous()  # Conv1D: [in, out]
        w[h + "attn.c_attn.bias"] = 0.1 * torch.randn(3 * d)
        w[h + "attn.c_proj.weight"] = proj(d, d).t().contiguous()
        w[h + "attn.c_proj.bias"] = 0.1 * torch.randn(d)
        w[h + "ln_2.weight"], w[h + "ln_2.bias"] = norm_weight(d), 0.1 * torch.randn(d)
        w[h + "mlp.c_fc.weight"] = proj(4 * d, d).t().contiguous()
        w[h + "mlp.c_fc.bias"] = 0.1 * torch.randn(4 * d)
        w[h + "mlp.c_proj.weight"] = proj(d, 4 * d).t().contiguous()
        w[h + "mlp.c_proj.bias"] = 0.1 * torch.randn(d)
    w[p + "ln_f.weight"], w[p + "ln_f.bias"] = norm_weight(d), 0.1 * torch.randn(d)
    return w


def gpt2_config(c):
    return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": c["d"],
            "n_head": HEADS, "n_layer": LAYERS, "n_positions": N_CTX, "n_ctx": N_CTX,
            "vocab_size": V, "n_inner": None, "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-5, "resid_pdrop": 0.1, "embd_pdrop": 0.1,
            "attn_pdrop": 0.1, "scale_attn_weights": True, "tie_word_embeddings": True,
            "torch_dtype": "float32"}


def ffn(d):
    return 3 * d + 8


def attention_weights(w, h, c, biases=False):
    """q, k, v, o projections of layer prefix h (Llama's names), drawn in
    that order, each followed by its bias (Qwen2's q, k, v) where asked."""
    d = c["d"]
    heads, kv, hd = heads_of(c)
    rows = {"q": heads * hd, "k": kv * hd, "v": kv * hd}
    for n in "qkvo":
        w[h + "self_attn.%s_proj.weight" % n] = (proj(rows[n], d) if n != "o"
                                                 else proj(d, heads * hd))
        if biases and n != "o":
            w[h + "self_attn.%s_proj.bias" % n] = 0.1 * torch.randn(rows[n])


def mlp_weights(w, h, c):
    """gate, up, down of layer prefix h, drawn in that order."""
    d, f = c["d"], ffn(c["d"])
    w[h + "mlp.gate_proj.weight"] = proj(f, d)
    w[h + "mlp.up_proj.weight"] = proj(f, d)
    w[h + "mlp.down_proj.weight"] = proj(d, f)


def llama_weights(c):
    d = c["d"]
    w = {"model.embed_tokens.weight": embedding(V, d)}
    for i in range(LAYERS):
        h = "model.layers.%d." % i
        w[h + "input_layernorm.weight"] = norm_weight(d)
        attention_weights(w, h, c, biases=c["family"] == "qwen2")
        w[h + "post_attention_layernorm.weight"] = norm_weight(d)
        mlp_weights(w, h, c)
    w["model.norm.weight"] = norm_weight(d)
    if not c["tied"]:
        w["lm_head.weight"] = proj(V, d)
    return w


def llama_config(c):
    arch = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}[c["family"]]
    heads, kv, hd = heads_of(c)
    cfg = {"architectures": [arch], "model_type": c["family"], "hidden_size": c["d"],
           "num_attention_heads": heads, "num_key_value_heads": kv,
           "num_hidden_layers": LAYERS, "intermediate_size": ffn(c["d"]), "vocab_size": V,
           "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": c["theta"],
           "rope_scaling": c.get("rope_scaling"), "max_position_embeddings": 64,
           "tie_word_embeddings": c["tied"], "torch_dtype": "float32"}
    if "head_dim" in c:
        cfg["head_dim"] = hd
    if c["family"] == "llama":
        cfg["attention_bias"], cfg["mlp_bias"] = False, False
    else:
        cfg["use_sliding_window"], cfg["sliding_window"] = False, 4096
    return cfg


def olmo2_weights(c):
    d = c["d"]
    heads, kv, hd = heads_of(c)
    w = {"model.embed_tokens.weight": embedding(V, d)}
    for i in range(LAYERS):
        h = "model.layers.%d." % i
        attention_weights(w, h, c)
        w[h + "self_attn.q_norm.weight"] = norm_weight(heads * hd)  # the full q width
        w[h + "self_attn.k_norm.weight"] = norm_weight(kv * hd)
        w[h + "post_attention_layernorm.weight"] = norm_weight(d)
        mlp_weights(w, h, c)
        w[h + "post_feedforward_layernorm.weight"] = norm_weight(d)
    w["model.norm.weight"] = norm_weight(d)
    if not c["tied"]:
        w["lm_head.weight"] = proj(V, d)
    return w


def olmo2_config(c):
    heads, kv, hd = heads_of(c)
    cfg = {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": c["d"],
           "intermediate_size": ffn(c["d"]), "num_hidden_layers": LAYERS,
           "num_attention_heads": heads, "num_key_value_heads": kv, "hidden_act": "silu",
           "rms_norm_eps": 1e-6, "rope_theta": c["theta"], "rope_scaling": None,
           "attention_bias": False, "max_position_embeddings": 64, "vocab_size": V,
           "tie_word_embeddings": c["tied"], "torch_dtype": "float32"}
    if "head_dim" in c:
        cfg["head_dim"] = hd
    return cfg


def gemma_norm_weight(d):
    """Gemma's RMSNorm scales by 1 + w: the stored w sits near 0."""
    return 0.1 * torch.randn(d)


def gemma2_weights(c):
    d = c["d"]
    w = {"model.embed_tokens.weight": embedding(V, d)}
    for i in range(LAYERS):
        h = "model.layers.%d." % i
        w[h + "input_layernorm.weight"] = gemma_norm_weight(d)
        attention_weights(w, h, c)
        w[h + "post_attention_layernorm.weight"] = gemma_norm_weight(d)
        w[h + "pre_feedforward_layernorm.weight"] = gemma_norm_weight(d)
        mlp_weights(w, h, c)
        w[h + "post_feedforward_layernorm.weight"] = gemma_norm_weight(d)
    w["model.norm.weight"] = gemma_norm_weight(d)
    return w  # the head is embed_tokens: no lm_head is stored


def gemma2_config(c):
    heads, kv, hd = heads_of(c)
    return {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
            "hidden_size": c["d"], "intermediate_size": ffn(c["d"]),
            "num_hidden_layers": LAYERS, "num_attention_heads": heads,
            "num_key_value_heads": kv, "head_dim": hd,
            "hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
            "rms_norm_eps": 1e-6, "rope_theta": c["theta"], "attention_bias": False,
            "query_pre_attn_scalar": c["query_pre_attn_scalar"], "sliding_window": 4096,
            "attn_logit_softcapping": c["attn_softcap"],
            "final_logit_softcapping": c["final_softcap"], "max_position_embeddings": 64,
            "vocab_size": V, "tie_word_embeddings": True, "torch_dtype": "float32",
            "cache_implementation": "hybrid"}


FAMILIES = {  # family: (weights, config)
    "gpt2": (gpt2_weights, gpt2_config),
    "llama": (llama_weights, llama_config),
    "qwen2": (llama_weights, llama_config),
    "olmo2": (olmo2_weights, olmo2_config),
    "gemma2": (gemma2_weights, gemma2_config),
}


# ---- the forward passes, on the Hugging Face names ----

def split_heads(x, n, hd):
    return x.view(B, T, n, hd).transpose(1, 2)


def softmax_attention(q, k, v, scale=None, softcap=None):
    """q (B, H, T, hd); k, v (B, H_kv, T, hd): query head h reads kv head
    h // (H / H_kv), as Hugging Face's repeat_kv lays them out. The scores
    are q k / sqrt(hd), or q k * scale; with softcap, cap tanh(scores / cap)
    before the causal mask (Gemma-2's eager attention)."""
    heads, hd = q.shape[1], q.shape[-1]
    rep = heads // k.shape[1]
    k = k.repeat_interleave(rep, dim=1)
    v = v.repeat_interleave(rep, dim=1)
    if scale is None:
        scores = q @ k.transpose(-2, -1) / (hd ** 0.5)
    else:
        scores = (q @ k.transpose(-2, -1)) * scale
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, heads * hd)


def gpt2_forward(w, c, tokens, trace):
    d, p = c["d"], c["prefix"]

    def ln(x, name):
        return F.layer_norm(x, (d,), w[name + ".weight"], w[name + ".bias"], 1e-5)

    def conv1d(x, name):
        return x @ w[name + ".weight"] + w[name + ".bias"]

    x = trace.stream(w[p + "wte.weight"][tokens] + w[p + "wpe.weight"][:T][None])
    for i in range(LAYERS):
        h = p + "h.%d." % i
        qkv = conv1d(ln(x, h + "ln_1"), h + "attn.c_attn")
        q, k, v = (split_heads(t, HEADS, d // HEADS) for t in qkv.split(d, dim=-1))
        a = softmax_attention(q, k, v)
        x = trace.stream(x + trace.branch(a, conv1d(a, h + "attn.c_proj")))
        m = F.gelu(conv1d(ln(x, h + "ln_2"), h + "mlp.c_fc"), approximate="tanh")
        x = trace.stream(x + trace.branch(m, conv1d(m, h + "mlp.c_proj")))
    return ln(x, p + "ln_f") @ w[p + "wte.weight"].t()  # tied head, no bias


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def llama3_inv_freq(inv_freq, s):
    """Hugging Face's _compute_llama3_parameters, in float64."""
    low_wavelen = s["original_max_position_embeddings"] / s["low_freq_factor"]
    high_wavelen = s["original_max_position_embeddings"] / s["high_freq_factor"]
    wavelen = 2 * math.pi / inv_freq
    scaled = torch.where(wavelen > low_wavelen, inv_freq / s["factor"], inv_freq)
    smooth = ((s["original_max_position_embeddings"] / wavelen - s["low_freq_factor"])
              / (s["high_freq_factor"] - s["low_freq_factor"]))
    smoothed = (1 - smooth) * scaled / s["factor"] + smooth * scaled
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, scaled)


def rope(x, theta, hd, scaling=None):
    i = torch.arange(hd // 2, dtype=torch.float64)
    inv_freq = theta ** (-2.0 * i / hd)
    if scaling is not None:
        inv_freq = llama3_inv_freq(inv_freq, scaling)
    angle = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None, :]
    cos = torch.cat([angle.cos(), angle.cos()], dim=-1).float().to(x.dtype)
    sin = torch.cat([angle.sin(), angle.sin()], dim=-1).float().to(x.dtype)
    return x * cos + rotate_half(x) * sin


def llama_forward(w, c, tokens, trace):
    heads, kv, hd = heads_of(c)

    def rms(x, name):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w[name + ".weight"]

    def linear(x, name):
        y = x @ w[name + ".weight"].t()
        return y + w[name + ".bias"] if name + ".bias" in w else y

    x = trace.stream(w["model.embed_tokens.weight"][tokens])
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        h = rms(x, p + "input_layernorm")
        q = split_heads(linear(h, p + "self_attn.q_proj"), heads, hd)
        k = split_heads(linear(h, p + "self_attn.k_proj"), kv, hd)
        v = split_heads(linear(h, p + "self_attn.v_proj"), kv, hd)
        scaling = c.get("rope_scaling")
        a = softmax_attention(rope(q, c["theta"], hd, scaling), rope(k, c["theta"], hd, scaling),
                              v)
        x = trace.stream(x + trace.branch(a, linear(a, p + "self_attn.o_proj")))
        h = rms(x, p + "post_attention_layernorm")
        m = F.silu(linear(h, p + "mlp.gate_proj")) * linear(h, p + "mlp.up_proj")
        x = trace.stream(x + trace.branch(m, linear(m, p + "mlp.down_proj")))
    head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return rms(x, "model.norm") @ head.t()


def olmo2_forward(w, c, tokens, trace):
    """Norms on the branch outputs, none on their inputs; q_norm and k_norm
    over the full q and k widths, before the split into heads."""
    heads, kv, hd = heads_of(c)

    def rms(x, name):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w[name + ".weight"]

    def linear(x, name):
        return x @ w[name + ".weight"].t()

    x = trace.stream(w["model.embed_tokens.weight"][tokens])
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        q = split_heads(rms(linear(x, p + "self_attn.q_proj"), p + "self_attn.q_norm"), heads, hd)
        k = split_heads(rms(linear(x, p + "self_attn.k_proj"), p + "self_attn.k_norm"), kv, hd)
        v = split_heads(linear(x, p + "self_attn.v_proj"), kv, hd)
        a = softmax_attention(rope(q, c["theta"], hd), rope(k, c["theta"], hd), v)
        o = trace.branch(a, linear(a, p + "self_attn.o_proj"))
        x = trace.stream(x + rms(o, p + "post_attention_layernorm"))
        m = F.silu(linear(x, p + "mlp.gate_proj")) * linear(x, p + "mlp.up_proj")
        o = trace.branch(m, linear(m, p + "mlp.down_proj"))
        x = trace.stream(x + rms(o, p + "post_feedforward_layernorm"))
    head = w["model.embed_tokens.weight"] if c["tied"] else w["lm_head.weight"]
    return rms(x, "model.norm") @ head.t()


def gemma2_forward(w, c, tokens, trace):
    """Sandwich norms: each branch reads a normed stream and its output is
    normed again before the sum."""
    heads, kv, hd = heads_of(c)
    attn_cap, final_cap = c["attn_softcap"], c["final_softcap"]

    def rms(x, name):  # Gemma's: scale 1 + w, in the run's precision
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        return y * (1.0 + w[name + ".weight"])

    def linear(x, name):
        return x @ w[name + ".weight"].t()

    embed = w["model.embed_tokens.weight"]
    normalizer = torch.tensor(c["d"] ** 0.5, dtype=embed.dtype)
    x = trace.stream(embed[tokens] * normalizer)
    for i in range(LAYERS):
        p = "model.layers.%d." % i
        h = rms(x, p + "input_layernorm")
        q = split_heads(linear(h, p + "self_attn.q_proj"), heads, hd)
        k = split_heads(linear(h, p + "self_attn.k_proj"), kv, hd)
        v = split_heads(linear(h, p + "self_attn.v_proj"), kv, hd)
        a = softmax_attention(rope(q, c["theta"], hd), rope(k, c["theta"], hd), v,
                              scale=c["query_pre_attn_scalar"] ** -0.5, softcap=attn_cap)
        o = trace.branch(a, linear(a, p + "self_attn.o_proj"))
        x = trace.stream(x + rms(o, p + "post_attention_layernorm"))
        h = rms(x, p + "pre_feedforward_layernorm")
        gate = F.gelu(linear(h, p + "mlp.gate_proj"), approximate="tanh")
        m = gate * linear(h, p + "mlp.up_proj")
        o = trace.branch(m, linear(m, p + "mlp.down_proj"))
        x = trace.stream(x + rms(o, p + "post_feedforward_layernorm"))
    logits = rms(x, "model.norm") @ embed.t()
    if final_cap is not None:
        logits = torch.tanh(logits / final_cap) * final_cap
    return logits


FORWARDS = {"gpt2": gpt2_forward, "llama": llama_forward, "qwen2": llama_forward,
            "olmo2": olmo2_forward, "gemma2": gemma2_forward}


def rms_of(t):
    return t.detach().double().pow(2).mean().sqrt().item()


def figures(stored, c, tokens, dtype):
    w = {n: t.detach().to(dtype).requires_grad_(True) for n, t in stored.items()}
    trace = Trace()
    logits = FORWARDS[c["family"]](w, c, tokens, trace)
    loss = F.cross_entropy(logits.reshape(-1, V), tokens.reshape(-1))
    loss.backward()
    rows = [("stream_norm", str(k), x.detach().double().norm().item())
            for k, x in enumerate(trace.streams)]
    rows.append(("loss", "", loss.item()))
    rows += [("grad_var", str(k), x.grad.detach().double().pow(2).mean().item())
             for k, x in enumerate(trace.streams)]
    rows += [("weight_grad", str(k), rms_of(o.grad) * rms_of(h))
             for k, (h, o) in enumerate(trace.branches, start=1)]
    # the embedding's gradient under varprof's name: a tied checkpoint's one
    # parameter sums the lookups' and the head's; lm_head's where untied
    embed = c.get("prefix", "") + "wte.weight" if c["family"] == "gpt2" \
        else "model.embed_tokens.weight"
    rows.append(("frobenius", "embed.weight", w[embed].grad.double().norm().item()))
    if "lm_head.weight" in w:
        rows.append(("frobenius", "head.weight", w["lm_head.weight"].grad.double().norm().item()))
    return rows


def softcap_check(stored, c, tokens):
    """How much the two tanh caps bend the figures (float64), each cap off on
    its own and both: the checks mean little if the caps change nothing."""
    def run(**caps):
        return figures(stored, dict(c, **caps), tokens, torch.float64)

    def loss(rows):
        return [v for q, _, v in rows if q == "loss"][0]

    on = run()
    for label, caps in (("the attention cap", dict(attn_softcap=None)),
                        ("the final cap", dict(final_softcap=None)),
                        ("either cap", dict(attn_softcap=None, final_softcap=None))):
        off = run(**caps)
        moved = max(abs(b - a) / abs(a) for (_, _, a), (_, _, b) in zip(on, off))
        print("%-10s loss %.9g with the caps, %.9g without %s (%+.3g relative; "
              "the figures move up to %.3g relative)"
              % (c["name"], loss(on), loss(off), label, (loss(off) - loss(on)) / loss(on), moved))


def write_checkpoint(c, weights, config):
    out = os.path.join(HERE, "hf", c["name"])
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    names = list(weights)
    if c["shards"] == 1:
        ref.write_safetensors(os.path.join(out, "model.safetensors"),
                              [(n, weights[n]) for n in names], c["dtype"])
        return ref.read_safetensors(os.path.join(out, "model.safetensors"))
    n = c["shards"]
    weight_map, stored = {}, {}
    for s in range(n):
        file = "model-%05d-of-%05d.safetensors" % (s + 1, n)
        part = names[s * len(names) // n:(s + 1) * len(names) // n]
        ref.write_safetensors(os.path.join(out, file), [(m, weights[m]) for m in part], c["dtype"])
        stored.update(ref.read_safetensors(os.path.join(out, file)))
        weight_map.update({m: file for m in part})
    size = {"F32": 4, "F16": 2, "BF16": 2}[c["dtype"]]  # bytes as stored
    total = sum(size * t.numel() for t in weights.values())
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
        f.write("\n")
    return stored


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(9))
    ref.write_tokens(os.path.join(HERE, "hf_tokens.csv"), tokens)
    out = []
    for index, c in enumerate(CASES):
        torch.manual_seed(21 + index)
        make_weights, make_config = FAMILIES[c["family"]]
        weights, config = make_weights(c), make_config(c)
        stored = write_checkpoint(c, weights, config)
        f32 = figures(stored, c, tokens, torch.float32)
        f64 = figures(stored, c, tokens, torch.float64)
        worst = 0.0
        for (q, k, a), (_, _, b) in zip(f32, f64):
            out.append("%s,%s,%s,,%.9g,%.17g" % (c["name"], q, k, a, b))
            if abs(b) > 1e-12:
                worst = max(worst, abs(a - b) / abs(b))
        print("%-10s %d rows, float32 against float64 at most %.2g relative, stream norms %s"
              % (c["name"], len(f64), worst,
                 " ".join("%.4g" % v for q, _, v in f64 if q == "stream_norm")))
        if c["family"] == "gemma2":
            softcap_check(stored, c, tokens)
    with open(os.path.join(HERE, "hf_expected.csv"), "w") as f:
        f.write("# %s\n" % ORIGIN)
        f.write("case,quantity,key,shape,float32,float64\n")
        for line in out:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
