#!/usr/bin/env python3
"""Writes small, valid seed inputs for the fuzz targets into OUT/<target>/.

A fuzzer started from valid files reaches past the first length check; these
are written by hand from the formats' specifications (GGUF v3, SafeTensors),
not by the engine, so they also say what the parsers must accept.
Usage: make_seeds.py OUT REPO_ROOT
"""
import json
import os
import struct
import sys

out, root = sys.argv[1], sys.argv[2]


def put(target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- GGUF: a 1-layer llama with a 8-token byte-level BPE vocabulary ----
def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, ty, payload):
    return gstr(key) + struct.pack("<I", ty) + payload


def kv_u32(key, v):
    return kv(key, 4, struct.pack("<I", v))


def kv_f32(key, v):
    return kv(key, 6, struct.pack("<f", v))


def kv_str(key, v):
    return kv(key, 8, gstr(v))


def kv_arr(key, ty, items, fmt=None):
    body = struct.pack("<IQ", ty, len(items))
    for it in items:
        body += gstr(it) if ty == 8 else struct.pack(fmt, it)
    return kv(key, 9, body)


def gguf(with_tensors=True, vocab_only=False):
    d, ff, heads, kv_heads, vocab = 8, 8, 2, 1, 8
    hd = d // heads
    tokens = ["a", "b", "c", "ab", "Ġ", "Ġa", "<|endoftext|>", "<|im_end|>"]
    kvs = [
        kv_str("general.architecture", "llama"),
        kv_u32("general.alignment", 32),
        kv_u32("llama.context_length", 16),
        kv_u32("llama.embedding_length", d),
        kv_u32("llama.block_count", 1),
        kv_u32("llama.feed_forward_length", ff),
        kv_u32("llama.attention.head_count", heads),
        kv_u32("llama.attention.head_count_kv", kv_heads),
        kv_f32("llama.attention.layer_norm_rms_epsilon", 1e-5),
        kv_f32("llama.rope.freq_base", 10000.0),
        kv_str("tokenizer.ggml.model", "gpt2"),
        kv_str("tokenizer.ggml.pre", "smollm"),
        kv_arr("tokenizer.ggml.tokens", 8, tokens),
        kv_arr("tokenizer.ggml.token_type", 5, [1, 1, 1, 1, 1, 1, 3, 3], "<i"),
        kv_arr("tokenizer.ggml.merges", 8, ["a b", "Ġ a"]),
        kv_u32("tokenizer.ggml.eos_token_id", 7),
        kv_str("tokenizer.chat_template", "{% for m in messages %}<|im_start|>{{ m['content'] }}<|im_end|>{% endfor %}"),
    ]
    if vocab_only:
        kvs = [k for k in kvs if b"tokenizer" in k[:40] or b"general" in k[:40]]
    shapes = [("token_embd.weight", [d, vocab]), ("output_norm.weight", [d])]
    for name, dims in [("attn_norm", [d]), ("attn_q", [d, heads * hd]), ("attn_k", [d, kv_heads * hd]),
                       ("attn_v", [d, kv_heads * hd]), ("attn_output", [heads * hd, d]), ("ffn_norm", [d]),
                       ("ffn_gate", [d, ff]), ("ffn_up", [d, ff]), ("ffn_down", [ff, d])]:
        shapes.append((f"blk.0.{name}.weight", dims))
    if not with_tensors:
        shapes = []
    infos, data = b"", b""
    for i, (name, dims) in enumerate(shapes):
        while len(data) % 32:
            data += b"\0"
        n = 1
        for x in dims:
            n *= x
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", x) for x in dims)
        infos += struct.pack("<IQ", 0, len(data))  # F32
        data += b"".join(struct.pack("<f", ((i * 7 + j * 3) % 11 - 5) / 10.0) for j in range(n))
    head = b"GGUF" + struct.pack("<IQQ", 3, len(shapes), len(kvs)) + b"".join(kvs) + infos
    while len(head) % 32:
        head += b"\0"
    return head + data


put("gguf", "tiny-llama.gguf", gguf())
put("gguf", "no-tensors.gguf", gguf(with_tensors=False))
put("gguf_vocab", "tiny-llama.gguf", gguf())
put("gguf_vocab", "vocab-only.gguf", gguf(with_tensors=False, vocab_only=True))
smol = os.path.join(root, "www/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
if os.path.exists(smol):
    with open(smol, "rb") as f:
        put("gguf", "smollm2-head.gguf", f.read(4096))

# ---- SafeTensors for the fuzz entry's tiny config (crate/fuzz/entry.rs) ----
d, ff, heads, kv_heads, vocab = 8, 8, 2, 1, 8
hd = d // heads
shapes = {
    "tok_emb.weight": [vocab, d],
    "final_norm.Rms.gamma": [d],
    "blocks.0.attn_norm.Rms.gamma": [d],
    "blocks.0.mlp_norm.Rms.gamma": [d],
    "blocks.0.attn.wq.weight": [d, heads * hd],
    "blocks.0.attn.wk.weight": [d, kv_heads * hd],
    "blocks.0.attn.wv.weight": [d, kv_heads * hd],
    "blocks.0.attn.wo.weight": [heads * hd, d],
    "blocks.0.mlp.gate.weight": [d, ff],
    "blocks.0.mlp.up.weight": [d, ff],
    "blocks.0.mlp.down.weight": [ff, d],
}
header, blob = {"__metadata__": {"format": "safetensors"}}, b""
for name, shape in sorted(shapes.items()):
    n = 1
    for x in shape:
        n *= x
    header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(blob), len(blob) + 4 * n]}
    blob += b"".join(struct.pack("<f", ((j * 5) % 7 - 3) / 10.0) for j in range(n))
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
put("safetensors", "tiny.safetensors", struct.pack("<Q", len(h)) + h + blob)
with open(os.path.join(root, "www/models/bard/model.safetensors"), "rb") as f:
    put("safetensors", "bard-head.safetensors", f.read(8192))

# ---- model.json and tokenizer.json: the shipped model's own ----
with open(os.path.join(root, "www/models/bard/model.json"), "rb") as f:
    put("manifest", "bard-model.json", f.read())
with open(os.path.join(root, "www/models/bard/tokenizer.json"), "rb") as f:
    put("tokenizer_json", "bard-tokenizer.json", f.read())
tiny_tok = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 4, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
              "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "<|endoftext|>": 4}, "merges": ["a b"]},
}
put("tokenizer_json", "tiny-tokenizer.json", json.dumps(tiny_tok).encode())
