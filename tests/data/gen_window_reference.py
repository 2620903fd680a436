#!/usr/bin/env python3
"""Tiny checkpoints whose sliding window is shorter than the batch, and PyTorch's
figures for them (issue 30: sliding windows per layer type, Gemma 3's RoPE per
layer type).

Each case is 11 tokens a sequence through a window of 4, in the config.json
spelling transformers writes (layer_types where its config class keeps them):

  window_mistral     MistralConfig: every layer slides (sliding_window set)
  window_qwen2       Qwen2Config: use_sliding_window, max_window_layers 1 of 2
                     layers: layer 0 full, layer 1 sliding
  window_gemma2      Gemma2Config: layer_types sliding, full (soft caps on)
  window_gemma3      Gemma3TextConfig: layer_types sliding, full; the sliding
                     layer turns by rope_parameters' sliding_attention base
                     10000 (default RoPE), the full one by 1e6 with linear
                     scaling of factor 8
  window_starcoder2  Starcoder2Config: every layer slides
  window_phi3        Phi3Config: every layer slides (fused qkv_proj, gate_up_proj)
  window_qwen3       Qwen3Config: as qwen2, with per-head q_norm and k_norm

The models are written here from transformers' modeling_*.py formulas with
PyTorch alone (no transformers library), in float32 and in float64:

  mask (masking_utils.sliding_window_causal_mask_function): query t sees key
        s when s <= t and s > t - sliding_window (the window's 4 keys, itself
        included) on a sliding layer, every s <= t on a full one; the others
        get -inf before the softmax (probability exactly 0)
  RoPE: inv_freq = 1 / base^(2i / hd) (linear: / factor), angles p inv_freq,
        Llama's rotate_half; Gemma 3's sliding layers by their own base
  Llama-like block: x += o_proj(attn(rope(q, k), v)) on input_layernorm(x),
        x += down(silu(gate h) * up h) on post_attention_layernorm(x), RMSNorm
        w * x / rms (qwen2: q, k, v biases; qwen3: RMSNorm over each head of q
        and k before the rotation)
  Gemma 2 and 3: embedding times float(sqrt(d)), (1 + w) RMSNorms, the
        sandwich (input_layernorm, post_attention_layernorm,
        pre_feedforward_layernorm, post_feedforward_layernorm), GeGLU with the
        tanh GELU, scores times query_pre_attn_scalar^-1/2, Gemma 2's soft caps
        (scores 50, logits 30), Gemma 3's q_norm and k_norm, a tied head
  StarCoder2: LayerNorm with biases, every projection biased,
        c_proj(gelu_tanh(c_fc h))
  Phi-3: qkv_proj split q, k, v; gate_up_proj split gate, up (chunk(2))

Figures, case,quantity,key,shape,float32,float64 (as bloom_expected.csv):
stream_norm (k = 0 .. 4, the stream after sub-block k), loss (next token),
grad_var, weight_grad, every parameter's gradient Frobenius norm and RMS under
the checkpoint's names, and grad_norm (the global gradient norm).

Weights: N(0, 1/fan_in) matrices, N(0, 1) embedding, norm weights and every
bias N(0, 0.2^2) about 1 (0 for Gemma's 1 + w and for biases).
torch.manual_seed(30 + case index); tokens torch.Generator().manual_seed(11).

Run it from the top of the project (torch is never a build dependency):

    /usr/bin/python3 tests/data/gen_window_reference.py
"""
import math
import os

import torch
import torch.nn.functional as F

import reference_files as ref

HERE = os.path.dirname(os.path.abspath(__file__))

D, H, KV, F_, V, B, T, LAYERS, WINDOW = 32, 4, 2, 72, 61, 2, 11, 2, 4
ORIGIN = "PyTorch %s, made by tests/data/gen_window_reference.py" % torch.__version__
P = "model."

# name, family, head_dim, each layer sliding (1) or full (0)
CASES = [
    ("window_mistral", "mistral", 8, (1, 1)),
    ("window_qwen2", "qwen2", 8, (0, 1)),
    ("window_gemma2", "gemma2", 16, (1, 0)),
    ("window_gemma3", "gemma3_text", 16, (1, 0)),
    ("window_starcoder2", "starcoder2", 8, (1, 1)),
    ("window_phi3", "phi3", 8, (1, 1)),
    ("window_qwen3", "qwen3", 16, (0, 1)),
]
GEMMA3_LOCAL, GEMMA3_GLOBAL, GEMMA3_FACTOR = 10000.0, 1000000.0, 8.0


def gemma(family):
    return family in ("gemma2", "gemma3_text")


def kinds_text(kinds):
    return ["sliding_attention" if k else "full_attention" for k in kinds]


def config(family, hd, kinds):
    c = {"architectures": [], "attention_dropout": 0.0, "bos_token_id": None,
         "dtype": "float32", "eos_token_id": None, "hidden_size": D,
         "initializer_range": 0.02, "intermediate_size": F_, "max_position_embeddings": 64,
         "model_type": family, "num_attention_heads": H, "num_hidden_layers": LAYERS,
         "num_key_value_heads": KV, "pad_token_id": None,
         "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
         "sliding_window": WINDOW, "tie_word_embeddings": False,
         "transformers_version": "5.17.0", "use_cache": True, "vocab_size": V}
    if family == "mistral":
        c.update({"architectures": ["MistralForCausalLM"], "head_dim": hd,
                  "hidden_act": "silu", "rms_norm_eps": 1e-06})
    elif family in ("qwen2", "qwen3"):
        c.update({"architectures": ["Qwen2ForCausalLM" if family == "qwen2" else
                                    "Qwen3ForCausalLM"],
                  "hidden_act": "silu", "rms_norm_eps": 1e-06,
                  "layer_types": kinds_text(kinds), "max_window_layers": 1,
                  "use_sliding_window": True})
        if family == "qwen3":
            c.update({"attention_bias": False, "head_dim": hd})
    elif gemma(family):
        c.update({"architectures": ["Gemma2ForCausalLM" if family == "gemma2" else
                                    "Gemma3ForCausalLM"],
                  "attention_bias": False, "head_dim": hd,
                  "hidden_activation": "gelu_pytorch_tanh", "layer_types": kinds_text(kinds),
                  "query_pre_attn_scalar": 16, "rms_norm_eps": 1e-06,
                  "tie_word_embeddings": True, "use_bidirectional_attention": None})
        if family == "gemma2":
            c.update({"attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0})
        else:
            c.update({"attn_logit_softcapping": None, "final_logit_softcapping": None,
                      "_sliding_window_pattern": 6, "use_bidirectional_attention": False,
                      "rope_parameters": {
                          "full_attention": {"factor": GEMMA3_FACTOR,
                                             "rope_theta": GEMMA3_GLOBAL,
                                             "rope_type": "linear"},
                          "sliding_attention": {"rope_theta": GEMMA3_LOCAL,
                                                "rope_type": "default"}}})
    elif family == "starcoder2":
        c.update({"architectures": ["Starcoder2ForCausalLM"], "embedding_dropout": 0.0,
                  "hidden_act": "gelu_pytorch_tanh", "norm_epsilon": 1e-05,
                  "residual_dropout": 0.0, "use_bias": True})
    elif family == "phi3":
        c.update({"architectures": ["Phi3ForCausalLM"], "embd_pdrop": 0.0,
                  "hidden_act": "silu", "original_max_position_embeddings": 4096,
                  "resid_pdrop": 0.0, "rms_norm_eps": 1e-05,
                  "rope_parameters": {"partial_rotary_factor": 1.0, "rope_theta": 10000.0,
                                      "rope_type": "default"}})
    return dict(sorted(c.items()))


def make_weights(family, hd):
    def mat(out, inp):
        return torch.randn(out, inp) / math.sqrt(inp)

    def vec(n, centre):
        return centre + 0.2 * torch.randn(n)

    one = 0.0 if gemma(family) else 1.0  # Gemma's norms are 1 + w
    w = {P + "embed_tokens.weight": torch.randn(V, D)}
    for i in range(LAYERS):
        h = P + "layers.%d." % i
        w[h + "input_layernorm.weight"] = vec(D, one)
        if family == "starcoder2":
            w[h + "input_layernorm.bias"] = vec(D, 0.0)
        if family == "phi3":
            w[h + "self_attn.qkv_proj.weight"] = mat((H + 2 * KV) * hd, D)
        else:
            for name, out in (("q_proj", H * hd), ("k_proj", KV * hd), ("v_proj", KV * hd)):
                w[h + "self_attn.%s.weight" % name] = mat(out, D)
                if family in ("qwen2", "starcoder2"):
                    w[h + "self_attn.%s.bias" % name] = vec(out, 0.0)
        w[h + "self_attn.o_proj.weight"] = mat(D, H * hd)
        if family == "starcoder2":
            w[h + "self_attn.o_proj.bias"] = vec(D, 0.0)
        if family in ("gemma3_text", "qwen3"):
            w[h + "self_attn.q_norm.weight"] = vec(hd, one)
            w[h + "self_attn.k_norm.weight"] = vec(hd, one)
        w[h + "post_attention_layernorm.weight"] = vec(D, one)
        if family == "starcoder2":
            w[h + "post_attention_layernorm.bias"] = vec(D, 0.0)
            w[h + "mlp.c_fc.weight"] = mat(F_, D)
            w[h + "mlp.c_fc.bias"] = vec(F_, 0.0)
            w[h + "mlp.c_proj.weight"] = mat(D, F_)
            w[h + "mlp.c_proj.bias"] = vec(D, 0.0)
            continue
        if gemma(family):
            w[h + "pre_feedforward_layernorm.weight"] = vec(D, one)
            w[h + "post_feedforward_layernorm.weight"] = vec(D, one)
        if family == "phi3":
            w[h + "mlp.gate_up_proj.weight"] = mat(2 * F_, D)
        else:
            w[h + "mlp.gate_proj.weight"] = mat(F_, D)
            w[h + "mlp.up_proj.weight"] = mat(F_, D)
        w[h + "mlp.down_proj.weight"] = mat(D, F_)
    w[P + "norm.weight"] = vec(D, one)
    if family == "starcoder2":
        w[P + "norm.bias"] = vec(D, 0.0)
    if not gemma(family):
        w["lm_head.weight"] = mat(V, D)
    return w


def rms_norm(x, weight, eps, gemma_form):
    """LlamaRMSNorm (weight times the normalised x) or Gemma's (times 1 + w)."""
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return normed * (1.0 + weight) if gemma_form else weight * normed


def rope(hd, base, factor, dtype):
    """cos and sin [T, hd]: the default inv_freq, divided by a linear factor."""
    inv_freq = 1.0 / (base ** (torch.arange(0, hd, 2, dtype=torch.int64).to(dtype) / hd))
    if factor:
        inv_freq = inv_freq / factor
    freqs = torch.arange(T, dtype=dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def allowed(sliding):
    """masking_utils: causal, and kv_idx > q_idx - sliding_window on a sliding layer."""
    q = torch.arange(T)[:, None]
    k = torch.arange(T)[None, :]
    mask = k <= q
    if sliding:
        mask = mask & (k > q - WINDOW)
    return mask


def linear(w, name, x):
    return F.linear(x, w[name + ".weight"], w.get(name + ".bias"))


def attention(w, h, x, family, hd, sliding, tables, trace):
    eps = 1e-5 if family == "phi3" else 1e-6
    if family == "phi3":
        qkv = linear(w, h + "self_attn.qkv_proj", x)
        q, k, v = qkv.split([H * hd, KV * hd, KV * hd], dim=-1)
    else:
        q = linear(w, h + "self_attn.q_proj", x)
        k = linear(w, h + "self_attn.k_proj", x)
        v = linear(w, h + "self_attn.v_proj", x)
    q = q.view(B, T, H, hd)
    k = k.view(B, T, KV, hd)
    v = v.view(B, T, KV, hd)
    if family in ("gemma3_text", "qwen3"):
        g = family == "gemma3_text"
        q = rms_norm(q, w[h + "self_attn.q_norm.weight"], eps, g)
        k = rms_norm(k, w[h + "self_attn.k_norm.weight"], eps, g)
    q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
    cos, sin = tables[1 if sliding and family == "gemma3_text" else 0]
    q = q * cos + rotate_half(q) * sin
    k = k * cos + rotate_half(k) * sin
    k = k.repeat_interleave(H // KV, dim=1)
    v = v.repeat_interleave(H // KV, dim=1)
    scale = 16 ** -0.5 if gemma(family) else hd ** -0.5
    scores = torch.matmul(q, k.transpose(2, 3)) * scale
    if family == "gemma2":
        scores = torch.tanh(scores / 50.0) * 50.0
    scores = scores.masked_fill(~allowed(sliding), float("-inf"))
    probs = F.softmax(scores, dim=-1)
    context = torch.matmul(probs, v).transpose(1, 2).reshape(B, T, H * hd)
    o = linear(w, h + "self_attn.o_proj", context)
    trace.branch(context, o)
    return o


def mlp(w, h, x, family, trace):
    if family == "starcoder2":
        a = F.gelu(linear(w, h + "mlp.c_fc", x), approximate="tanh")
        o = linear(w, h + "mlp.c_proj", a)
    else:
        if family == "phi3":
            gate, up = linear(w, h + "mlp.gate_up_proj", x).chunk(2, dim=-1)
        else:
            gate, up = linear(w, h + "mlp.gate_proj", x), linear(w, h + "mlp.up_proj", x)
        act = F.gelu(gate, approximate="tanh") if gemma(family) else F.silu(gate)
        a = act * up
        o = linear(w, h + "mlp.down_proj", a)
    trace.branch(a, o)
    return o


def forward(w, tokens, family, hd, kinds, trace, dtype):
    embed = w[P + "embed_tokens.weight"]
    g = gemma(family)
    eps = 1e-5 if family in ("phi3", "starcoder2") else 1e-6

    def norm(x, name):
        if family == "starcoder2":
            return F.layer_norm(x, (D,), w[name + ".weight"], w[name + ".bias"], eps)
        return rms_norm(x, w[name + ".weight"], eps, g)

    x = embed[tokens]
    if g:  # the normalizer, a tensor of the weights' dtype
        x = x * torch.tensor(D ** 0.5, dtype=dtype)
    x = trace.stream(x)
    if family == "gemma3_text":
        tables = [rope(hd, GEMMA3_GLOBAL, GEMMA3_FACTOR, dtype), rope(hd, GEMMA3_LOCAL, 0, dtype)]
    else:
        tables = [rope(hd, 10000.0, 0, dtype)]
    for i in range(LAYERS):
        h = P + "layers.%d." % i
        a = attention(w, h, norm(x, h + "input_layernorm"), family, hd, kinds[i], tables, trace)
        if g:
            a = norm(a, h + "post_attention_layernorm")
        x = trace.stream(x + a)
        m_in = norm(x, h + ("pre_feedforward_layernorm" if g else "post_attention_layernorm"))
        m = mlp(w, h, m_in, family, trace)
        if g:
            m = norm(m, h + "post_feedforward_layernorm")
        x = trace.stream(x + m)
    x = norm(x, P + "norm")
    logits = F.linear(x, embed if g else w["lm_head.weight"])
    if family == "gemma2":
        logits = torch.tanh(logits / 30.0) * 30.0
    return logits


def figures(stored, tokens, family, hd, kinds, dtype):
    return ref.figures(stored, tokens, dtype,
                       lambda w, trace: forward(w, tokens, family, hd, kinds, trace, dtype),
                       ref.branch_weight_grads)


def main():
    torch.set_num_threads(1)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(11))
    ref.write_tokens(os.path.join(HERE, "window_tokens.csv"), tokens)
    lines = []
    for index, (name, family, hd, kinds) in enumerate(CASES):
        torch.manual_seed(30 + index)
        weights = make_weights(family, hd)
        stored = ref.write_checkpoint(os.path.join(HERE, "hf", name), config(family, hd, kinds),
                                      weights)
        lines += ref.case_lines(name, figures(stored, tokens, family, hd, kinds, torch.float32),
                                figures(stored, tokens, family, hd, kinds, torch.float64))
    ref.write_expected(os.path.join(HERE, "window_expected.csv"), ORIGIN, lines)


if __name__ == "__main__":
    main()
