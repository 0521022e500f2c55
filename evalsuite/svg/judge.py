"""Optional judge for the svg pack: a second model scores each SVG source against a fixed rubric.

`evalsuite svg-render RUN --judge-endpoint URL [--judge-model M]` calls judge_run(), which
writes RUN/judge.jsonl (one line per item: id, score 0-10 or null, reason, judge model,
rubric hash). The records are never touched, so the run's own results stay what the
endpoint under test produced. The judge sees the source text, not the render: most
OpenAI-compatible servers take no images. Scores are opinions: use them to sort and
skim a gallery, not as the pack's accuracy (that is the rule checks).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

JUDGE_FILE = "judge.jsonl"
MAX_SOURCE_CHARS = 60_000       # bigger sources are cut (and the judge is told)
MAX_REPLY_CHARS = 20_000        # judge replies are untrusted too

RUBRIC = """You are grading an SVG image that a model wrote for a request. Score it 0-10:
- 0: not an image of the request at all, or empty.
- 1-3: a few shapes; the subject is barely recognisable.
- 4-6: the subject is recognisable; proportions, composition or details are clearly off.
- 7-8: a good drawing of the request; small flaws.
- 9-10: an excellent drawing that fulfils every part of the request.
Judge only from the SVG source: imagine how it renders. Requirements stated in the request
(counts of elements, colours, titles, sizes) count as part of the request.
Reply with one JSON object and nothing else: {"score": <integer 0-10>, "reason": "<one sentence>"}"""

RUBRIC_SHA256 = hashlib.sha256(RUBRIC.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class JudgeResult:
    id: str
    score: int | None
    reason: str
    judge_model: str | None
    endpoint: str
    rubric_sha256: str = RUBRIC_SHA256
    error: str | None = None
    raw: str | None = None


_JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
_SCORE_WORD = re.compile(r"score\W{0,5}(\d{1,2})\b", re.IGNORECASE)


def parse_judge_reply(text: str) -> tuple[int | None, str]:
    """(score, reason) from a judge reply; score None when no 0-10 integer can be read."""
    text = (text or "")[:MAX_REPLY_CHARS]
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL)
    for m in _JSON_OBJECT.finditer(text):
        try:
            obj = json.loads(m.group(0))
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "score" in obj:
            score = obj["score"]
            if isinstance(score, (int, float)) and not isinstance(score, bool) and float(score).is_integer() \
                    and 0 <= score <= 10:
                return int(score), str(obj.get("reason", ""))[:1000]
            return None, f"score out of range or not an integer: {str(score)[:50]}"
    m = _SCORE_WORD.search(text)
    if m and 0 <= int(m.group(1)) <= 10:
        return int(m.group(1)), text.strip()[:1000]
    return None, "no score in the judge's reply"


def judge_messages(request: str, source: str) -> list[dict[str, str]]:
    cut = ""
    if len(source) > MAX_SOURCE_CHARS:
        cut = f"\n(The source was cut: {len(source) - MAX_SOURCE_CHARS} more characters not shown.)"
        source = source[:MAX_SOURCE_CHARS]
    return [
        {"role": "system", "content": RUBRIC},
        {"role": "user", "content": f"Request:\n{request}\n\nSVG source:\n{source}{cut}"},
    ]


def _without_credentials(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1]))


def _base_url(endpoint: str) -> str:
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1") else endpoint + "/v1"


def read_judge(run_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """RUN/judge.jsonl as id -> result (the last line per id wins); {} when absent."""
    from ..store import iter_record_lines

    path = Path(run_dir) / JUDGE_FILE
    return {r["id"]: r for r in iter_record_lines(path)}


def judge_run(run_dir: str | os.PathLike, endpoint: str, model: str | None = None, *,
              api_key: str | None = None, timeout: float = 120.0, max_tokens: int = 512,
              progress: Callable[[str], None] | None = None) -> list[JudgeResult]:
    """Ask the judge about every record with a valid SVG; write RUN/judge.jsonl (atomically)."""
    from openai import OpenAI

    from ..graders.svg import analyse_svg
    from ..store import load_run

    run_dir = Path(run_dir)
    run = load_run(run_dir)
    shown_endpoint = _without_credentials(endpoint)
    client = OpenAI(base_url=_base_url(endpoint), api_key=api_key or os.environ.get("OPENAI_API_KEY") or "none",
                    timeout=timeout, max_retries=2)
    if model is None:
        listed = client.models.list().data
        if not listed:
            raise ValueError(f"judge endpoint {shown_endpoint} lists no models; pass --judge-model")
        model = listed[0].id
    results: list[JudgeResult] = []
    for record in run.records:
        item_id = record["id"]
        analysis = analyse_svg(record.get("answer"))
        if analysis.extraction.svg is None or not (analysis.validation and analysis.validation.ok):
            results.append(JudgeResult(item_id, None, "no valid SVG to judge", model, shown_endpoint))
            continue
        request = _request_text(record)
        try:
            response = client.chat.completions.create(
                model=model, messages=judge_messages(request, analysis.extraction.svg),  # type: ignore[arg-type]
                temperature=0.0, max_tokens=max_tokens)
            reply = response.choices[0].message.content or ""
        except Exception as e:  # the judge is optional: one failure is recorded, not fatal
            results.append(JudgeResult(item_id, None, "", model, shown_endpoint, error=f"{type(e).__name__}: {str(e)[:300]}"))
            continue
        score, reason = parse_judge_reply(reply)
        results.append(JudgeResult(item_id, score, reason, model, shown_endpoint, raw=reply[:2000],
                                   error=None if score is not None else reason))
        if progress:
            progress(f"{item_id}: {score if score is not None else '—'}")
    _write_jsonl(run_dir / JUDGE_FILE, [asdict(r) for r in results])
    return results


def _request_text(record: dict[str, Any]) -> str:
    messages = record.get("messages") or []
    users = [m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users else (record.get("prompt") or "")


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
