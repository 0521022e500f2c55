"""Real text for the prompts, from the packs' own data, one kind per workload.

Speculative decoding's gain depends on what is generated, so each workload is a kind of text
the packs hold, and each closes its prompt with a request for that kind of output:

| workload | the context (depth and the prompt's body) | the closing request |
|---|---|---|
| math | GSM8K test questions, then MATH-500 problems (offline: GSM8K alone) | a GSM8K question with the pack's template (step-by-step solution) |
| code | the programming subjects of C-Eval and CMMLU (questions with code) | an SVG pack prompt (write an SVG document) |
| prose | AGIEval reading passages (SAT, LSAT, Gaokao English and Chinese, LogiQA) | an AGIEval question with the pack's template (reasoned answer) |
| extract | the same passages | copy the last passage word for word (output that repeats the input) |

The packs load through their own loaders (tasks/), from `--data-dir` or where the pack reads
by default; a workload whose pack data cannot be read is a usage error that names the pack.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .endpoint import UsageError

EXTRACT_TASK = ("Copy the last passage of the text above word for word, from its first sentence to its last, "
                "without any comment.")
PROSE_SUBSETS = ("sat-en", "lsat-rc", "gaokao-english", "logiqa-en", "gaokao-chinese", "logiqa-zh")
CODE_SUBSETS = {"ceval": ("college_programming", "computer_architecture", "computer_network", "operating_system"),
                "cmmlu": ("computer_science", "computer_security", "machine_learning")}


@dataclass(frozen=True)
class Corpus:
    """A workload's text: passages to fill the context with, in order, and the closing prompts."""
    workload: str
    passages: tuple[str, ...]
    tasks: tuple[str, ...]
    source: str


def _load(pack_name: str, data_dir: Path | None, subsets: tuple[str, ...] = ()):
    from ..tasks import get_pack
    from ..tasks.pack import LoadOptions

    pack = get_pack(pack_name)
    try:
        return pack, pack.load(LoadOptions(data_dir=data_dir, subsets=subsets))
    except Exception as e:   # a missing folder, no network for the hub, a bad file: all the same to the user
        where = f"--data-dir {data_dir}" if data_dir else "the hub (no --data-dir)"
        raise UsageError(f"the speed prompts read the {pack_name} pack's data from {where}, which failed: "
                         f"{type(e).__name__}: {str(e)[:300]}; give --data-dir with the packs' files "
                         f"(laid out like shared/data)") from None


def _user_text(pack, item) -> str:
    messages = pack.prompt(item)
    return "\n\n".join(m["content"] for m in messages if m.get("role") != "system")


def _with_choices(item) -> str:
    if not item.choices:
        return item.question
    return item.question + "\n" + "\n".join(f"{'ABCDEFGH'[n]}. {c}" for n, c in enumerate(item.choices))


def math_corpus(data_dir: Path | None) -> Corpus:
    gsm8k, questions = _load("gsm8k", data_dir)
    try:
        _, problems = _load("math500", data_dir)
    except UsageError:
        if data_dir is not None:
            raise
        # offline without a data folder: GSM8K's file ships in the package (66k tokens of questions)
        return Corpus("math", tuple(i.question for i in questions), tuple(_user_text(gsm8k, i) for i in questions),
                      "gsm8k test (the package's copy; MATH-500 not reachable without --data-dir)")
    return Corpus("math", tuple(i.question for i in questions) + tuple(i.question for i in problems),
                  tuple(_user_text(gsm8k, i) for i in questions), "gsm8k test, math500 test")


def code_corpus(data_dir: Path | None) -> Corpus:
    passages = []
    for pack_name, subsets in CODE_SUBSETS.items():
        _, items = _load(pack_name, data_dir, subsets)
        passages += [_with_choices(i) for i in items]
    svg, prompts = _load("svg", data_dir)
    return Corpus("code", tuple(passages), tuple(_user_text(svg, i) for i in prompts),
                  "ceval/cmmlu programming subjects, svg prompts")


def _passages(data_dir: Path | None):
    agieval, items = _load("agieval", data_dir, PROSE_SUBSETS)
    # the subsets interleaved, so a long context mixes them as the first few passages do
    by_subset: dict[str, list] = {}
    for item in items:
        by_subset.setdefault(item.subset, []).append(item)
    order = []
    for n in range(max(len(v) for v in by_subset.values())):
        order += [v[n] for v in by_subset.values() if n < len(v)]
    return agieval, order


def prose_corpus(data_dir: Path | None) -> Corpus:
    agieval, items = _passages(data_dir)
    return Corpus("prose", tuple(i.question for i in items), tuple(_user_text(agieval, i) for i in items),
                  "agieval reading passages")


def extract_corpus(data_dir: Path | None) -> Corpus:
    _, items = _passages(data_dir)
    return Corpus("extract", tuple(i.question for i in items), (EXTRACT_TASK,), "agieval reading passages")


CORPORA: dict[str, Callable[[Path | None], Corpus]] = {
    "math": math_corpus, "code": code_corpus, "prose": prose_corpus, "extract": extract_corpus}


def corpus(workload: str, data_dir: Path | None) -> Corpus:
    return CORPORA[workload](data_dir)
