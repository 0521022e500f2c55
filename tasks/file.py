"""A user's own questions as a pack: a local file (.jsonl, .json array, .csv, .parquet), a TOML
file naming one and how to read it, or a hub dataset (`hf:OWNER/NAME`).

    evalsuite run questions.jsonl
    evalsuite run questions.toml                 # fields / kind / template beside the data
    evalsuite run hf:OWNER/NAME --split test

Fields are found by name when not given: question (`question`, `problem`, `prompt`, `input`),
answer (`answer`, `gold`, `target`, `label`, `solution`), choices (`choices` / `options`, or
columns `A`, `B`, `C`, `D`, ...), subset (`subset`, `subject`, `category`, `topic`), id (`id`). Each item's
grading kind is the one named (`--kind`, or a `kind` field per row: `numeric`, `math`, `choice`,
`text`), else `choice` when it has options, else the graders' own inference from the gold. The pack is described completely by its
`spec` (fields, kind, template, the file's sha256 or the dataset's fingerprint), which the
manifest keeps: `regrade` rebuilds the same pack from the manifest alone, without the file.

Item ids are `<subset>/<row>` (row = 0-based position in the file) unless an id field is given,
so skipping a bad row leaves the other ids unchanged.
"""
from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..graders import grade
from ..graders.verdict import Verdict
from .pack import BadDataError, Item, LoadOptions, Pack, skip_row

SPEC_VERSION = 1
SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".toml")
KINDS = ("numeric", "math", "choice", "text")
LETTERS = "ABCDEFGHIJ"
MAX_ROWS = 1_000_000
MAX_FILE_BYTES = 2 << 30

QUESTION_NAMES = ("question", "problem", "prompt", "input", "query")
ANSWER_NAMES = ("answer", "gold", "target", "label", "solution", "output")
CHOICES_NAMES = ("choices", "options")
SUBSET_NAMES = ("subset", "subject", "category", "topic")
ID_NAMES = ("id",)
KIND_NAMES = ("kind",)
FIELD_KEYS = ("question", "answer", "choices", "subset", "id", "kind")

TEMPLATES = {
    "numeric": ("Solve the following problem step by step. At the end, write the final answer on its own line "
                "as \"The answer is N\", where N is a number.\n\n{question}"),
    "math": "Solve the following problem step by step. Put the final answer in \\boxed{}.\n\n{question}",
    "choice": ("{question}\n\n{choices}\n\nAnswer with the letter of the correct option, on the last line as "
               "\"The answer is X\"."),
    "text": "{question}\n\nAnswer briefly. End with the final answer on its own line as \"The answer is ...\".",
}


def is_file_pack(name: str) -> bool:
    """Whether a `run PACK` argument names a file or a hub dataset rather than a built-in pack."""
    return name.startswith("hf:") or name.lower().endswith(SUFFIXES)


@dataclass(frozen=True)
class FileOptions:
    """How to read the data: given on the command line, in a TOML file, or detected."""

    fields: Mapping[str, Any] = field(default_factory=dict)   # question/answer/choices/subset/id -> column
    kind: str | None = None
    template: str | None = None
    system: str | None = None
    split: str | None = None       # hub datasets
    config: str | None = None      # hub datasets
    max_tokens: int | None = None
    rounded_golds: bool | None = None   # the golds written with decimals are rounded values

    def merged(self, other: "FileOptions") -> "FileOptions":
        """`other` (the command line) over self (the TOML file)."""
        return FileOptions(fields={**dict(self.fields), **dict(other.fields)},
                           **{k: getattr(other, k) if getattr(other, k) is not None else getattr(self, k)
                              for k in ("kind", "template", "system", "split", "config", "max_tokens", "rounded_golds")})


def parse_fields(text: str | None) -> dict[str, Any]:
    """`question=q,answer=a,choices=A|B|C|D` -> {'question': 'q', 'answer': 'a', 'choices': ['A', ...]}."""
    out: dict[str, Any] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in FIELD_KEYS or not value:
            raise BadDataError(f"--fields: {part.strip()!r} is not KEY=COLUMN with KEY one of {', '.join(FIELD_KEYS)}")
        out[key] = value.split("|") if key == "choices" and "|" in value else value
    return out


# ----------------------------------------------------------------------------- reading rows

def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Row:
    where: str        # "line 17", "row 3" -- how a person finds it in the file
    index: int        # 0-based position among the rows: the item id's number
    data: Any


def read_rows(path: Path) -> list[Row]:
    suffix = path.suffix.lower()
    if not path.is_file():
        raise BadDataError(f"{path}: no such file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise BadDataError(f"{path}: larger than {MAX_FILE_BYTES >> 30} GiB")
    if suffix == ".jsonl":
        rows = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except json.JSONDecodeError as e:
                    data = BadDataError(f"not valid JSON ({e.msg})")
                rows.append(Row(f"line {n}", len(rows), data))
                if len(rows) > MAX_ROWS:
                    raise BadDataError(f"{path}: more than {MAX_ROWS} rows")
        return rows
    if suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise BadDataError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
        if isinstance(data, dict):  # {"data": [...]} or {"questions": [...]}: one list inside
            lists = [v for v in data.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise BadDataError(f"{path}: expected a JSON array of objects (or an object holding one array)")
            data = lists[0]
        if not isinstance(data, list):
            raise BadDataError(f"{path}: expected a JSON array of objects")
        return [Row(f"row {i} (0-based)", i, d) for i, d in enumerate(data[:MAX_ROWS + 1])]
    if suffix == ".csv":
        rows = []
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            start = 2
            for data in reader:
                # line_num is the last physical line of the row (quoted fields may span lines)
                rows.append(Row(f"line {start}", len(rows), dict(data)))
                start = reader.line_num + 1
        return rows
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        return [Row(f"row {i} (0-based)", i, d) for i, d in enumerate(table.to_pylist())]
    raise BadDataError(f"{path}: unknown file type {suffix!r}; expected one of .jsonl .json .csv .parquet .toml")


def read_hub_rows(hub_id: str, config: str | None, split: str) -> tuple[list[Row], str | None]:
    """Rows of a hub dataset (or a local dataset folder, `hf:./dir`) and the dataset's fingerprint."""
    from datasets import load_dataset  # lazy: only hub users pay for it

    from ._data import OFFLINE_HINT, unreachable

    try:
        dataset = load_dataset(hub_id, config, split=split)
    except Exception as e:
        if not Path(hub_id).exists():
            offline = unreachable("https://huggingface.co")
            if offline:
                raise BadDataError(f"could not load hf:{hub_id} from the hub: {offline}; "
                                   f"download it where there is a network and run the file itself "
                                   f"(evalsuite run FILE.jsonl), or {OFFLINE_HINT}") from None
        raise BadDataError(f"could not load hf:{hub_id}{'/' + config if config else ''} [{split}] "
                           f"({type(e).__name__}: {str(e)[:500]})") from None
    fingerprint = getattr(dataset, "_fingerprint", None)
    return [Row(f"row {i} (0-based)", i, dict(r)) for i, r in enumerate(dataset)], fingerprint


def read_toml(path: Path) -> tuple[Path | str, FileOptions]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise BadDataError(f"{path}: {e}") from None
    known = {"data", "fields", "kind", "template", "system", "split", "config", "max_tokens", "rounded_golds"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise BadDataError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    source = data.get("data")
    if not isinstance(source, str) or not source:
        raise BadDataError(f"{path}: needs data = \"questions.jsonl\" (a file beside it, or hf:OWNER/NAME)")
    fields = data.get("fields") or {}
    if not isinstance(fields, dict) or set(fields) - set(FIELD_KEYS):
        raise BadDataError(f"{path}: [fields] takes only {', '.join(FIELD_KEYS)}")
    opts = FileOptions(fields=fields, kind=data.get("kind"), template=data.get("template"),
                       system=data.get("system"), split=data.get("split"), config=data.get("config"),
                       max_tokens=data.get("max_tokens"), rounded_golds=data.get("rounded_golds"))
    if opts.rounded_golds not in (None, True, False):
        raise BadDataError(f"{path}: rounded_golds takes true or false")
    target: Path | str = source if source.startswith("hf:") else (path.parent / source)
    return target, opts


# ----------------------------------------------------------------------------- rows -> items

def _first(row: Mapping[str, Any], names: Sequence[str]) -> str | None:
    lowered = {str(k).lower(): k for k in row}
    for n in names:
        if n in lowered:
            return lowered[n]
    return None


def detect_fields(row: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Column names for each field: those given, else found by the usual names."""
    out = dict(given)
    for key, names in (("question", QUESTION_NAMES), ("answer", ANSWER_NAMES), ("subset", SUBSET_NAMES),
                       ("id", ID_NAMES), ("kind", KIND_NAMES)):
        if key not in out:
            found = _first(row, names)
            if found is not None:
                out[key] = found
    if "choices" not in out:
        found = _first(row, CHOICES_NAMES)
        if found is not None:
            out["choices"] = found
        else:
            letters = []
            for letter in LETTERS:
                if letter in row:
                    letters.append(letter)
                else:
                    break
            if len(letters) >= 2:
                out["choices"] = letters
    return out


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN from pandas/parquet
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _choices(row: Mapping[str, Any], spec: Any) -> tuple[str, ...]:
    if spec is None:
        return ()
    if isinstance(spec, (list, tuple)):
        values = [row.get(c) for c in spec]
        return tuple(t for t in (_text(v) for v in values) if t)
    value = row.get(spec)
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = json.loads(value)   # a CSV cell holding a JSON list
        except json.JSONDecodeError:
            raise ValueError(f"choices field {spec!r} is not a JSON list") from None
    if value is None or value == "":
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"choices field {spec!r} is not a list")
    return tuple(_text(v) or "" for v in value)


def _choice_gold(answer: str, choices: Sequence[str]) -> str:
    letters = LETTERS[: len(choices)]
    bare = answer.strip().strip("()").strip()
    if bare and all(c in letters for c in bare.replace(",", "").replace(" ", "")):
        return "".join(sorted(set(bare.replace(",", "").replace(" ", ""))))
    for letter, text in zip(letters, choices):
        if answer.strip() == text.strip():
            return letter
    raise ValueError(f"answer {answer[:80]!r} is neither an option letter ({letters[0]}-{letters[-1]}) nor "
                     f"one of the option texts")


def row_to_item(row: Row, fields: Mapping[str, Any], kind: str | None) -> Item:
    data = row.data
    if isinstance(data, Exception):
        raise ValueError(str(data))
    if not isinstance(data, dict):
        raise ValueError("is not an object with named fields")
    qcol, acol = fields.get("question"), fields.get("answer")
    if qcol is None or qcol not in data:
        raise ValueError(f"has no question field ({qcol or ' / '.join(QUESTION_NAMES)}); "
                         f"name it with --fields question=COLUMN")
    if acol is None or acol not in data:
        raise ValueError(f"has no answer field ({acol or ' / '.join(ANSWER_NAMES)}); "
                         f"name it with --fields answer=COLUMN")
    question, answer = _text(data.get(qcol)), _text(data.get(acol))
    if not question:
        raise ValueError(f"has an empty question ({qcol!r})")
    if not answer:
        raise ValueError(f"has an empty answer ({acol!r})")
    choices = _choices(data, fields.get("choices"))
    row_kind = _text(data.get(fields["kind"])) if fields.get("kind") else None
    if row_kind and row_kind not in KINDS:
        raise ValueError(f"has kind {row_kind[:40]!r}; expected one of {', '.join(KINDS)}")
    item_kind = kind or row_kind or ("choice" if choices else None)
    if item_kind == "choice":
        if len(choices) < 2:
            raise ValueError("is a choice question with fewer than two options")
        answer = _choice_gold(answer, choices)
    subset = _text(data.get(fields["subset"])) if fields.get("subset") else None
    subset = subset or "main"
    item_id = _text(data.get(fields["id"])) if fields.get("id") else None
    if item_kind:
        meta: dict[str, Any] = {"kind": item_kind}
    else:   # graded as the graders infer it; kept so the judge knows an open (text) answer
        from ..graders.gold import gold_answer, infer_kind

        meta = {"inferred_kind": infer_kind(gold_answer(answer)[0])}
    return Item(id=item_id or f"{subset}/{row.index}", subset=subset, question=question, gold=answer,
                choices=choices if item_kind == "choice" else (), meta=meta)


def items_from_rows(rows: Sequence[Row], fields: Mapping[str, Any], kind: str | None, where: str,
                    opts: LoadOptions) -> list[Item]:
    columns: dict[str, None] = {}    # every field name seen, in first-seen order: rows may differ
    for r in rows:
        if isinstance(r.data, dict):
            columns.update(dict.fromkeys(r.data))
    if not columns:
        raise BadDataError(f"{where}: no rows")
    fields = detect_fields(columns, fields)
    items: list[Item] = []
    seen: dict[str, str] = {}
    for row in rows:
        try:
            item = row_to_item(row, fields, kind)
            if item.id in seen:
                raise ValueError(f"repeats the id {item.id!r} of {seen[item.id]}")
        except ValueError as e:
            if opts.skip_bad_rows:
                skip_row(opts, f"{where}: {row.where}", str(e))
                continue
            raise BadDataError(f"{where}: {row.where} {e} (fix it, or use --skip-bad-rows to go on without it)") from None
        seen[item.id] = row.where
        items.append(item)
    if opts.subsets:
        known = sorted({i.subset for i in items})
        unknown = [s for s in opts.subsets if s not in known]
        if unknown:
            raise BadDataError(f"{where}: unknown subset(s) {', '.join(unknown)}; valid: {', '.join(known)}")
        items = [i for i in items if i.subset in opts.subsets]
    if opts.per_subset:
        from .pack import seeded_sample

        by_subset: dict[str, list[str]] = {}
        for i in items:
            by_subset.setdefault(i.subset, []).append(i.id)
        chosen = {c for ids in by_subset.values() for c in seeded_sample(ids, opts.per_subset, opts.seed)}
        items = [i for i in items if i.id in chosen]
    return items


# ----------------------------------------------------------------------------- the pack

def prompt_for(template: str, item: Item) -> list[dict[str, str]]:
    block = "\n".join(f"{LETTERS[n]}. {text}" for n, text in enumerate(item.choices))
    # plain replacement, not str.format: a template's other braces (\\boxed{}) stay as written
    text = template.replace("{choices}", "\x00CHOICES\x00").replace("{question}", item.question)
    return [{"role": "user", "content": text.replace("\x00CHOICES\x00", block)}]


def grade_item(kind: str | None, item: Item, answer: str, rounded_golds: bool = False) -> Verdict:
    kind = item.meta.get("kind") or kind
    return grade(item.gold, answer, kind=kind, choices=item.choices, rounded_golds=rounded_golds)


def template_for(spec: Mapping[str, Any], item: Item) -> str:
    if spec.get("template"):
        return spec["template"]
    kind = item.meta.get("kind") or spec.get("kind") or item.meta.get("inferred_kind") or ""
    if kind == "numeric" and not item.meta.get("kind") and "\\" in item.gold:
        kind = "math"   # a LaTeX gold (\frac{1}{2}) has a numeric value but is written as maths: ask for \boxed{}
    return TEMPLATES.get(kind, TEMPLATES["math"])


def pack_from_spec(spec: Mapping[str, Any]) -> Pack:
    """The pack a spec describes. Loading reads the data again; prompting and grading need only
    the spec, so regrade works without the file."""
    spec = dict(spec)
    kind = spec.get("kind")
    template_text = spec.get("template") or "\n=====\n".join(f"{k}:\n{t}" for k, t in TEMPLATES.items())

    def load(opts: LoadOptions) -> list[Item]:
        if spec.get("hub"):
            rows, _ = read_hub_rows(spec["hub"], spec.get("config"), spec.get("split") or "test")
            where = f"hf:{spec['hub']}"
        else:
            path = Path(spec["path"])
            rows, where = read_rows(path), str(path)
        return items_from_rows(rows, spec.get("fields") or {}, kind, where, opts)

    def prompt(item: Item) -> list[dict[str, str]]:
        return prompt_for(template_for(spec, item), item)

    def grade_answer(item: Item, answer: str) -> Verdict:
        return grade_item(kind, item, answer, bool(spec.get("rounded_golds")))

    return Pack(name=spec["name"], version=str(SPEC_VERSION), description=spec.get("description") or spec["name"],
                template=template_text + f"\x00system={spec.get('system')}", load=load, prompt=prompt,
                grade=grade_answer, source=spec.get("source") or spec["name"], system=spec.get("system"),
                max_tokens=int(spec.get("max_tokens") or 1024), needs_sympy=kind in (None, "math"),
                spec=spec, rounded_golds=bool(spec.get("rounded_golds")))


def open_file_pack(name: str, cli: FileOptions | None = None) -> Pack:
    """The pack for `run NAME` where NAME is a file, a TOML file or hf:OWNER/NAME."""
    cli = cli or FileOptions()
    opts = FileOptions()
    target: Path | str = name
    if not name.startswith("hf:") and name.lower().endswith(".toml"):
        target, opts = read_toml(Path(name))
    opts = opts.merged(cli)
    if opts.kind is not None and opts.kind not in KINDS:
        raise BadDataError(f"unknown kind {opts.kind!r}; expected one of {', '.join(KINDS)}")
    spec: dict[str, Any] = {"spec_version": SPEC_VERSION, "fields": dict(opts.fields), "kind": opts.kind,
                            "template": opts.template, "system": opts.system, "max_tokens": opts.max_tokens}
    if opts.rounded_golds:  # (absent otherwise: the specs of earlier runs stay as they were)
        spec["rounded_golds"] = True
    if isinstance(target, str) and target.startswith("hf:"):
        hub_id = target[3:]
        split = opts.split or "test"
        spec.update(name=f"hf:{hub_id}", hub=hub_id, config=opts.config, split=split,
                    source=f"hub {hub_id}{'/' + opts.config if opts.config else ''} [{split}]")
        pack = pack_from_spec(spec)
        return _with_hub_fingerprint(pack)
    path = Path(target).resolve()
    if not path.is_file():
        raise BadDataError(f"{target}: no such file")
    digest = sha256_file(path)
    spec.update(name=f"file:{path.name}", path=str(path), sha256=digest,
                source=f"{path} (sha256 {digest[:12]})")
    return pack_from_spec(spec)


def _with_hub_fingerprint(pack: Pack) -> Pack:
    """A hub pack whose load also records the dataset's fingerprint in its spec (the manifest's)."""
    spec = pack.spec

    def load(opts: LoadOptions) -> list[Item]:
        rows, fingerprint = read_hub_rows(spec["hub"], spec.get("config"), spec.get("split") or "test")
        spec["hub_fingerprint"] = fingerprint   # the spec dict is the pack's own: filled in at load
        return items_from_rows(rows, spec.get("fields") or {}, spec.get("kind"), f"hf:{spec['hub']}", opts)

    return replace(pack, load=load)
