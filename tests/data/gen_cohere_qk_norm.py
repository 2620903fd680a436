#!/usr/bin/env python3
"""Cohere's QK-norm (Command R+) in a tiny checkpoint, and PyTorch's figures (issue 30).

CohereConfig's use_qk_norm true: CohereAttention's q_norm and k_norm, each a
CohereLayerNorm of hidden_size (num_attention_heads, head_dim) and
(num_key_value_heads, head_dim): over each head's head_dim coordinates the
mean subtracted and the (biased) variance divided out in float32, eps
layer_norm_eps, then a weight of the head's own, no bias; on q and k viewed
(B, T, heads, head_dim) right after the projections, before the transpose and
RoPE. Four query heads sharing two kv heads (GQA), so that k_norm's weights
are [2, hd] and each serves two query heads.

tests/data/hf/cohere_qk_norm/ holds config.json (as transformers writes
CohereConfig) and model.safetensors (F32) under CohereForCausalLM's names
('model.' prefix, no lm_head: tied); cohere_qk_tokens.csv the batch (2 x 13
ids, torch.Generator().manual_seed(8)); cohere_qk_expected.csv the figures
(case,quantity,key,shape,float32,float64 as bloom_expected.csv).

The model is written here from transformers' modeling_cohere.py formulas with
PyTorch alone (no transformers library), in float32 and in float64:

  x_0 = embed_tokens[ids]
  per layer: n = input_layernorm(x) (CohereLayerNorm over d: a weight, no bias)
    q = q_norm(q_proj(n) viewed (B, T, H, hd)), k = k_norm(k_proj(n) viewed
    (B, T, H_kv, hd)), v = v_proj(n); then (B, heads, T, hd)
    q, k rotated with interleaved pairs: cos and sin of
    repeat_interleave(freqs, 2), rotate_half(x) = stack(-x[1::2], x[::2])
    k, v repeated to the query heads (repeat_kv: head h reads kv head h / 2)
    context = softmax(q k^T / sqrt(hd), causal) v; attn = o_proj(context)
    mlp = down_proj(silu(gate_proj(n)) * up_proj(n))
    x = x + attn + mlp
  logits = norm(x) embed_tokens^T * logit_scale; loss: mean cross-entropy of
  the logits at t against token t + 1 (varprof's --loss next).

Figures: stream_norm (k = 0 .. 2, the stream after layer k: a parallel layer
is one sub-block), loss, grad_var (mean square of dL/dx_k), weight_grad (a
parallel sub-block's: sqrt((w_attn^2 + w_mlp^2) / 2), w = RMS(dL/dx_k)
RMS(branch input of its last projection)), and every parameter's gradient
Frobenius norm and RMS under the checkpoint's names, and grad_norm, the
global gradient norm (every parameter's squares summed, as clip_grad_norm_).

Weights: N(0, 1/fan_in) matrices, N(0, 1) embedding, every norm weight (the
QK-norms' included) N(1, 0.2^2), so that a weight read for the wrong head
shows. torch.manual_seed(32).

    /usr/bin/python3 tests/data/gen_cohere_qk_norm.py
"""
import math
import os

import torch
import torch.nn.functional as F

import reference_files as ref

HERE = os.path.dirname(os.path.abspath(__file__))

NAME = "cohere_qk_norm"
D, H, KV, LAYERS, V, FFN, B, T = 32, 4, 2, 2, 61, 48, 2, 13
HD = D // H
EPS = 1e-5
THETA = 10000.0
LOGIT_SCALE = 0.125
P = "model."
ORIGIN = "PyTorch %s, made by tests/data/gen_cohere_qk_norm.py" % torch.__version__


def perturbed(*shape):
    return 1.0 + 0.2 * torch.randn(*shape)


def make_weights():
    w = {P + "embed_tokens.weight": torch.randn(V, D)}
    for i in range(LAYERS):
        h = P + "layers.%d." % i
        w[h + "input_layernorm.weight"] = perturbed(D)
        for name, out, inp in (("self_attn.q_proj", H * HD, D), ("self_attn.k_proj", KV * HD, D),
                               ("self_attn.v_proj", KV * HD, D), ("self_attn.o_proj", D, H * HD),
                               ("mlp.gate_proj", FFN, D), ("mlp.up_proj", FFN, D),
                               ("mlp.down_proj", D, FFN)):
            w[h + name + ".weight"] = torch.randn(out, inp) / math.sqrt(inp)
        w[h + "self_attn.q_norm.weight"] = perturbed(H, HD)
        w[h + "self_attn.k_norm.weight"] = perturbed(KV, HD)
    w[P + "norm.weight"] = perturbed(D)
    return w


def config():
    """CohereConfig.to_json_string's keys, as the corpus's cohere case has them."""
    return {"architectures": ["CohereForCausalLM"], "attention_bias": False,
            "attention_dropout": 0.0, "bos_token_id": None, "dtype": "float32",
            "eos_token_id": None, "hidden_act": "silu", "hidden_size": D,
            "initializer_range": 0.02, "intermediate_size": FFN, "layer_norm_eps": EPS,
            "logit_scale": LOGIT_SCALE, "max_position_embeddings": 64, "model_type": "cohere",
            "num_attention_heads": H, "num_hidden_layers": LAYERS, "num_key_value_heads": KV,
            "pad_token_id": None,
            "rope_parameters": {"rope_theta": THETA, "rope_type": "default"},
            "tie_word_embeddings": True, "transformers_version": "5.17.0", "use_cache": True,
            "use_qk_norm": True, "vocab_size": V}


def cohere_layer_norm(x, weight):
    """CohereLayerNorm: over the last dimension, a weight, no bias."""
    mean = x.mean(-1, keepdim=True)
    variance = (x - mean).pow(2).mean(-1, keepdim=True)
    return weight * ((x - mean) * torch.rsqrt(variance + EPS))


def rotate_half(x):
    return torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).flatten(-2)


def rope_tables(dtype):
    inv_freq = 1.0 / (THETA ** (torch.arange(0, HD, 2, dtype=torch.int64).to(dtype) / HD))
    freqs = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]
    emb = torch.repeat_interleave(freqs, 2, dim=-1)
    return emb.cos(), emb.sin()


def repeat_kv(x, n_rep):
    b, kv, t, hd = x.shape
    return x[:, :, None].expand(b, kv, n_rep, t, hd).reshape(b, kv * n_rep, t, hd)


def attention(w, h, x, tables, trace):
    q = F.linear(x, w[h + "self_attn.q_proj.weight"]).view(B, T, -1, HD)
    k = F.linear(x, w[h + "self_attn.k_proj.weight"]).view(B, T, -1, HD)
    v = F.linear(x, w[h + "self_attn.v_proj.weight"]).view(B, T, -1, HD)
    q = cohere_layer_norm(q, w[h + "self_attn.q_norm.weight"])
    k = cohere_layer_norm(k, w[h + "self_attn.k_norm.weight"])
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    cos, sin = tables
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    k, v = repeat_kv(k, H // KV), repeat_kv(v, H // KV)
    scores = q @ k.transpose(-1, -2) / math.sqrt(HD)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    probs = F.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
    context = (probs @ v).transpose(1, 2).reshape(B, T, H * HD)
    trace.branch(context)
    return F.linear(context, w[h + "self_attn.o_proj.weight"])


def mlp(w, h, x, trace):
    a = F.silu(F.linear(x, w[h + "mlp.gate_proj.weight"])) * F.linear(x, w[h + "mlp.up_proj.weight"])
    trace.branch(a)
    return F.linear(a, w[h + "mlp.down_proj.weight"])


def forward(w, tokens, trace, dtype):
    embed = w[P + "embed_tokens.weight"]
    x = trace.stream(embed[tokens])
    tables = rope_tables(dtype)
    for i in range(LAYERS):
        h = P + "layers.%d." % i
        n = cohere_layer_norm(x, w[h + "input_layernorm.weight"])
        attn = attention(w, h, n, tables, trace)
        x = trace.stream(x + attn + mlp(w, h, n, trace))
    return F.linear(cohere_layer_norm(x, w[P + "norm.weight"]), embed) * LOGIT_SCALE


def figures(stored, tokens, dtype):
    return ref.figures(stored, tokens, dtype, lambda w, trace: forward(w, tokens, trace, dtype),
                       ref.parallel_weight_grads)


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(8))
    ref.write_tokens(os.path.join(HERE, "cohere_qk_tokens.csv"), tokens)
    torch.manual_seed(32)
    weights = make_weights()
    stored = ref.write_checkpoint(os.path.join(HERE, "hf", NAME), config(), weights, sort_keys=True)
    lines = ref.case_lines(NAME, figures(stored, tokens, torch.float32),
                           figures(stored, tokens, torch.float64))
    ref.write_expected(os.path.join(HERE, "cohere_qk_expected.csv"), ORIGIN, lines)


if __name__ == "__main__":
    main()
