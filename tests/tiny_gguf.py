"""Writes a tiny llama-architecture GGUF with random weights, for a real llama.cpp server in tests.

Byte-level GPT-2 tokenizer (256 byte tokens + a few merges + ChatML control tokens), fixed
seed, written in well under a second. Its answers are gibberish but deterministic under
greedy decoding, and its flat-ish distributions give honest near-tie flips between storage
precisions (f32 / f16 / q8_0). `perturb` adds noise to every weight: a model that really
differs, for the diff tool's "real divergence" tests.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# A few merges so the BPE tokenizer has real work (llama.cpp requires merges for gpt2).
MERGES = [("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġt", "he"), ("a", "n"), ("e", "r"), ("o", "n"),
          ("Ġ", "a"), ("r", "e"), ("a", "t"), ("Ġ", "s"), ("e", "n"), ("o", "r"), ("Ġ", "w")]
CONTROL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _bytes_to_unicode() -> dict[int, str]:
    # GPT-2's reversible byte -> printable character mapping.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def vocabulary() -> tuple[list[str], list[int], list[str]]:
    byte_tokens = [_bytes_to_unicode()[b] for b in range(256)]
    merged = [a + b for a, b in MERGES]
    tokens = byte_tokens + merged + CONTROL_TOKENS
    types = [1] * (len(byte_tokens) + len(merged)) + [3] * len(CONTROL_TOKENS)  # 1 normal, 3 control
    merges = [f"{a} {b}" for a, b in MERGES]
    return tokens, types, merges


def write_tiny_gguf(path: str | Path, dtype: str = "f32", seed: int = 0, perturb: float = 0.0,
                    n_embd: int = 64, n_layer: int = 2, n_head: int = 4, n_head_kv: int = 4,
                    n_ff: int = 128, n_ctx: int = 4096, logit_scale: float = 4.0) -> Path:
    """Write the model to `path` and return it. dtype: f32, f16 or q8_0 (matrices only;
    norms stay f32 as llama.cpp expects). Same seed -> same weights, whatever the dtype."""
    import gguf

    path = Path(path)
    tokens, types, merges = vocabulary()
    n_vocab = len(tokens)
    rng = np.random.default_rng(seed)
    noise = np.random.default_rng(seed + 1_000_003)
    head_dim = n_embd // n_head

    def weight(rows: int, cols: int, scale: float) -> np.ndarray:
        w = rng.standard_normal((rows, cols)).astype(np.float32) * scale
        if perturb:
            w = w + noise.standard_normal((rows, cols)).astype(np.float32) * scale * perturb
        return w

    qtype = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16,
             "q8_0": gguf.GGMLQuantizationType.Q8_0}[dtype]

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(f"tiny-random-{dtype}")
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(head_dim)
    writer.add_file_type({"f32": 0, "f16": 1, "q8_0": 7}[dtype])
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML_TEMPLATE)

    def matrix(name: str, w: np.ndarray) -> None:
        if dtype == "f32":
            writer.add_tensor(name, w)
        elif dtype == "f16":
            writer.add_tensor(name, w.astype(np.float16))
        else:
            q = gguf.quantize(w, qtype)
            writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)

    def norm(name: str, size: int) -> None:
        writer.add_tensor(name, np.ones(size, dtype=np.float32))

    matrix("token_embd.weight", weight(n_vocab, n_embd, 1.0))
    for i in range(n_layer):
        norm(f"blk.{i}.attn_norm.weight", n_embd)
        matrix(f"blk.{i}.attn_q.weight", weight(n_embd, n_embd, n_embd ** -0.5))
        matrix(f"blk.{i}.attn_k.weight", weight(head_dim * n_head_kv, n_embd, n_embd ** -0.5))
        matrix(f"blk.{i}.attn_v.weight", weight(head_dim * n_head_kv, n_embd, n_embd ** -0.5))
        matrix(f"blk.{i}.attn_output.weight", weight(n_embd, n_embd, n_embd ** -0.5))
        norm(f"blk.{i}.ffn_norm.weight", n_embd)
        matrix(f"blk.{i}.ffn_gate.weight", weight(n_ff, n_embd, n_embd ** -0.5))
        matrix(f"blk.{i}.ffn_up.weight", weight(n_ff, n_embd, n_embd ** -0.5))
        matrix(f"blk.{i}.ffn_down.weight", weight(n_embd, n_ff, n_ff ** -0.5))
    norm("output_norm.weight", n_embd)
    matrix("output.weight", weight(n_vocab, n_embd, logit_scale * n_embd ** -0.5))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_tokenizer_folder(folder: str | Path) -> Path:
    """A Hugging Face tokenizer folder (tokenizer.json, tokenizer_config.json) with the GGUF's own
    vocabulary, merges and chat template: byte-level BPE as llama.cpp's "gpt-2" pre-tokenizer
    reads it. For tools that count tokens with a local tokenizer (llama-benchy, `vllm bench
    serve`) against a llama-server on this GGUF. Written as JSON: the tokenizers package is not needed."""
    import json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tokens, types, merges = vocabulary()
    added = [{"id": tokens.index(t), "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for t in CONTROL_TOKENS]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges},
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>",
        "model_max_length": 4096, "chat_template": CHATML_TEMPLATE, "add_bos_token": False}), encoding="utf-8")
    return folder
