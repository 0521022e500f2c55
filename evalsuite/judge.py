"""An audited model judge for what the rule graders cannot decide.

`--judge-endpoint URL [--judge-model M]` (on `run` and `regrade`) asks a second model about the
items the graders leave undecided (`equal` null) or unextracted (no answer read), and about every
item of kind `text` (open answers, where string rules miss synonyms: "反渗透" against a key of
"蒸馏" needs a reader). The judge's verdict is stored *beside* the rule verdict, in the record's
`judge` field, never over it: `outcome`, and so accuracy, `compare` and `gate`, stay the rules'
unless `--use-judge` is given (and then they say so).

The reply is untrusted text: the HTTP body is read up to MAX_BODY_BYTES within `timeout`
seconds, the answer text must be at most MAX_REPLY_CHARS, and it must have the one form the
prompt asks for (`VERDICT: CORRECT` or `VERDICT: INCORRECT` on its first line, then an optional
`REASON: ...`). Anything else is "undecided" with the cause, never "correct".

Answers are cached by (question, gold, answer, judge model, prompt version): the run's own
records seed the cache, and a cache file (EVALSUITE_JUDGE_CACHE, default
~/.cache/evalsuite/judge-cache.jsonl) keeps decisions across runs, so a `regrade` does not ask
again. Transport failures (timeout, refused, HTTP errors) are not cached. The API key is read
from the environment variable named by --judge-api-key-env (default OPENAI_API_KEY) and never
written anywhere; the manifest keeps the endpoint with credentials removed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

PROMPT_VERSION = "1"
MAX_BODY_BYTES = 256 * 1024       # the HTTP body of one judge reply
MAX_REPLY_CHARS = 4_000           # the reply's text (what is parsed)
MAX_FIELD_CHARS = 8_000           # question / answer shown to the judge
MAX_REASON_CHARS = 500
VERDICTS = ("correct", "incorrect", "undecided")

PROMPT = """You are checking whether a candidate's answer to a question means the same as the reference answer.
Judge only the final answer, not the working. Equivalent wording, units, notation or a synonym count as the same;
a different value, a different choice, or no answer at all is not the same.

Question:
{question}

Reference answer:
{gold}

Candidate's answer:
{answer}

Reply with exactly two lines and nothing else:
VERDICT: CORRECT   (or VERDICT: INCORRECT)
REASON: <one short sentence>"""

VERDICT_RE = re.compile(r"^\s*\**\s*VERDICT\s*:\s*\**\s*(CORRECT|INCORRECT)\s*\**\s*\.?\s*$", re.IGNORECASE)
REASON_RE = re.compile(r"^\s*REASON\s*:\s*(.*)$", re.IGNORECASE)
THINK_RE = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass(frozen=True)
class JudgeSettings:
    endpoint: str
    model: str | None = None
    api_key_env: str | None = None     # the variable's name; the key itself is never kept
    timeout: float = 60.0              # seconds for one judge request, start to end
    concurrency: int = 4
    max_tokens: int = 256

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env or "OPENAI_API_KEY")


@dataclass(frozen=True)
class JudgeVerdict:
    verdict: str                # correct / incorrect / undecided
    reason: str
    model: str
    prompt_version: str
    key: str
    cached: bool = False
    raw: str | None = None      # the reply's first 500 characters, for review
    error: str | None = None    # why there is no decision: transport (not cached) or the reply's form

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def decided(self) -> bool:
        return self.verdict in ("correct", "incorrect")


# ----------------------------------------------------------------------------- pure parts

def question_of(record: Mapping[str, Any]) -> str:
    """What the model under test was asked: the last user message (or the raw prompt)."""
    messages = record.get("messages") or []
    users = [m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return str(users[-1] if users else (record.get("prompt") or ""))


def needs_judge(record: Mapping[str, Any], verdict: Mapping[str, Any] | None = None) -> bool:
    """Undecided or unextracted by the rules, or an open (text) answer; never an error record."""
    if record.get("outcome") == "error" or record.get("answer") is None:
        return False
    verdict = verdict if verdict is not None else (record.get("verdict") or {})
    meta = record.get("item_meta") or {}
    kind = meta.get("kind") or meta.get("inferred_kind")
    return verdict.get("equal") is None or verdict.get("extracted") is None or kind == "text"


def judge_key(question: str, gold: str, answer: str, model: str) -> str:
    blob = json.dumps([question, gold, answer, model, PROMPT_VERSION], ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def _cut(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def judge_messages(question: str, gold: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": PROMPT.format(question=_cut(question), gold=_cut(gold), answer=_cut(answer))}]


def parse_reply(text: str | None) -> tuple[str, str]:
    """(verdict, reason) from the judge's reply text; "undecided" unless it has the asked-for form."""
    if text is None:
        return "undecided", "judge undecided: the reply had no text"
    if len(text) > MAX_REPLY_CHARS:
        return "undecided", f"judge undecided: reply too large ({len(text)} characters > {MAX_REPLY_CHARS})"
    text = THINK_RE.sub("", text)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "undecided", "judge undecided: empty reply"
    m = VERDICT_RE.match(lines[0])
    if not m:
        return "undecided", f"judge undecided: unparseable reply {lines[0][:80]!r}"
    rest = lines[1:]
    if len(rest) > 1 or (rest and not REASON_RE.match(rest[0])):
        # more than asked for: a second verdict may hide in it; not trusted
        return "undecided", "judge undecided: the reply has more than the VERDICT and REASON lines"
    reason = REASON_RE.match(rest[0]).group(1).strip() if rest else ""
    return m.group(1).lower(), reason[:MAX_REASON_CHARS] or "(no reason given)"


# ----------------------------------------------------------------------------- the endpoint

def redact_url(url: str) -> str:
    """The URL without user:password@ (this module does not import the client)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))


def _base(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1") else endpoint + "/v1"


class JudgeTransportError(Exception):
    pass


def _request(url: str, body: dict | None, api_key: str | None, timeout: float) -> Any:
    """GET/POST one JSON request, reading at most MAX_BODY_BYTES within `timeout` seconds, start to
    end: the request runs in a thread that is not waited for past the deadline (a server that
    stalls between bytes would otherwise hold each read for up to `timeout`)."""
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(_request_bounded, url, body, api_key, timeout)
    pool.shutdown(wait=False)
    try:
        return future.result(timeout=timeout + 0.5)
    except concurrent.futures.TimeoutError:
        raise JudgeTransportError(f"no complete reply within {timeout:g} s") from None


def _request_bounded(url: str, body: dict | None, api_key: str | None, timeout: float) -> Any:
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(url, data=data, headers=headers, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            chunks, size = [], 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise JudgeTransportError(f"no complete reply within {timeout:g} s")
                chunk = resp.read1(16384) if hasattr(resp, "read1") else resp.read(16384)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise JudgeTransportError(f"reply larger than {MAX_BODY_BYTES} bytes")
                chunks.append(chunk)
    except urllib.error.HTTPError as e:
        raise JudgeTransportError(f"HTTP {e.code}") from None
    except JudgeTransportError:
        raise
    except (OSError, ValueError) as e:
        if "timed out" in str(e):
            raise JudgeTransportError(f"no complete reply within {timeout:g} s") from None
        raise JudgeTransportError(f"{type(e).__name__}: {str(e)[:200]}") from None
    try:
        return json.loads(b"".join(chunks))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise JudgeTransportError("the reply is not JSON") from None


def resolve_model(settings: JudgeSettings) -> str:
    if settings.model:
        return settings.model
    listed = _request(_base(settings.endpoint) + "/models", None, settings.api_key(), min(30.0, settings.timeout))
    try:
        return str(listed["data"][0]["id"])
    except (KeyError, IndexError, TypeError):
        raise JudgeTransportError("the judge endpoint lists no model; pass --judge-model") from None


def check_judge(settings: JudgeSettings) -> JudgeSettings:
    """The settings with the judge's model resolved, before any item is asked: a judge that does
    not answer is a usage error at the start, not a surprise at the end. ValueError says why."""
    try:
        return replace(settings, model=resolve_model(settings))
    except JudgeTransportError as e:
        raise ValueError(f"the judge at {redact_url(settings.endpoint)} does not answer GET /models ({e}); "
                         f"check --judge-endpoint (an OpenAI-compatible base URL, e.g. http://HOST:PORT/v1)") from None


def ask_judge(settings: JudgeSettings, model: str, question: str, gold: str, answer: str) -> JudgeVerdict:
    key = judge_key(question, gold, answer, model)
    body = {"model": model, "messages": judge_messages(question, gold, answer), "temperature": 0.0,
            "max_tokens": settings.max_tokens, "stream": False}
    try:
        reply = _request(_base(settings.endpoint) + "/chat/completions", body, settings.api_key(), settings.timeout)
        message = reply["choices"][0]["message"]
        text = message.get("content")
        if text is not None and not isinstance(text, str):
            text = None
    except JudgeTransportError as e:
        return JudgeVerdict("undecided", f"judge undecided: {e}", model, PROMPT_VERSION, key, error=str(e))
    except (KeyError, IndexError, TypeError, AttributeError):
        return JudgeVerdict("undecided", "judge undecided: the reply is not a chat completion", model,
                            PROMPT_VERSION, key, error="not a chat completion")
    verdict, reason = parse_reply(text)
    return JudgeVerdict(verdict, reason, model, PROMPT_VERSION, key, raw=(text or "")[:500],
                        error=None if verdict != "undecided" else reason)


# ----------------------------------------------------------------------------- the cache

def cache_path() -> Path:
    env = os.environ.get("EVALSUITE_JUDGE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "evalsuite" / "judge-cache.jsonl"


class JudgeCache:
    """key -> verdict: from records' `judge` fields and the cache file; new decisions appended."""

    def __init__(self, path: Path | None = None, records: Iterable[Mapping[str, Any]] = ()):
        self.path = path if path is not None else cache_path()
        self.entries: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        try:
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                        self.entries[entry["key"]] = entry
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue   # a torn or foreign line: the cache is an optimisation only
        except OSError:
            pass
        for record in records:
            judged = record.get("judge")
            if isinstance(judged, dict) and judged.get("key") and judged.get("error") is None:
                self.entries.setdefault(judged["key"], judged)

    def get(self, key: str) -> JudgeVerdict | None:
        entry = self.entries.get(key)
        if not entry or entry.get("prompt_version") != PROMPT_VERSION:
            return None
        fields = {k: entry.get(k) for k in ("verdict", "reason", "model", "prompt_version", "key", "raw", "error")}
        return JudgeVerdict(**fields, cached=True)

    def put(self, verdict: JudgeVerdict) -> None:
        if verdict.error is not None and verdict.verdict == "undecided" and verdict.raw is None:
            return   # a transport failure: ask again next time
        entry = dict(verdict.to_dict(), cached=False)
        with self.lock:
            self.entries[verdict.key] = entry
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            except OSError:
                pass


# ----------------------------------------------------------------------------- judging records

@dataclass(frozen=True)
class JudgeRequest:
    id: str
    question: str
    gold: str
    answer: str


def judge_requests(requests: Sequence[JudgeRequest], settings: JudgeSettings, cache: JudgeCache,
                   model: str | None = None) -> tuple[dict[str, JudgeVerdict], int]:
    """Each request's verdict (from the cache when there) and how many were asked."""
    if not requests:
        return {}, 0
    model = model or resolve_model(settings)
    out: dict[str, JudgeVerdict] = {}
    todo: list[JudgeRequest] = []
    for r in requests:
        hit = cache.get(judge_key(r.question, r.gold, r.answer, model))
        if hit is not None:
            out[r.id] = hit
        else:
            todo.append(r)

    def one(r: JudgeRequest) -> tuple[str, JudgeVerdict]:
        v = ask_judge(settings, model, r.question, r.gold, r.answer)
        cache.put(v)
        return r.id, v

    with ThreadPoolExecutor(max_workers=max(1, settings.concurrency)) as pool:
        for item_id, v in pool.map(one, todo):
            out[item_id] = v
    return out, len(todo)


def judge_run_folder(run_dir: str | os.PathLike, settings: JudgeSettings,
                     echo: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Judge a run folder's records that need it (and have no judge verdict of this model and
    prompt version): append each one again with its `judge` field (the last record per id wins,
    so the rule verdict beside it is unchanged). Returns the manifest's `judge` entry."""
    from .store import RECORDS, RecordWriter, load_run

    run = load_run(run_dir)
    model = resolve_model(settings)
    cache = JudgeCache(records=run.records)
    wanted = [r for r in run.records if needs_judge(r)
              and not ((r.get("judge") or {}).get("model") == model
                       and (r.get("judge") or {}).get("prompt_version") == PROMPT_VERSION
                       and (r.get("judge") or {}).get("error") is None)]
    requests = [JudgeRequest(r["id"], question_of(r), str(r.get("gold", "")), str(r.get("answer")))
                for r in wanted]
    verdicts, asked = judge_requests(requests, settings, cache, model)
    writer = RecordWriter(Path(run_dir) / RECORDS)
    try:
        for r in wanted:
            writer.append(dict(r, judge=verdicts[r["id"]].to_dict()), None, flush=False)
        writer.flush()
    finally:
        writer.close()
    counts = {v: sum(1 for x in verdicts.values() if x.verdict == v) for v in VERDICTS}
    if echo:
        echo(f"judge {model}: {len(wanted)} item(s) judged ({asked} asked, {len(wanted) - asked} from the cache): "
             f"{counts['correct']} correct, {counts['incorrect']} incorrect, {counts['undecided']} undecided")
    return {"endpoint": redact_url(settings.endpoint), "model": model, "prompt_version": PROMPT_VERSION,
            "n_judged": len(wanted), "n_asked": asked}


def judge_regrade(run_dir: str | os.PathLike, settings: JudgeSettings, changes: Sequence[Any]) -> list[dict[str, Any]]:
    """`regrade --judge-endpoint`: judge the records that the current graders (old verdict, or the
    changed one in `changes`) leave to the judge. The run folder is not changed; verdicts already
    in its records or in the cache are not asked again. One entry per judged item."""
    from .store import load_run
    from .store.record import verdict_outcome

    run = load_run(run_dir)
    new = {c.id: {"equal": c.new_equal, "extracted": c.new_extracted} for c in changes}
    model = resolve_model(settings)
    cache = JudgeCache(records=run.records)
    wanted = [r for r in run.records if needs_judge(r, new.get(r["id"]))]
    requests = [JudgeRequest(r["id"], question_of(r), str(r.get("gold", "")), str(r.get("answer"))) for r in wanted]
    verdicts, _ = judge_requests(requests, settings, cache, model)
    out = []
    for r in wanted:
        v = verdicts[r["id"]]
        rule = new.get(r["id"]) or (r.get("verdict") or {})
        out.append({"id": r["id"], "rule_equal": rule.get("equal"), "rule_extracted": rule.get("extracted"),
                    # the rule verdict in the words `run` records (correct / wrong / unextracted / truncated)
                    "rule_outcome": verdict_outcome(rule.get("equal"), rule.get("extracted"), r.get("finish_reason")),
                    **v.to_dict()})
    return out


def regrade_judge(settings: JudgeSettings):
    """For `regrade --judge-endpoint`: `judged(run_dir, changes)`, the judged entries of
    judge_regrade; a judge that does not answer is a UsageError naming the option."""
    from .errors import UsageError

    def judged(run_dir: str | os.PathLike, changes: Sequence[Any]) -> list[dict[str, Any]]:
        try:
            return judge_regrade(run_dir, settings, changes)
        except JudgeTransportError as e:
            raise UsageError(f"the judge at --judge-endpoint does not answer: {e}") from None

    return judged
