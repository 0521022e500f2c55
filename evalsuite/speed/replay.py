"""A session replayed turn by turn (`speed --replay FILE`), or a synthetic one from the packs'
text (`speed --session TURNS --depth D`): each assistant turn is sent with everything before it,
as an agent harness sends it, so the server's prefix cache serves what the earlier turns left.

FILE is a conversation in OpenAI chat format, as JSONL: one message a line ({"role": ...,
"content": ...}), or one whole conversation a line ({"messages": [...]} or a list of messages).
A message's content may be a string or a list of parts (their text is kept); an assistant's
`tool_calls` and a tool message's `tool_call_id` and `name` are sent as logged. Each turn asks
for as many tokens as the logged assistant message holds (the server's own count), or `--tg`
when given, with ignore_eos; the logged message (not the generated one) is the history of the
next turn, so the context grows as in the log. The first message carries this profile's own
mark ("Session 1 (3fa9c1).") so that no earlier profile's cache serves it.

The synthetic session grows its context to D tokens over TURNS turns (D * k / TURNS at turn k):
user messages of the workload's passages, assistant messages of `--tg` tokens of them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..analysis.ttft_parts import of_request, with_server_means
from .endpoint import Sample, SpeedEndpoint, UsageError
from .figures import decode_rate, prefill_rate
from .replay_rows import Turn

MAX_REPLAY_BYTES = 256 << 20
ROLES = ("system", "developer", "user", "assistant", "tool")


@dataclass(frozen=True)
class Conversation:
    messages: tuple[dict[str, Any], ...]
    line: int                       # where it starts in the file (1-based)

    @property
    def turns(self) -> list[int]:
        """The indexes of its assistant messages: each is a turn."""
        return [i for i, m in enumerate(self.messages) if m["role"] == "assistant"]


def _message(obj: Any, where: str) -> dict[str, Any]:
    if not isinstance(obj, dict) or obj.get("role") not in ROLES:
        raise UsageError(f"--replay {where}: a message is an object with a role ({', '.join(ROLES)}), not "
                         f"{json.dumps(obj)[:80]}")
    content = obj.get("content")
    if isinstance(content, list):     # parts: their text, in order
        content = "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    elif content is not None and not isinstance(content, str):
        raise UsageError(f"--replay {where}: content must be a string or a list of parts")
    out: dict[str, Any] = {"role": obj["role"], "content": content or ""}
    for key in ("tool_calls", "tool_call_id", "name"):
        if obj.get(key) is not None:
            out[key] = obj[key]
    return out


def read_conversations(path: Path) -> list[Conversation]:
    """The conversations of a JSONL file; a bad line is a UsageError naming it."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise UsageError(f"--replay {path}: {e.strerror or e}") from None
    if size > MAX_REPLAY_BYTES:
        raise UsageError(f"--replay {path}: {size:,} bytes, more than {MAX_REPLAY_BYTES >> 20} MiB")
    loose: list[dict[str, Any]] = []
    out: list[Conversation] = []
    first_loose = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}, line {n}"
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                raise UsageError(f"--replay {where}: not JSON ({e.msg})") from None
            if isinstance(value, dict) and "messages" in value:
                value = value["messages"]
            if isinstance(value, list):
                if loose:
                    raise UsageError(f"--replay {where}: a whole conversation after loose messages (one message a "
                                     "line, or one conversation a line, not both)")
                out.append(Conversation(tuple(_message(m, where) for m in value), n))
            else:
                if out:
                    raise UsageError(f"--replay {where}: a loose message after whole conversations")
                first_loose = first_loose or n
                loose.append(_message(value, where))
    if loose:
        out.append(Conversation(tuple(loose), first_loose))
    if not out:
        raise UsageError(f"--replay {path}: no message in the file")
    for c in out:
        if not c.turns:
            raise UsageError(f"--replay {path}, line {c.line}: the conversation has no assistant message to replay")
        if c.turns[0] == 0:
            raise UsageError(f"--replay {path}, line {c.line}: the conversation starts with an assistant message "
                             "(nothing to send before it)")
    return out


def marked(messages: Sequence[dict[str, Any]], mark: str) -> list[dict[str, Any]]:
    """The messages with `mark` before the first one's text: no earlier profile's cache serves them."""
    out = [dict(m) for m in messages]
    out[0]["content"] = f"{mark}\n" + str(out[0].get("content") or "")
    return out


@dataclass(frozen=True)
class TurnRequest:
    messages: tuple[dict[str, Any], ...]    # everything before the assistant turn
    max_tokens: int


async def turn_requests(conversation: Conversation, mark: str, count: Callable, tg: int | None) -> list[TurnRequest]:
    """Each assistant turn of the conversation as a request: what came before it and its length
    (`count(text)`: the server's tokens; `tg` instead when given)."""
    messages = marked(conversation.messages, mark)
    out = []
    for i in conversation.turns:
        logged = messages[i]
        if tg is not None:
            n = tg
        else:
            text = str(logged.get("content") or "") or json.dumps(logged.get("tool_calls") or "")
            n = max(1, await count(text))
        out.append(TurnRequest(tuple(messages[:i]), n))
    return out


async def synthetic_conversation(maker, turns: int, depth: int, tg: int) -> Conversation:
    """TURNS user turns whose context reaches `depth` tokens at the last (depth * k / TURNS at
    turn k), each assistant turn `tg` tokens of the same text (the logged reply)."""
    step = depth / turns
    per_message = 5                       # a chat template's tokens around each message (ChatML: 4-5)
    template = maker.counter.template_tokens
    messages: list[dict[str, Any]] = []
    for k in range(1, turns + 1):
        # the context before turn k's reply: the earlier turns, this user message, the template
        before = template + sum(len(m["_tokens"]) for m in messages) + per_message * len(messages)
        wanted = max(16, round(step * k) - before)
        user = await maker.passage_text(wanted)
        messages.append({"role": "user", "content": user, "_tokens": range(wanted)})
        reply = await maker.passage_text(tg)
        messages.append({"role": "assistant", "content": reply, "_tokens": range(tg)})
    return Conversation(tuple({"role": m["role"], "content": m["content"]} for m in messages), 0)


async def run_session(endpoint: SpeedEndpoint, model: str, requests: Sequence[TurnRequest], ignore_eos: bool,
                      extra, on_turn: Callable[[int, Sample, tuple], None] | None = None,
                      counters: bool = False) -> list[Sample]:
    """The turns one after another (as a harness waits for each reply); a failed turn does not
    stop the session: the next one is sent with the logged history. `counters`: the server's
    /metrics read between turns, so each turn's queue and prefill come from the server's own
    histograms (the session alone on the server: they moved by its one request)."""
    samples = []
    before = await endpoint.counters() if counters else None
    for n, req in enumerate(requests, 1):
        sample = await endpoint.stream(endpoint.body_messages(model, list(req.messages), req.max_tokens, ignore_eos,
                                                              extra))
        samples.append(sample)
        after = await endpoint.counters() if counters else None
        if on_turn is not None:
            on_turn(n, sample, (before, after))
        before = after
    return samples


def _moved(pair: tuple, part: str) -> float | None:
    before, after = pair
    if before is None or after is None:
        return None
    a, b = before.histograms.get(part), after.histograms.get(part)
    if a is None or b is None or b[1] - a[1] != 1:     # exactly our one request, or nothing said
        return None
    return b[0] - a[0]


def turn_of(index: int, sample: Sample, asked: int, latency: float, session: int = 0,
            counters: tuple = (None, None)) -> Turn:
    if not sample.ok:
        return Turn(index, None, None, None, None, None, None, asked, f"{sample.error.kind}: {sample.error.message}"[:300],
                    session=session)
    parts = of_request({"ttft_s": sample.ttft, "first_chunk_s": sample.ttfr, **(sample.phases or {})}, sample.timings)
    if parts is not None and parts.prefill is None:
        parts = with_server_means(parts, _moved(counters, "queue"), _moved(counters, "prefill"), "metrics",
                                  _moved(counters, "ttft"))
    return Turn(index, sample.prompt_tokens, sample.cached_tokens, None if sample.ttft is None else 1000 * sample.ttft,
                prefill_rate(sample, latency), decode_rate(sample), sample.completion_tokens, asked,
                ttft_parts=parts.text("ms") if parts else None, session=session)
