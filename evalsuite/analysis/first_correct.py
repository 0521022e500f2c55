"""Tokens to the first correct answer inside the reasoning: found later, or checked longer?

When one run (a lower quant, another engine) writes more reasoning tokens than another for the
same correct answers, the extra tokens come either before the answer first appears in the
reasoning (it took longer to find it) or after it (it kept checking). Read from the stored
records alone, with the pack's own grader:

- The reasoning is cut at line ends and sentence ends (a run of newlines; whitespace after
  `.`, `!`, `?`); each prefix, in order, is graded as if it were the answer. The first prefix
  graded correct is where the answer was first found. A model's intermediate result equal to
  the gold counts as found: this is the grader's reading, not an oracle's.
- Bounded: at most MAX_PREFIXES grader calls per item (with more boundaries, every k-th is
  graded and the k − 1 before the first hit are then graded to pin it down) and
  MAX_SECONDS_PER_ITEM of grading per item; a search cut short says so (`bound`).
- Token position: from the item's stored token stream when there is one (`--logprobs`): the
  reasoning tokens up to the prefix's last character, as the server sent them. Otherwise
  estimated: the prefix's share of the reasoning characters × the reasoning tokens (the
  server's usage.reasoning_tokens, else derived as compare derives it), and said so.

`compare --first-correct` prints it per run and pair; docs/compare.md gives the rule.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

from .stats import median

MAX_PREFIXES = 200
MAX_SECONDS_PER_ITEM = 2.0
MAX_SECONDS_PER_RUN = 120.0

_BOUNDARY = re.compile(r"\n+|(?<=[.!?])[ \t]+")


def boundaries(text: str) -> list[int]:
    """End offsets of the prefixes graded: after each line end and each sentence end, and the
    whole text last."""
    ends = [m.end() for m in _BOUNDARY.finditer(text)]
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    return [e for e in ends if e > 0]


@dataclass(frozen=True)
class Search:
    offset: int | None          # end of the first prefix graded correct; None: not found
    graded: int                 # grader calls made
    bound: str | None           # "time" when the search stopped before the end; None otherwise
    step: int                   # 1: every boundary graded in order; k: every k-th first


def first_correct_offset(text: str, is_correct: Callable[[str], bool], *, max_prefixes: int = MAX_PREFIXES,
                         max_seconds: float = MAX_SECONDS_PER_ITEM,
                         clock: Callable[[], float] = time.monotonic) -> Search:
    """The first boundary of `text` whose prefix `is_correct` accepts (pure but for the clock)."""
    ends = boundaries(text)
    step = max(1, math.ceil(len(ends) / max_prefixes))
    coarse = list(range(step - 1, len(ends), step))
    if coarse and coarse[-1] != len(ends) - 1:
        coarse.append(len(ends) - 1)
    start, graded, previous = clock(), 0, -1
    for index in coarse:
        if clock() - start > max_seconds:
            return Search(None, graded, "time", step)
        graded += 1
        if is_correct(text[:ends[index]]):
            # pin it down among the boundaries skipped since the last coarse one
            for fine in range(previous + 1, index):
                if clock() - start > max_seconds:
                    break
                graded += 1
                if is_correct(text[:ends[fine]]):
                    return Search(ends[fine], graded, None, 1)
            return Search(ends[index], graded, None, step)
        previous = index
    return Search(None, graded, None, step)


def stream_reasoning_tokens(entries: Sequence[Mapping[str, Any]] | None, reasoning: str,
                            offset: int) -> tuple[int, int] | None:
    """(tokens up to `offset` of the reasoning, reasoning tokens in all) from a stored token
    stream, or None when the stream's reasoning text does not line up with the record's."""
    if not entries:
        return None
    texts = [str(e.get("token") or "") for e in entries if e.get("part") == "reasoning"]
    if not texts:
        return None
    joined = "".join(texts)
    head = reasoning[:64]
    shift = joined.find(head) if head else 0
    if shift < 0:
        return None
    target, seen = shift + offset, 0
    for n, t in enumerate(texts, 1):
        seen += len(t)
        if seen >= target:
            return n, len(texts)
    return None


@dataclass(frozen=True)
class FirstCorrect:
    """One record's first correct answer inside its reasoning."""

    id: str
    found: bool
    char_offset: int | None
    reasoning_chars: int
    tokens_to_first: float | None
    reasoning_tokens: float | None
    token_source: str            # "token stream" or "estimated: ..."
    graded: int
    bound: str | None
    step: int

    @property
    def tokens_after(self) -> float | None:
        if self.tokens_to_first is None or self.reasoning_tokens is None:
            return None
        return max(0.0, self.reasoning_tokens - self.tokens_to_first)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tokens_after": self.tokens_after}


def first_correct(record: Mapping[str, Any], grade: Callable[[str], bool],
                  entries: Sequence[Mapping[str, Any]] | None = None, *, max_prefixes: int = MAX_PREFIXES,
                  max_seconds: float = MAX_SECONDS_PER_ITEM) -> FirstCorrect | None:
    """None when the record has no reasoning. `grade(text)`: the pack's grader on a prefix."""
    from .run_stats import reasoning_tokens_of

    reasoning = record.get("reasoning") or ""
    if not reasoning.strip():
        return None
    search = first_correct_offset(reasoning, grade, max_prefixes=max_prefixes, max_seconds=max_seconds)
    tokens = total = None
    source = "none"
    counted = stream_reasoning_tokens(entries, reasoning, search.offset or len(reasoning))
    if counted is not None:
        source = "token stream"
        total = float(counted[1])
        tokens = float(counted[0]) if search.offset is not None else None
    else:
        given, how = reasoning_tokens_of(record)
        if given is not None:
            total = given
            basis = "server usage.reasoning_tokens" if how == "server" else "reasoning tokens derived from the text"
            source = f"estimated: the prefix's share of the reasoning characters × {basis}"
            if search.offset is not None:
                tokens = given * search.offset / len(reasoning)
    return FirstCorrect(id=str(record.get("id")), found=search.offset is not None, char_offset=search.offset,
                        reasoning_chars=len(reasoning), tokens_to_first=tokens, reasoning_tokens=total,
                        token_source=source, graded=search.graded, bound=search.bound, step=search.step)


def pack_grader(run: Any) -> Callable[[Mapping[str, Any]], Callable[[str], bool]]:
    """For one record, `text -> the pack's grader says correct` (the item rebuilt from the
    record, as `evalsuite regrade` does). A grader that raises on a prefix counts as not correct."""
    from evalsuite.tasks import get_pack

    from .regrade import item_from_record

    pack = get_pack(run.manifest.get("pack"))

    def for_record(record: Mapping[str, Any]) -> Callable[[str], bool]:
        item = item_from_record(dict(record), run.manifest.get("pack"))

        def is_correct(text: str) -> bool:
            try:
                return pack.grade(item, text).equal is True
            except Exception:   # noqa: BLE001 - a prefix the grader cannot read is simply not an answer
                return False
        return is_correct
    return for_record


@dataclass(frozen=True)
class RunFirstCorrect:
    found: dict[str, FirstCorrect]   # by id: the run's correct records with reasoning that were searched
    skipped: int                     # left unsearched: the run's time bound ran out
    not_gradable: int                # the item could not be rebuilt from its record (an older record)
    unavailable: str | None = None   # why nothing could be searched (the pack is unknown here)


def first_correct_run(run: Any, ids: Sequence[str], *, max_seconds_total: float = MAX_SECONDS_PER_RUN,
                      clock: Callable[[], float] = time.monotonic) -> RunFirstCorrect:
    """First-correct results of the run's correct records with reasoning among `ids`."""
    try:
        grader_for = pack_grader(run)
    except Exception as e:   # noqa: BLE001 - an unknown or broken pack: say so, compare goes on
        return RunFirstCorrect({}, 0, 0, unavailable=f"the pack's grader cannot be loaded ({e})")
    by_id = run.by_id
    out: dict[str, FirstCorrect] = {}
    start, skipped, not_gradable = clock(), 0, 0
    for i in ids:
        record = by_id.get(i)
        if record is None or record.get("outcome") != "correct" or not (record.get("reasoning") or "").strip():
            continue
        if clock() - start > max_seconds_total:
            skipped += 1
            continue
        try:
            grade = grader_for(record)
        except ValueError:   # a record too old to rebuild its item (no option texts)
            not_gradable += 1
            continue
        try:
            entries = run.logprobs(record)
        except Exception:   # noqa: BLE001 - a token stream that cannot be read: estimate instead
            entries = None
        result = first_correct(record, grade, entries)
        if result is not None:
            out[i] = result
    return RunFirstCorrect(out, skipped, not_gradable)


@dataclass(frozen=True)
class FirstCorrectPair:
    """Run B against run A on the items both got right and both found in their reasoning."""

    a: str
    b: str
    n: int
    first_a: float | None        # median reasoning tokens to the first correct answer
    first_b: float | None
    after_a: float | None        # median reasoning tokens after it
    after_b: float | None
    extra_before: float | None   # mean per item, B − A, before the first correct answer
    extra_after: float | None    # mean per item, B − A, after it
    estimated: bool              # some token positions were estimated from characters

    def words(self) -> str:
        if not self.n:
            return f"{self.b} vs {self.a}: no item both got right with the answer found in both reasonings"
        head = (f"{self.b} vs {self.a} on {self.n} items both got right: first correct answer after a median "
                f"{self.first_b:,.0f} vs {self.first_a:,.0f} reasoning tokens, then {self.after_b:,.0f} vs "
                f"{self.after_a:,.0f} tokens more")
        extra = (self.extra_before or 0.0) + (self.extra_after or 0.0)
        if abs(extra) < 1:
            return head + "; the same reasoning length"
        before_share = (self.extra_before or 0.0) / extra
        which = ("found the answer later" if before_share >= 0.5 else "checked it longer")
        more = "more" if extra > 0 else "fewer"
        return (head + f"; of {self.b}'s {abs(extra):,.0f} {more} reasoning tokens per item, "
                f"{100 * before_share:.0f}% come before its first correct answer and {100 * (1 - before_share):.0f}% "
                f"after it: it mostly {which}" + (" (token positions partly estimated)" if self.estimated else ""))


def pair_first_correct(a_name: str, b_name: str, a: Mapping[str, FirstCorrect],
                       b: Mapping[str, FirstCorrect]) -> FirstCorrectPair:
    both = [i for i in a if i in b and a[i].found and b[i].found
            and a[i].tokens_after is not None and b[i].tokens_after is not None]
    n = len(both)
    first_a = [a[i].tokens_to_first for i in both]
    first_b = [b[i].tokens_to_first for i in both]
    after_a = [a[i].tokens_after for i in both]
    after_b = [b[i].tokens_after for i in both]
    return FirstCorrectPair(
        a=a_name, b=b_name, n=n, first_a=median(first_a), first_b=median(first_b),
        after_a=median(after_a), after_b=median(after_b),
        extra_before=(sum(first_b) - sum(first_a)) / n if n else None,
        extra_after=(sum(after_b) - sum(after_a)) / n if n else None,
        estimated=any(x[i].token_source != "token stream" for x in (a, b) for i in both))
