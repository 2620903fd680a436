#!/usr/bin/env python3
"""Falcon's new decoder (Falcon-40B, 180B) in tiny checkpoints, and PyTorch's figures (issue 30).

FalconConfig's new_decoder_architecture true: query_key_value fused group by
group, each of the num_kv_heads groups holding its H / num_kv_heads query
heads, then its key head, then its value head; both branches added to the
stream side by side; with num_ln_in_parallel_attn 2 (its default, null, in
the new decoder) each branch on its own LayerNorm, ln_attn and ln_mlp, and
with 1 both on input_layernorm. Four heads sharing two kv heads, bias true
(every projection has one, the head none), tied head.

  falcon_new      num_ln_in_parallel_attn null (2): ln_attn and ln_mlp
  falcon_new_ln1  num_ln_in_parallel_attn 1: input_layernorm for both

tests/data/hf/NAME/ holds config.json (as transformers writes FalconConfig)
and model.safetensors (F32) under FalconForCausalLM's names; falcon_new_tokens.csv
the batch (2 x 13 ids, torch.Generator().manual_seed(7)); falcon_new_expected.csv
the figures (case,quantity,key,shape,float32,float64 as bloom_expected.csv).

The model is written here from transformers' modeling_falcon.py formulas with
PyTorch alone (no transformers library), in float32 and in float64:

  x_0 = word_embeddings[ids]
  per layer: a = ln_attn(x), m = ln_mlp(x) (or both input_layernorm(x))
    fused = query_key_value(a) viewed (B, T, H_kv, H / H_kv + 2, hd):
      q = [..., :-2, :], k = [..., [-2], :], v = [..., [-1], :], k and v
      broadcast to the group's query heads, each flattened to (B, T, H, hd)
    q, k rotated: q cos + rotate_half(q) sin, cos and sin of
      cat(freqs, freqs), inv_freq = 1 / 10000^(2i / hd)
    context = softmax(q k^T / sqrt(hd), causal) v; attn = dense(context)
    mlp = dense_4h_to_h(gelu(dense_h_to_4h(m))), the exact erf GELU
    x = x + (mlp + attn)
  logits = ln_f(x) word_embeddings^T; loss: mean cross-entropy of the logits
  at t against token t + 1 (varprof's --loss next).

Figures: stream_norm (k = 0 .. 2, the stream after layer k: a parallel layer
is one sub-block), loss, grad_var (mean square of dL/dx_k), weight_grad (a
parallel sub-block's: sqrt((w_attn^2 + w_mlp^2) / 2), w = RMS(dL/dx_k)
RMS(branch input of its last projection)), and every parameter's gradient
Frobenius norm and RMS under the checkpoint's names, and grad_norm, the
global gradient norm (every parameter's squares summed, as clip_grad_norm_).

Weights: N(0, 1/fan_in) matrices, N(0, 1) embedding, every norm weight and
bias and every projection bias N(0, 0.2^2) added to 1 or 0, so that a
missing bias or a swapped norm shows. torch.manual_seed(31).

    /usr/bin/python3 tests/data/gen_falcon_new_decoder.py
"""
import math
import os

import torch
import torch.nn.functional as F

import reference_files as ref

HERE = os.path.dirname(os.path.abspath(__file__))

D, H, KV, LAYERS, V, FFN, B, T = 32, 4, 2, 2, 61, 64, 2, 13
HD = D // H
EPS = 1e-5
THETA = 10000.0
P = "transformer."
CASES = (("falcon_new", None), ("falcon_new_ln1", 1))
ORIGIN = "PyTorch %s, made by tests/data/gen_falcon_new_decoder.py" % torch.__version__


def perturbed(n, centre):
    return centre + 0.2 * torch.randn(n)


def make_weights(norms):
    w = {P + "word_embeddings.weight": torch.randn(V, D)}
    for i in range(LAYERS):
        h = P + "h.%d." % i
        for name in norms:
            w[h + name + ".weight"] = perturbed(D, 1.0)
            w[h + name + ".bias"] = perturbed(D, 0.0)
        for name, out, inp in (("self_attention.query_key_value", (H + 2 * KV) * HD, D),
                               ("self_attention.dense", D, H * HD),
                               ("mlp.dense_h_to_4h", FFN, D),
                               ("mlp.dense_4h_to_h", D, FFN)):
            w[h + name + ".weight"] = torch.randn(out, inp) / math.sqrt(inp)
            w[h + name + ".bias"] = perturbed(out, 0.0)
    w[P + "ln_f.weight"] = perturbed(D, 1.0)
    w[P + "ln_f.bias"] = perturbed(D, 0.0)
    return w


def config(num_ln):
    """FalconConfig.to_json_string's keys, as the corpus's falcon case has them."""
    return {"activation": "gelu", "alibi": False, "architectures": ["FalconForCausalLM"],
            "attention_dropout": 0.0, "bias": True, "bos_token_id": None, "dtype": "float32",
            "eos_token_id": None, "ffn_hidden_size": FFN, "hidden_dropout": 0.0,
            "hidden_size": D, "initializer_range": 0.02, "layer_norm_epsilon": EPS,
            "max_position_embeddings": 2048, "model_type": "falcon", "multi_query": True,
            "new_decoder_architecture": True, "num_attention_heads": H,
            "num_hidden_layers": LAYERS, "num_kv_heads": KV, "num_ln_in_parallel_attn": num_ln,
            "pad_token_id": None, "parallel_attn": True,
            "rope_parameters": {"rope_theta": THETA, "rope_type": "default"},
            "tie_word_embeddings": True, "transformers_version": "5.17.0", "use_cache": True,
            "vocab_size": V}


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_tables(dtype):
    inv_freq = 1.0 / (THETA ** (torch.arange(0, HD, 2, dtype=torch.int64).to(dtype) / HD))
    freqs = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def layer_norm(x, w, name):
    return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], EPS)


def linear(w, name, x):
    return F.linear(x, w[name + ".weight"], w[name + ".bias"])


def split_heads(fused):
    """FalconAttention._split_heads, new_decoder_architecture."""
    qkv = fused.view(B, T, -1, H // KV + 2, HD)
    query = qkv[:, :, :, :-2]
    key = torch.broadcast_to(qkv[:, :, :, [-2]], query.shape)
    value = torch.broadcast_to(qkv[:, :, :, [-1]], query.shape)
    return [t.flatten(2, 3) for t in (query, key, value)]


def attention(w, h, x, tables, trace):
    q, k, v = split_heads(linear(w, h + "self_attention.query_key_value", x))
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, hd)
    cos, sin = tables
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    scores = q @ k.transpose(-1, -2) / math.sqrt(HD)
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    probs = F.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
    context = (probs @ v).transpose(1, 2).reshape(B, T, H * HD)
    trace.branch(context)
    return linear(w, h + "self_attention.dense", context)


def mlp(w, h, x, trace):
    a = F.gelu(linear(w, h + "mlp.dense_h_to_4h", x))
    trace.branch(a)
    return linear(w, h + "mlp.dense_4h_to_h", a)


def forward(w, tokens, two_norms, trace, dtype):
    embed = w[P + "word_embeddings.weight"]
    x = trace.stream(embed[tokens])
    tables = rope_tables(dtype)
    for i in range(LAYERS):
        h = P + "h.%d." % i
        if two_norms:
            a, m = layer_norm(x, w, h + "ln_attn"), layer_norm(x, w, h + "ln_mlp")
        else:
            a = m = layer_norm(x, w, h + "input_layernorm")
        attn = attention(w, h, a, tables, trace)
        x = trace.stream(x + (mlp(w, h, m, trace) + attn))
    return F.linear(layer_norm(x, w, P + "ln_f"), embed)


def figures(stored, tokens, two_norms, dtype):
    return ref.figures(stored, tokens, dtype,
                       lambda w, trace: forward(w, tokens, two_norms, trace, dtype),
                       ref.parallel_weight_grads)


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(7))
    ref.write_tokens(os.path.join(HERE, "falcon_new_tokens.csv"), tokens)
    lines = []
    for name, num_ln in CASES:
        two_norms = num_ln in (None, 2)
        torch.manual_seed(31)
        weights = make_weights(("ln_attn", "ln_mlp") if two_norms else ("input_layernorm",))
        stored = ref.write_checkpoint(os.path.join(HERE, "hf", name), config(num_ln), weights,
                                      sort_keys=True)
        lines += ref.case_lines(name, figures(stored, tokens, two_norms, torch.float32),
                                figures(stored, tokens, two_norms, torch.float64))
    ref.write_expected(os.path.join(HERE, "falcon_new_expected.csv"), ORIGIN, lines)


if __name__ == "__main__":
    main()
