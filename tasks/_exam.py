"""Helpers shared by the exam packs (agieval, ceval, cmmlu) and their presets.

Reading: local files (a data folder) with the standard library's json and csv readers,
like every pack (tasks/_data.py: exact for these formats, offline, and without the ~1.5
CPU-seconds of importing `datasets`); pinned URLs online through HF `datasets` ("json" /
"csv" builders), whose Arrow cache goes to a temporary folder removed before the loader
returns. Either way every cell comes back as the file's text: the tests compare both.
Choosing: subsets by name or group, then a seeded stratified subsample (tasks.pack.seeded_sample).
Grading: graders.grade(gold, answer, kind="choice", choices=...), which reads the letters with
graders.choice.extract_choice and compares them as a set.
"""
from __future__ import annotations

import contextlib
import tempfile
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..graders import grade
from ..graders.verdict import Verdict
from .pack import BadDataError, Item, seeded_sample, skip_row

LETTERS = "ABCDEFGHIJ"


# --- reading files through datasets --------------------------------------------------------

@contextlib.contextmanager
def _datasets_cache() -> Iterator[str]:
    import datasets  # heavy: imported only when a pack loads

    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    with tempfile.TemporaryDirectory(prefix="evalsuite-datasets-") as cache_dir:
        yield cache_dir


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://", "hf://"))


def read_jsonl(location: str) -> list[dict[str, Any]]:
    """The rows of one JSON-lines file (path or URL), in file order."""
    if not _is_url(location):
        from pathlib import Path

        from ._data import read_jsonl as read_local_jsonl
        if not Path(location).is_file():
            raise BadDataError(f"{location}: file not found")
        return read_local_jsonl(Path(location))
    _raise_if_offline(location, timeout=3.0)   # at once, before `datasets` retries for half a minute
    import datasets

    with _datasets_cache() as cache_dir:
        try:
            table = datasets.load_dataset("json", data_files=location, split="train", cache_dir=cache_dir)
        except Exception as exc:
            _raise_if_offline(location)
            if isinstance(exc, FileNotFoundError):
                raise BadDataError(f"{location}: file not found") from exc
            raise BadDataError(f"{location}: cannot read as JSON lines: {_root_cause(exc)}") from exc
        return table.to_list()


_REACHED: set[tuple[str | None, int | None]] = set()   # hosts found reachable in this process


def _raise_if_offline(location: str, timeout: float = 5.0) -> None:
    from urllib.parse import urlsplit

    from ._data import OFFLINE_HINT, unreachable

    parts = urlsplit(location)
    host = (parts.hostname, parts.port)
    if host in _REACHED:
        return
    offline = unreachable(location, timeout=timeout)
    if offline:
        raise BadDataError(f"{offline}: cannot download {location}; {OFFLINE_HINT}") from None
    _REACHED.add(host)


def read_csv_files(locations: Mapping[str, str], columns: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    """key -> rows of each CSV file, every cell a string ("" for empty, never NaN, never 0.5 for "0.50").

    Only `columns` are read (the CMMLU index column and C-Eval explanations are not); a file
    without one of them is a BadDataError naming it. One builder call reads all files.
    """
    if not any(_is_url(loc) for loc in locations.values()):
        return {key: _read_local_csv(loc, columns) for key, loc in locations.items()}
    _raise_if_offline(next(loc for loc in locations.values() if _is_url(loc)), timeout=3.0)
    import datasets
    from datasets import Features, Value

    features = Features({name: Value("string") for name in columns})
    # split names must be identifiers: subjects like "gaokao-history" are keyed by position
    split_of = {key: f"f{i}" for i, key in enumerate(locations)}
    with _datasets_cache() as cache_dir:
        def load(files: Mapping[str, str]) -> Any:
            return datasets.load_dataset("csv", data_files=dict(files), cache_dir=cache_dir,
                                         usecols=list(columns), features=features, na_filter=False)
        try:
            tables = load({split_of[key]: loc for key, loc in locations.items()})
        except Exception:
            _raise_if_offline(next(loc for loc in locations.values() if _is_url(loc)))
            _raise_for_first_bad_csv(locations, load)
            raise
        return {key: tables[split_of[key]].to_list() for key in locations}


def _read_local_csv(location: str, columns: Sequence[str]) -> list[dict[str, str]]:
    import csv
    from pathlib import Path

    if not Path(location).is_file():
        raise BadDataError(f"{location}: file not found")
    try:
        # newline="": csv handles CRLF and line breaks inside quoted fields (C-Eval has both)
        with open(location, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise BadDataError(f"{location}: cannot read as CSV: no column(s) {missing} "
                                   f"(header: {reader.fieldnames})")
            return [{c: (row.get(c) or "") for c in columns} for row in reader]
    except (UnicodeDecodeError, csv.Error) as exc:
        raise BadDataError(f"{location}: cannot read as CSV: {type(exc).__name__}: {exc}") from None


def _raise_for_first_bad_csv(locations: Mapping[str, str], load: Any) -> None:
    """Read the files one by one to name the one the builder choked on."""
    for location in locations.values():
        try:
            load({"f0": location})
        except FileNotFoundError as exc:
            raise BadDataError(f"{location}: file not found") from exc
        except Exception as exc:
            raise BadDataError(f"{location}: cannot read as CSV: {_root_cause(exc)}") from exc


def _root_cause(exc: BaseException) -> str:
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


def clean_text(value: Any) -> str:
    """A cell as text with LF line ends (C-Eval quotes CRLF inside fields)."""
    if value is None:
        return ""
    return str(value).replace("\r\n", "\n").replace("\r", "\n").strip()


def bad_row(location: str, index: int, why: str) -> BadDataError:
    return BadDataError(f"{location}: row {index}: {why}")


# --- gold letters ----------------------------------------------------------------------------

def parse_gold_letters(raw: Any, n_choices: int) -> str | None:
    """"C", ["B"], "AD", "A B D", "A C" -> sorted letters; None when unusable."""
    if isinstance(raw, list):
        raw = "".join(str(x) for x in raw) if all(isinstance(x, str) for x in raw) else None
    if not isinstance(raw, str):
        return None
    letters = raw.replace(" ", "").replace(",", "").replace("、", "").strip().upper()
    valid = LETTERS[:n_choices]
    if not letters or any(c not in valid for c in letters) or len(set(letters)) != len(letters):
        return None
    return "".join(sorted(letters))


# --- choosing items -----------------------------------------------------------------------------

def select_subsets(pack: str, requested: Sequence[str], valid: Sequence[str],
                   groups: Mapping[str, Sequence[str]] = {}) -> list[str]:
    """Requested names (and group names, expanded) in request order; all when none requested."""
    if not requested:
        return list(valid)
    chosen: list[str] = []
    unknown: list[str] = []
    for name in requested:
        for subset in groups.get(name, [name]):
            if subset not in valid:
                unknown.append(subset)
            elif subset not in chosen:
                chosen.append(subset)
    if unknown:
        names = ", ".join(list(valid) + [f"{g} (group)" for g in groups])
        raise BadDataError(f"{pack}: unknown subset(s) {', '.join(unknown)}; valid: {names}")
    return chosen


def sample_per_subset(items: Sequence[Item], per_subset: int | None, seed: int) -> list[Item]:
    """N items of each subset chosen by seeded_sample over their ids, kept in file order."""
    if per_subset is None:
        return list(items)
    if per_subset < 1:
        raise BadDataError(f"--per-subset must be at least 1, got {per_subset}")
    by_subset: dict[str, list[str]] = {}
    for item in items:
        by_subset.setdefault(item.subset, []).append(item.id)
    chosen = {i for ids in by_subset.values() for i in seeded_sample(ids, per_subset, seed)}
    return [item for item in items if item.id in chosen]


def allocate(total: int, sizes: Mapping[str, int], seed: int) -> dict[str, int]:
    """Split `total` items over subsets as evenly as their sizes allow.

    Every subset gets total // len(sizes) (capped at its size); the rest go one each to the
    subsets first in seeded_sample(subset names, seed) order that still have items, repeated
    until `total` is reached. The same on any machine, like seeded_sample.
    """
    if total > sum(sizes.values()):
        raise BadDataError(f"cannot choose {total} items from {sum(sizes.values())}")
    base = total // len(sizes)
    quota = {name: min(base, size) for name, size in sizes.items()}
    order = seeded_sample(list(sizes), len(sizes), seed)
    while sum(quota.values()) < total:
        for name in order:
            if sum(quota.values()) == total:
                break
            if quota[name] < sizes[name]:
                quota[name] += 1
    return quota


# --- prompts and grading -------------------------------------------------------------------

def format_options(choices: Sequence[str]) -> str:
    return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(choices))


def fewshot_messages(examples: Sequence[tuple[str, str]], answer_line: str) -> list[dict[str, str]]:
    """Earlier turns: each dev question as the user, its answer line as the assistant."""
    messages: list[dict[str, str]] = []
    for user_text, letter in examples:
        messages.append({"role": "user", "content": user_text})
        messages.append({"role": "assistant", "content": answer_line.format(letter=letter)})
    return messages


def grade_choice(item: Item, answer_text: str) -> Verdict:
    """Letters read from the answer versus the gold letters, as sets ("DA" equals "AD"),
    through the one grading entry point; no letter or an ambiguous one is undecided."""
    return grade(item.gold, answer_text or "", kind="choice", choices=item.choices)


def grade_cloze(item: Item, answer_text: str) -> Verdict:
    """Fill-in-the-blank items go to the math grader."""
    from ..graders import grade_math  # sympy and the grading rules: imported when a cloze item is graded

    return grade_math(item.gold, answer_text or "")


def rename(item: Item, pack: str) -> Item:
    """The item as a member of a multi-pack preset: "<pack>/<id>", subset "<pack>/<subset>"."""
    return replace(item, id=f"{pack}/{item.id}", subset=f"{pack}/{item.subset}",
                   meta={**item.meta, "pack": pack, "inner_id": item.id, "inner_subset": item.subset})


def unwrap(item: Item) -> tuple[str, Item]:
    """Undo rename(): the pack name and the item as that pack made it."""
    meta = dict(item.meta)
    pack = meta.pop("pack")
    inner = replace(item, id=meta.pop("inner_id"), subset=meta.pop("inner_subset"), meta=meta)
    return pack, inner


# --- Chinese subject exams (ceval, cmmlu): one CSV per subject, four options, one letter ---

@dataclass(frozen=True)
class SubjectExam:
    """A pack of four-option questions kept as one CSV file per subject: the question split
    to ask, a dev split for few-shot examples, and a prompt naming the subject in Chinese.
    The pack file gives its subjects, prompt, column names and where each file lives."""

    name: str
    subjects: Mapping[str, tuple[str, str]]         # subject -> (Chinese name, category)
    prompt_text: str                                # {subject}, {question}, {options}
    answer_line: str                                # the assistant turn of a few-shot example
    question_column: str
    answer_column: str
    split: str                                      # the split whose rows are the items
    location: Callable[[Any, str, str], str]        # (LoadOptions, split, subject) -> path or URL
    dev_per_subject: int = 5

    @property
    def columns(self) -> list[str]:
        return [self.question_column, "A", "B", "C", "D", self.answer_column]

    def user_text(self, subject: str, question: str, choices: tuple[str, ...]) -> str:
        return self.prompt_text.format(subject=self.subjects[subject][0], question=question,
                                       options=format_options(choices))

    def prompt(self, item: Item) -> list[dict[str, str]]:
        shots = fewshot_messages(item.meta.get("fewshot", ()), self.answer_line)
        return shots + [{"role": "user", "content": self.user_text(item.subset, item.question, item.choices)}]

    def row(self, index: int, row: Mapping[str, str], location: str) -> tuple[str, tuple[str, ...], str]:
        """(question, the four options, the gold letter) of one CSV row, or BadDataError naming it."""
        question = clean_text(row[self.question_column])
        choices = tuple(clean_text(row[letter]) for letter in "ABCD")
        gold = parse_gold_letters(clean_text(row[self.answer_column]), len(choices))
        if not question:
            raise bad_row(location, index, "empty question")
        if gold is None or len(gold) != 1:
            raise bad_row(location, index, f"{self.answer_column} {row[self.answer_column]!r:.40} is not one of A-D")
        return question, choices, gold

    def fewshot(self, opts: Any, subjects: Sequence[str]) -> dict[str, tuple[tuple[str, str], ...]]:
        """The first K dev rows of each subject as (user text, gold letter)."""
        if opts.fewshot > self.dev_per_subject:
            raise BadDataError(f"{self.name}: the dev split has {self.dev_per_subject} examples per subject; "
                               f"--fewshot {opts.fewshot} asks for more")
        locations = {s: self.location(opts, "dev", s) for s in subjects}
        tables = read_csv_files(locations, self.columns)
        shots = {}
        for subject, rows in tables.items():
            examples = []
            for index, row in enumerate(rows[: opts.fewshot]):
                question, choices, gold = self.row(index, row, locations[subject])
                examples.append((self.user_text(subject, question, choices), gold))
            shots[subject] = tuple(examples)
        return shots

    def load(self, opts: Any) -> list[Item]:
        subjects = select_subsets(self.name, opts.subsets, sorted(self.subjects))
        locations = {s: self.location(opts, self.split, s) for s in subjects}
        tables = read_csv_files(locations, self.columns)
        shots = self.fewshot(opts, subjects) if opts.fewshot else {}
        items: list[Item] = []
        for subject in subjects:
            for index, row in enumerate(tables[subject]):
                try:
                    question, choices, gold = self.row(index, row, locations[subject])
                except BadDataError as e:
                    if not opts.skip_bad_rows:
                        raise
                    skip_row(opts, f"{locations[subject]}: row {index}", str(e))
                    continue
                meta = {"lang": "zh", "kind": "choice", "fewshot": shots.get(subject, ())}
                items.append(Item(id=f"{subject}/{index}", subset=subject, question=question, gold=gold,
                                  choices=choices, meta=meta))
        return sample_per_subset(items, opts.per_subset, opts.seed)
