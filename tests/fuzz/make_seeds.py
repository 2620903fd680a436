#!/usr/bin/env python3
"""Writes the hand-made seed corpora of tests/fuzz/corpus/<target>/.

Run from the top of the tree: python3 tests/fuzz/make_seeds.py. Each seed is
named seed-<what>; files libFuzzer merged in later are named by their SHA-1
and are left alone. Every file stays under 64 KB."""
import json
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
LIMIT = 64 * 1024


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < LIMIT, (target, name, len(data))
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def parse():
    for name, text in [
        ("one", "1"), ("zero", "0"), ("minus-zero", "-0"), ("exp", "+1.5e-3"),
        ("point-five", ".5"), ("two-point", "2."), ("big", "1e308"), ("overflow", "1e309"),
        ("underflow", "1e-400"), ("zero-exp", "0e-400"), ("denormal", "4.9e-324"),
        ("nan", "nan"), ("inf", "-inf"), ("hex", "0x10"), ("lead-space", " 1"),
        ("trail-space", "1 "), ("empty", ""), ("size-max", "18446744073709551615"),
        ("size-max-plus", "18446744073709551616"), ("leading-zeros", "000000000000000000000001"),
        ("e-alone", "1e"), ("e-sign", "1e+"), ("dot", "."), ("sign", "-"), ("year", "2100"),
        ("layers-max", "1000000"), ("long", "9" * 400 + "." + "9" * 400 + "e-99999"),
        ("nul-inside", "12\x0034"), ("comma", "1,5"), ("two-points", "1.2.3"),
    ]:
        write("parse", name, text)


def gains():
    for name, text in [
        ("column", "1\n0.5\n2\n0\n"),
        ("header", "layer,gain\n1,0.5\n2,1.5\n"),
        ("header-last", "a,b,c,gain\n1,2,3,4\n"),
        ("crlf", "gain\r\n1\r\n2\r\n"),
        ("quoted", '"gain"\n"1.5"\n"2e-3"\n'),
        ("negative", "1\n-0.5\n"),
        ("minus-zero", "-0\n"),
        ("nan", "gain\nnan\n"),
        ("empty", ""),
        ("header-only", "gain\n"),
        ("no-gain-column", "a,b\n1,2\n"),
        ("short-row", "x,gain\n1\n"),
        ("open-quote", '1\n"2\n'),
        ("nul", "1\n2\x00\n"),
        ("blank-lines", "\n\n1\n\n2\n"),
        ("bom", "\ufeffgain\n1\n"),
        ("extreme", "1e-300\n1e150\n1e308\n4.9e-324\n"),
        ("many-columns", ",".join(["c"] * 65) + "\n"),
        ("long-cell", "gain\n" + "1" * 4097 + "\n"),
        ("no-newline", "1\n2"),
        ("semicolon", "1;2\n"),
        ("decimal-comma", "gain\n1\n0,5\n"),
        ("decimal-comma-columns", "layer,part,gain\n0,attn,0,5e-1\n"),
        ("header-capital", "Gain\n1\n"),
        ("header-spaced", '" gain "\n1\n'),
        ("gain-twice", "gain,gain\n1,1\n"),
        ("bom-column", "\ufeff1\n2\n"),
    ]:
        write("gains", name, text)


def token_ids():
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "data")
    with open(os.path.join(data, "seed_tokens.csv"), "rb") as f:
        write("token_ids", "tokens-seed-stack", bytes([24]) + f.read())
    with open(os.path.join(data, "attn_tokens.csv"), "rb") as f:
        write("token_ids", "tokens-attn", bytes([50]) + f.read())
    for name, vocab, text in [
        ("small", 10, "0,1,2\n3,4,5\n"),
        ("id-is-vocab", 10, "0,10\n"),
        ("vocab-zero", 0, "0\n"),
        ("vocab-one", 1, "0\n0\n"),
        ("ragged", 10, "1,2,3\n4,5\n"),
        ("negative", 10, "-1\n"),
        ("plus", 10, "+1\n"),
        ("space", 10, " 1\n"),
        ("empty", 10, ""),
        ("empty-cell", 10, "1,,2\n"),
        ("blank-lines", 10, "\n1,2\n\n3,4\n"),
        ("big-vocab", 254, "1048575,0\n"),
        ("huge-id", 254, "18446744073709551615\n"),
        ("uint-wrap", 254, "4294967296\n"),
        ("quoted", 10, '"1","2"\n'),
        ("crlf", 10, "1,2\r\n3,4\r\n"),
        ("one-column", 20, "\n".join(str(i) for i in range(20)) + "\n"),
    ]:
        write("token_ids", name, bytes([vocab]) + text.encode())


def models():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "data", "models.csv"), "rb") as f:
        write("models", "models-csv", f.read())
    head = "name,year,layers,placement,norm,qk_norm,source\n"
    row = "gpt-2,2019,48,pre-norm,layernorm,no,paper\n"
    head10 = head.rstrip("\n") + ",alpha,beta,alpha_beta_source\n"
    head26 = head10.rstrip("\n") + (
        ",width,heads,kv_heads,head_dim,ffn_width,vocab,activation,positions,max_positions,"
        "rope_theta,norm_eps,biases,tied_embeddings,final_norm,architecture,shape_source\n"
    )
    model10 = "m,2024,26,sandwich,rmsnorm,no,p,,,,"
    gemma = "2304,8,4,256,9216,256000,geglu,rope,,10000,1e-6,no,yes,yes,dense,c\n"
    gpt2 = "768,12,12,,3072,50257,gelu-tanh,learned,1024,,1e-5,yes,yes,yes,dense,c\n"
    for name, text in [
        ("header-only", head),
        ("one", head + row),
        ("twice", head + row + row),
        ("wrong-header", head.replace("year", "yr") + row),
        ("no-header", row),
        ("empty", ""),
        ("six-columns", head + "a,2019,48,pre-norm,layernorm,no\n"),
        ("bad-name", head + "GPT 2,2019,48,pre-norm,layernorm,no,paper\n"),
        ("long-name", head + "a" * 64 + ",2019,48,pre-norm,layernorm,no,paper\n"),
        ("name-63", head + "a" * 63 + ",2019,48,pre-norm,layernorm,no,paper\n"),
        ("year-low", head + "a,1899,48,pre-norm,layernorm,no,paper\n"),
        ("layers-zero", head + "a,2019,0,pre-norm,layernorm,no,paper\n"),
        ("layers-max", head + "a,2019,1000000,post-ln,rmsnorm,yes,paper\n"),
        ("layers-over", head + "a,2019,1000001,post-ln,rmsnorm,yes,paper\n"),
        ("post-norm", head + "a,2019,2,post-norm,rmsnorm,yes,paper\n"),
        ("alias", head + "a,2019,2,peri-norm,rmsnorm,yes,paper\nb,2020,3,pre-ln,layernorm,no,x\n"),
        ("bad-norm", head + "a,2019,2,deepnorm,batchnorm,no,paper\n"),
        ("bad-qk", head + "a,2019,2,parallel,layernorm,maybe,paper\n"),
        ("no-source", head + "a,2019,2,none,layernorm,no,\n"),
        ("long-source", head + "a,2019,2,sandwich,layernorm,no," + "s" * 1024 + "\n"),
        ("source-1023", head + "a,2019,2,output-norm,layernorm,no," + "s" * 1023 + "\n"),
        ("quoted-source", head + 'a,2019,2,pre-norm,layernorm,no,"a, b ""c"""\n'),
        ("crlf", head.replace("\n", "\r\n") + row.replace("\n", "\r\n")),
        ("own-scales", head10 + "g,2022,70,deepnorm,layernorm,no,p,(2N)^(1/2),(2N)^(-1/2),s\n"),
        ("own-numbers", head10 + "g,2022,70,deepnorm,layernorm,no,p,11.8,0.08,s\n"),
        ("own-not-deepnorm", head10 + "g,2022,70,post-ln,layernorm,no,p,2,,s\n"),
        ("own-no-source", head10 + "g,2022,70,deepnorm,layernorm,no,p,(N)^(0.5),,\n"),
        ("own-bad", head10 + "g,2022,70,deepnorm,layernorm,no,p,(2M)^(1/2),(2N)^(1/0),s\n"),
        ("decimal-comma", head10 + "g,2022,70,deepnorm,layernorm,no,p,11,8,,s\n"),
        ("ten-empty", head10 + "g,2022,70,pre-norm,rmsnorm,no,p,,,\n"),
        ("shape-gemma", head26 + model10 + gemma),
        ("shape-learned", head26 + model10 + gpt2),
        ("shape-unknown", head26 + model10 + "," * 15 + "\n"),
        ("shape-kv-odd", head26 + model10 + "512,8,3"
         ",,2048,32000,swiglu,rope,,10000,,no,no,yes,dense,c\n"),
        ("shape-no-head-dim", head26 + model10 + "512,7,7"
         ",,2048,32000,relu,none,,,,qkv,no,no,dense,c\n"),
    ]:
        write("models", name, text)


def safetensors_bytes(header, data=b"", length=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(h) if length is None else length
    return struct.pack("<Q", n) + h + data


def safetensors():
    f32 = struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)
    write("safetensors", "f32", safetensors_bytes(
        {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}, f32))
    # F16: 1, -2, a subnormal, the largest subnormal, inf, nan, -0, 65504
    f16 = struct.pack("<8H", 0x3C00, 0xC000, 0x0001, 0x03FF, 0x7C00, 0x7E00, 0x8000, 0x7BFF)
    write("safetensors", "f16", safetensors_bytes(
        {"h": {"dtype": "F16", "shape": [8], "data_offsets": [0, 16]}}, f16))
    bf16 = struct.pack("<4H", 0x3F80, 0xC000, 0x7F80, 0x0001)
    write("safetensors", "bf16", safetensors_bytes(
        {"__metadata__": {"format": "pt"},
         "b": {"dtype": "BF16", "shape": [1, 4], "data_offsets": [0, 8]},
         "s": {"dtype": "F32", "shape": [], "data_offsets": [8, 12]},
         "z": {"dtype": "F32", "shape": [0, 3], "data_offsets": [12, 12]}},
        bf16 + struct.pack("<f", 7.0)))
    write("safetensors", "empty-header", safetensors_bytes({}))
    write("safetensors", "short", b"\x10\x00\x00")
    write("safetensors", "length-beyond", safetensors_bytes(b"{}", length=100))
    write("safetensors", "length-huge", safetensors_bytes(b"{}", length=0xFFFFFFFFFFFFFFFF))
    write("safetensors", "not-json", safetensors_bytes(b"{\"w\": "))
    write("safetensors", "array", safetensors_bytes(b"[1,2]"))
    write("safetensors", "padded", safetensors_bytes(b'{"w":{"dtype":"F32","shape":[1],'
                                                     b'"data_offsets":[0,4]}}    ', b"\0" * 4))
    for name, tensor, data in [
        ("overlap", {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, 12),
        ("wrong-bytes", {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, 8),
        ("rank-9", {"a": {"dtype": "F16", "shape": [1] * 9, "data_offsets": [0, 2]}}, 2),
        ("negative-dim", {"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, 4),
        ("fraction-dim", {"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 6]}}, 6),
        ("overflow-dims", {"a": {"dtype": "F32", "shape": [2 ** 53, 2 ** 53, 0],
                                 "data_offsets": [0, 0]}}, 0),
        ("overflow-product", {"a": {"dtype": "BF16", "shape": [2 ** 31, 2 ** 31],
                                    "data_offsets": [0, 8]}}, 8),
        ("offsets-reversed", {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}, 4),
        ("offsets-three", {"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}}, 8),
        ("offsets-outside", {"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}}, 4),
        ("dtype-f64", {"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}, 8),
        ("dtype-number", {"a": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}}, 4),
        ("no-shape", {"a": {"dtype": "F32", "data_offsets": [0, 4]}}, 4),
        ("tensor-not-object", {"a": [1, 2, 3]}, 0),
    ]:
        write("safetensors", name, safetensors_bytes(tensor, b"\x01" * data))
    write("safetensors", "named-twice", safetensors_bytes(
        b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
        b'"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', b"\0" * 8))
    # the first tensors of two files of tests/data, their header rewritten
    here = os.path.dirname(os.path.abspath(__file__))
    for src, name, keep in [("seed_stack_pre_norm.safetensors", "seed-stack-cut", 4),
                            ("seed_stack_pre_norm_bf16.safetensors", "seed-stack-bf16-cut", 5)]:
        with open(os.path.join(here, "..", "data", src), "rb") as f:
            blob = f.read()
        n = struct.unpack("<Q", blob[:8])[0]
        header = json.loads(blob[8:8 + n])
        body = blob[8 + n:]
        tensors = [(k, v) for k, v in header.items() if k != "__metadata__"]
        tensors.sort(key=lambda kv: kv[1]["data_offsets"][0])
        out_header, out_data = {}, b""
        for k, v in tensors:
            if len(out_header) == keep:
                break
            b0, b1 = v["data_offsets"]
            if len(out_data) + (b1 - b0) > 40000:
                continue
            out_header[k] = dict(v, data_offsets=[len(out_data), len(out_data) + b1 - b0])
            out_data += body[b0:b1]
        write("safetensors", name, safetensors_bytes(out_header, out_data))


def hf_checkpoint():
    """config.json NUL index NUL model.safetensors: a tiny GPT-2 and Llama
    that read, and hostile variants."""
    import numpy as np
    d, v, f, ctx = 4, 5, 16, 3

    def tensors(shapes):
        header, data = {}, b""
        for name, shape in shapes:
            n = int(np.prod(shape))
            header[name] = {"dtype": "F32", "shape": list(shape),
                            "data_offsets": [len(data), len(data) + 4 * n]}
            data += np.linspace(-1, 1, n, dtype="<f4").tobytes()
        return safetensors_bytes(header, data)

    gpt2_shapes = [("wte.weight", (v, d)), ("wpe.weight", (ctx, d)), ("ln_f.weight", (d,)),
                   ("ln_f.bias", (d,))]
    for n, shape in [("ln_1.weight", (d,)), ("ln_1.bias", (d,)), ("ln_2.weight", (d,)),
                     ("ln_2.bias", (d,)), ("attn.c_attn.weight", (d, 3 * d)),
                     ("attn.c_attn.bias", (3 * d,)), ("attn.c_proj.weight", (d, d)),
                     ("attn.c_proj.bias", (d,)), ("mlp.c_fc.weight", (d, f)),
                     ("mlp.c_fc.bias", (f,)), ("mlp.c_proj.weight", (f, d)),
                     ("mlp.c_proj.bias", (d,))]:
        gpt2_shapes.append(("h.0." + n, shape))
    gpt2 = {"model_type": "gpt2", "n_embd": d, "n_head": 2, "n_layer": 1, "n_positions": ctx,
            "vocab_size": v}
    llama_shapes = [("model.embed_tokens.weight", (v, d)), ("model.norm.weight", (d,)),
                    ("lm_head.weight", (v, d))]
    for n, shape in [("input_layernorm.weight", (d,)), ("post_attention_layernorm.weight", (d,)),
                     ("self_attn.q_proj.weight", (d, d)), ("self_attn.k_proj.weight", (d, d)),
                     ("self_attn.v_proj.weight", (d, d)), ("self_attn.o_proj.weight", (d, d)),
                     ("mlp.gate_proj.weight", (f, d)), ("mlp.up_proj.weight", (f, d)),
                     ("mlp.down_proj.weight", (d, f))]:
        llama_shapes.append(("model.layers.0." + n, shape))
    llama = {"model_type": "llama", "hidden_size": d, "num_attention_heads": 2,
             "num_hidden_layers": 1, "intermediate_size": f, "vocab_size": v}

    def seed(name, config, index, shapes):
        body = tensors(shapes) if shapes else b""
        text = json.dumps(config) if isinstance(config, dict) else config
        idx = json.dumps(index) if isinstance(index, dict) else index
        write("hf_checkpoint", name, text.encode() + b"\0" + idx.encode() + b"\0" + body)

    seed("gpt2", gpt2, "", gpt2_shapes)
    seed("llama", llama, "", llama_shapes)
    seed("llama-index", llama, {"weight_map": {n: "model.safetensors" for n, _ in llama_shapes}},
         llama_shapes)
    seed("index-dotdot", llama, {"weight_map": {"model.embed_tokens.weight": "../x"}}, llama_shapes)
    seed("index-self", llama,
         {"weight_map": {"model.embed_tokens.weight": "model.safetensors.index.json"}}, None)
    seed("gqa", dict(llama, num_key_value_heads=1), "", llama_shapes)
    seed("gemma2", dict(llama, model_type="gemma2"), "", None)
    seed("wrong-width", dict(gpt2, n_embd=8), "", gpt2_shapes)
    seed("layers-huge", dict(gpt2, n_layer=1000000), "", gpt2_shapes)
    seed("not-json", "{\"model_type\": ", "", None)


def cli():
    for name, args in [
        ("empty", []),
        ("layers-gain", ["--layers", "32", "--gain", "2"]),
        ("equals", ["--layers=1000000", "--gain=0", "--gamma=1e-300", "--embedding-var=1e-300"]),
        ("table", ["table", "--explain", "--placement=deepnorm"]),
        ("table-alpha", ["table", "--alpha", "0", "--beta", "0"]),
        ("models", ["models"]),
        ("models-help", ["models", "--help"]),
        ("figures", ["figures", "--format", "png", "--outdir", "/tmp/x"]),
        ("mc", ["--engine", "mc", "--width", "1", "--norm", "rmsnorm", "--trials", "2",
                "--method", "full", "--threads", "1024", "--seed", "18446744073709551615"]),
        ("mc-bad", ["--engine=mc", "--width=1", "--norm=layernorm", "--norm-eps=1"]),
        ("forward", ["--engine=forward", "--heads=3", "--width=64", "--ffn-mult=64",
                     "--vocab=1048576", "--batch=1", "--tokens=65536", "--qk-norm",
                     "--init=torch", "--block", "mlp"]),
        ("forward-files", ["--engine", "all", "--weights", "w.safetensors", "--token-ids",
                           "t.csv", "--norm-eps", "0.5"]),
        ("placement-list", ["--placement", "post-ln,pre-norm,sandwich", "--every", "2000000"]),
        ("placement-all", ["--placement", "all", "--format", "json", "--output", "o", "--force"]),
        ("plot", ["--plot", "-", "--plot-script", "s.gp", "--quantity", "share"]),
        ("model", ["--model", "gpt-2", "--layers", "0"]),
        ("unknown-command", ["bogus"]),
        ("dash-dash", ["--"]),
        ("single-dash", ["-x"]),
        ("flag-value", ["--qk-norm=1"]),
        ("missing-value", ["--layers"]),
        ("wrong-command", ["table", "--engine", "mc"]),
        ("nan-gain", ["--gain", "nan"]),
        ("empty-arg", [""]),
        ("empty-value", ["--gain="]),
        ("threads-zero", ["--threads", "0", "--engine", "forward"]),
        ("seed-over", ["--engine", "mc", "--seed", "18446744073709551616"]),
        ("help-version", ["--help", "--version"]),
    ]:
        write("cli", name, b"\0".join(a.encode() for a in args))


if __name__ == "__main__":
    for make in (parse, gains, token_ids, models, safetensors, hf_checkpoint, cli):
        make()
    sys.exit(0)
