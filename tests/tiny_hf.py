"""Writes a tiny Hugging Face Llama model (config, safetensors, tokenizer, chat template) without
the hub, for real vLLM and `transformers serve` servers in tests.

    <engine venv>/bin/python tests/tiny_hf.py OUT_DIR [--perturb 0.5] [--seed 0]

Needs torch, transformers and tokenizers, so it runs in an engine's own environment (the
project's does not have them): tests call it as a subprocess. It prints a JSON summary of a
greedy check on its last line.

Why it is built by hand instead of left random: with random weights greedy text never repeats,
so n-gram speculation never drafts, and random logits have near ties everywhere. Here

- the hidden size 128 is split into a token subspace (dims 0-95, where token embeddings live)
  and a context subspace (dims 96-127, the only place attention and MLP outputs write to);
- the output layer maps each token's embedding direction to a fixed successor token with a
  logit of ALPHA, so after the first generated token the text follows short cycles (3-6 tokens)
  that n-gram speculation drafts and that a draft verifies, with a top-1/top-2 gap of several
  nats that float noise cannot flip;
- the last prompt token of the chat template ("\\n") has a zero embedding, so the first
  generated token is chosen from the context subspace alone, by attention over the prompt:
  different questions start different cycles, so answers differ between items;
- two cycles spell multi-byte characters (é € 😀 ж 中) byte by byte, so the servers meet tokens
  that are partial UTF-8.

`perturb` multiplies every weight by (1 + perturb * noise): the first token moves for some items
(a real divergence), and items whose first token stays put remain byte-identical.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HIDDEN, TOKEN_DIMS = 128, 96
N_HEADS, N_LAYERS, FFN = 4, 2, 256
VOCAB_SIZE = 400
ALPHA = 16.0   # successor logit
GAMMA = 6.0    # scale of the context-chosen first-token logits
QK_SCALE = 2.0  # sharp attention: each question's own tokens steer its first answer token
O_SCALE, DOWN_SCALE = 0.15, 0.1  # keep the context small beside a token's own embedding
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
# Characters spelled byte by byte (kept out of the training text, so no merge joins their bytes).
# Two cycles carry them, between ordinary tokens; no two characters share a byte (each byte token
# has one successor).
MULTIBYTE = [["é", "€"], ["😀", "ж", "中"]]

CORPUS = """\
Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.
How many clips did Natalia sell altogether in April and May? Weng earns 12 dollars an hour for
babysitting. Yesterday, she just did 50 minutes of babysitting. How much did she earn? Betty is
saving money for a new wallet which costs 100 dollars. The answer is the number of apples left
in the basket after the farmer gives away a third of them and sells the rest at the market.
Solve the problem step by step and write the final answer after four hashes. Let x be the
total, then 3 times x plus 7 equals 22, so x equals 5. A train leaves the station at noon and
travels at 60 miles per hour; how far has it gone by three o'clock? Think about each step.
"""


def corpus_lines() -> list[str]:
    numbers = " ".join(str(n) for n in range(0, 200))
    return CORPUS.splitlines() * 4 + [numbers, "#### 42", "The answer is 18."]


def build_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(corpus_lines(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   bos_token=None, unk_token=None)
    fast.chat_template = CHAT_TEMPLATE
    return fast


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character mapping (the ByteLevel alphabet)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def _byte_token_ids(fast) -> dict[int, int]:
    """byte value -> id of the single-byte token."""
    vocab = fast.get_vocab()
    return {b: vocab[ch] for b, ch in bytes_to_unicode().items()}


def _token_bytes(fast, token_id: int) -> bytes:
    decoder = {ch: b for b, ch in bytes_to_unicode().items()}
    return bytes(decoder[ch] for ch in fast.convert_ids_to_tokens(token_id))


def successor_cycles(fast, rng) -> tuple[list[list[int]], set[int], int]:
    """Cycles covering every startable token, plus one per multi-byte character.
    Returns (cycles, startable ids, newline id)."""
    vocab_n = len(fast)
    special = {fast.convert_tokens_to_ids(t) for t in SPECIAL}
    byte_ids = _byte_token_ids(fast)
    newline = byte_ids[ord("\n")]
    startable = []
    for tid in range(vocab_n):
        if tid in special or tid == newline:
            continue
        raw = _token_bytes(fast, tid)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text.strip() and text.isprintable() and "#" not in text:
            startable.append(tid)
    order = list(rng.permutation(startable))
    cycles: list[list[int]] = []
    for chars in MULTIBYTE:
        cycle = []
        for char in chars:
            cycle += [order.pop(), order.pop(), *(byte_ids[b] for b in char.encode("utf-8"))]
        cycles.append(cycle + [order.pop()])
    while order:
        n = int(rng.integers(3, 7))
        if len(order) - n < 3:
            n = len(order)
        cycles.append([order.pop() for _ in range(n)])
    return cycles, set(int(t) for t in startable), newline


def build_model(fast, seed: int, perturb: float):
    import numpy as np
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    rng = np.random.default_rng(seed)
    vocab_n = len(fast)
    cfg = LlamaConfig(vocab_size=vocab_n, hidden_size=HIDDEN, intermediate_size=FFN, num_hidden_layers=N_LAYERS,
                      num_attention_heads=N_HEADS, num_key_value_heads=N_HEADS, max_position_embeddings=2048,
                      rms_norm_eps=1e-5, tie_word_embeddings=False, torch_dtype="float32",
                      eos_token_id=fast.convert_tokens_to_ids("<|im_end|>"),
                      pad_token_id=fast.convert_tokens_to_ids("<|endoftext|>"), bos_token_id=None)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).to(torch.float32)
    ctx = slice(TOKEN_DIMS, HIDDEN)
    n_ctx = HIDDEN - TOKEN_DIMS

    def normal(*shape, scale=1.0):
        return torch.tensor(rng.standard_normal(shape), dtype=torch.float32) * scale

    cycles, startable, newline = successor_cycles(fast, rng)
    embed = torch.zeros(vocab_n, HIDDEN)
    embed[:, :TOKEN_DIMS] = normal(vocab_n, TOKEN_DIMS)
    embed[newline] = 0.0
    lm_head = torch.zeros(vocab_n, HIDDEN)
    for tid in startable:
        lm_head[tid, ctx] = normal(n_ctx, scale=GAMMA / n_ctx ** 0.5)
    # After the final RMSNorm a token position's state is ~ sqrt(HIDDEN) * its unit embedding.
    for cycle in cycles:
        for cur, nxt in zip(cycle, cycle[1:] + cycle[:1]):
            unit = embed[cur, :TOKEN_DIMS] / embed[cur, :TOKEN_DIMS].norm()
            lm_head[nxt, :TOKEN_DIMS] += ALPHA / HIDDEN ** 0.5 * unit

    with torch.no_grad():
        model.model.embed_tokens.weight.copy_(embed)
        model.lm_head.weight.copy_(lm_head)
        for layer in model.model.layers:
            att, mlp = layer.self_attn, layer.mlp
            att.q_proj.weight.copy_(normal(HIDDEN, HIDDEN, scale=QK_SCALE / HIDDEN ** 0.5))
            att.k_proj.weight.copy_(normal(HIDDEN, HIDDEN, scale=QK_SCALE / HIDDEN ** 0.5))
            att.v_proj.weight.copy_(normal(HIDDEN, HIDDEN, scale=1 / HIDDEN ** 0.5))
            o = torch.zeros(HIDDEN, HIDDEN)
            o[ctx] = normal(n_ctx, HIDDEN, scale=O_SCALE / HIDDEN ** 0.5)
            att.o_proj.weight.copy_(o)
            mlp.gate_proj.weight.copy_(normal(FFN, HIDDEN, scale=1 / HIDDEN ** 0.5))
            mlp.up_proj.weight.copy_(normal(FFN, HIDDEN, scale=1 / HIDDEN ** 0.5))
            down = torch.zeros(HIDDEN, FFN)
            down[ctx] = normal(n_ctx, FFN, scale=DOWN_SCALE / FFN ** 0.5)
            mlp.down_proj.weight.copy_(down)
        if perturb:
            noise = np.random.default_rng(seed + 1_000_003)
            for param in model.parameters():
                if param.dim() < 2:
                    continue
                # multiplicative: the zero blocks that keep tokens and context apart stay zero
                param.mul_(1 + torch.tensor(noise.standard_normal(tuple(param.shape)), dtype=torch.float32) * perturb)
    return model


PROMPTS = ["Natalia sold 48 clips in April and half as many in May. How many clips in all?",
           "What is 3 times 7?", "A train travels 60 miles per hour for 3 hours. How far does it go?",
           "Betty has 100 dollars and spends 25. How much is left?", "Solve 2x + 3 = 11.",
           "How many minutes are in 5 hours?", "Weng earns 12 dollars an hour. She works 50 minutes.",
           "If a farmer has 30 apples and gives away a third, how many remain?"]


def greedy_check(model, fast, steps: int = 48) -> dict:
    """Greedy-decode a few prompts with transformers: the smallest top-1/top-2 logit gap, how
    many first tokens differ, and whether the texts repeat (so n-gram drafts get accepted)."""
    import torch

    gaps, firsts, texts = [], set(), []
    for prompt in PROMPTS:
        ids = fast.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                       return_tensors="pt")
        if not isinstance(ids, torch.Tensor):
            ids = ids["input_ids"]
        out = []
        with torch.no_grad():
            for _ in range(steps):
                logits = model(ids).logits[0, -1]
                top = torch.topk(logits, 2)
                gaps.append(float(top.values[0] - top.values[1]))
                nxt = int(top.indices[0])
                out.append(nxt)
                ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
        firsts.add(out[0])
        texts.append(fast.decode(out))
    repeats = sum(1 for t in texts if len(t) > 8 and t[len(t) // 2:][:6] in t[:len(t) // 2])
    return {"min_gap": round(min(gaps), 3), "distinct_first_tokens": len(firsts), "prompts": len(PROMPTS),
            "repeating_texts": repeats, "sample": texts[0][:80]}


def write_tiny_hf(out: str | Path, seed: int = 0, perturb: float = 0.0, check: bool = True) -> dict:
    out = Path(out)
    fast = build_tokenizer()
    model = build_model(fast, seed=seed, perturb=perturb)
    model.generation_config.do_sample = False
    model.save_pretrained(out, safe_serialization=True)
    fast.save_pretrained(out)
    summary = {"vocab": len(fast), "seed": seed, "perturb": perturb}
    if check:
        summary.update(greedy_check(model, fast))
    (out / "tiny_hf.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--perturb", type=float, default=0.0)
    parser.add_argument("--no-check", action="store_true")
    args = parser.parse_args(argv)
    summary = write_tiny_hf(args.out, seed=args.seed, perturb=args.perturb, check=not args.no_check)
    print(json.dumps(summary, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
