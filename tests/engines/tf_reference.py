"""Teacher-forced KL computed independently with transformers (run in an engine venv with torch):
reads JSON {model, k, items: [{id, messages, gen, top_ids, top_lps}]} on stdin, prints
{id: mean KL} with the candidate's full distribution from the model itself, lumped as
evalsuite/lossless/drift.py says (the tokens both the baseline's top-K and the candidate's
top-K plus the scored token name, one rest bucket)."""
import json
import math
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

job = json.load(sys.stdin)
tok = AutoTokenizer.from_pretrained(job["model"])
model = AutoModelForCausalLM.from_pretrained(job["model"], torch_dtype=torch.float32).eval()
k = job["k"]
out = {}
for item in job["items"]:
    prompt = tok.apply_chat_template(item["messages"], add_generation_prompt=True, tokenize=True)
    if isinstance(prompt, dict) or hasattr(prompt, "input_ids"):
        prompt = list(prompt["input_ids"])
    ids = list(prompt) + item["gen"]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    lps = torch.log_softmax(logits, dim=-1)
    kls = []
    for t, g in enumerate(item["gen"]):
        row = lps[len(prompt) + t - 1]
        listed = set(torch.topk(row, k).indices.tolist()) | {g}
        p = {int(i): float(v) for i, v in zip(item["top_ids"][t], item["top_lps"][t])}
        common = [i for i in p if i in listed]
        pc = [math.exp(p[i]) for i in common]
        qc = [math.exp(float(row[i])) for i in common]
        kl = sum(a * math.log(a / b) for a, b in zip(pc, qc))
        p_rest, q_rest = max(1 - sum(pc), 0.0), max(1 - sum(qc), 1e-10)
        if p_rest > 0:
            kl += p_rest * math.log(p_rest / q_rest)
        kls.append(max(kl, 0.0))
    out[item["id"]] = sum(kls) / len(kls)
print(json.dumps(out))
