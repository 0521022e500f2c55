"""Where the first-token wait went: a TTFT broken into the parts the client and the server can
see, and the rest named for what it is.

Client side, from the request's own stamps (client/phases.py, seconds from sending): the
connection ready (`connect_s`: opened, or taken from the pool), the request written
(`written_s`), the response's head read (`first_byte_s`), the first chunk (`first_chunk_s`) and
the first token (`ttft_s`). Server side, where the engine says: llama-server's per-response
`timings.prompt_ms` (its prefill; `cache_n` the tokens its cache served), or the means of vLLM's
(and SGLang's) `/metrics` histograms over a test (`queue`, `prefill`). A row reads

    TTFT 14.00 s = connect 0.00 + send 0.00 + queue 0.10 + prefill 13.20 + unaccounted 0.70

where the server's parts are known (with vLLM's own TTFT histogram, "server, the rest of its
first-token time" is what the server spent beyond queue and prefill, and unaccounted is outside it), and otherwise names what it cannot see:

    TTFT 0.41 s = connect 0.00 + send 0.00 + server, to the response head 0.40 (queue and prefill not exposed)
    + head to first chunk 0.00 + first chunk to first token 0.01

The parts are means (they add up) for a speed test; `show` gives the medians of a run's
records (each part's median; unaccounted is the median TTFT less them). Pure functions.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

CLIENT_KEYS = ("connect_s", "written_s", "first_byte_s", "first_chunk_s")


@dataclass(frozen=True)
class TtftParts:
    """One TTFT (or a mean or median of many) in seconds, with its parts; None: not seen."""
    ttft: float
    connect: float | None = None        # to the connection ready
    send: float | None = None           # connection ready to the request written
    to_head: float | None = None        # request written to the response's head
    head_to_chunk: float | None = None  # response head to the first chunk
    chunk_to_token: float | None = None # first chunk (a role chunk, say) to the first token
    queue: float | None = None          # server: waiting for a slot
    prefill: float | None = None        # server: processing the prompt
    server_source: str | None = None    # "timings" (per response) or "metrics" (histogram means over a test)
    n: int = 1                          # requests behind the figure
    server_other: float | None = None   # server: its own TTFT less queue and prefill (vLLM's histogram)

    @property
    def server_known(self) -> bool:
        return self.prefill is not None or self.queue is not None

    @property
    def unaccounted(self) -> float | None:
        """The TTFT less the parts named beside the server's (None when the server says nothing)."""
        if not self.server_known:
            return None
        return self.ttft - sum(p for p in (self.connect, self.send, self.queue, self.prefill, self.server_other)
                               if p is not None)

    def text(self, unit: str = "s") -> str:
        scale, digits = (1000.0, 1) if unit == "ms" else (1.0, 2)

        def f(x: float) -> str:
            return f"{x * scale:.{digits}f}"

        parts = []
        if self.connect is not None:
            parts.append(f"connect {f(self.connect)}")
        if self.send is not None:
            parts.append(f"send {f(self.send)}")
        if self.server_known:
            if self.queue is not None:
                parts.append(f"queue {f(self.queue)}")
            else:
                parts.append("queue (not exposed)")
            if self.prefill is not None:
                parts.append(f"prefill {f(self.prefill)}")
            if self.server_other is not None:
                parts.append(f"server, the rest of its first-token time {f(self.server_other)}")
            parts.append(f"unaccounted {f(self.unaccounted or 0.0)}")
        else:
            if self.to_head is not None:
                parts.append(f"server, to the response head {f(self.to_head)} (its queue and prefill not exposed)")
            if self.head_to_chunk is not None:
                parts.append(f"head to first chunk {f(self.head_to_chunk)}")
            if self.chunk_to_token is not None:
                parts.append(f"first chunk to first token {f(self.chunk_to_token)}")
            if len(parts) <= 2 and self.to_head is None:
                parts.append("the rest unseen (no client stamps, no server figures)")
        return f"TTFT {f(self.ttft)} {unit} = " + " + ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"ttft": self.ttft, "connect": self.connect, "send": self.send, "to_head": self.to_head,
                "head_to_chunk": self.head_to_chunk, "chunk_to_token": self.chunk_to_token, "queue": self.queue,
                "prefill": self.prefill, "server_other": self.server_other, "unaccounted": self.unaccounted,
                "server_source": self.server_source,
                "n": self.n, "text": self.text("ms")}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "TtftParts | None":
        if not d or d.get("ttft") is None:
            return None
        keys = ("connect", "send", "to_head", "head_to_chunk", "chunk_to_token", "queue", "prefill")
        return cls(float(d["ttft"]), *(None if d.get(k) is None else float(d[k]) for k in keys),
                   server_source=d.get("server_source"), n=int(d.get("n") or 1),
                   server_other=None if d.get("server_other") is None else float(d["server_other"]))


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else max(0.0, a - b)


def of_request(timing: Mapping[str, Any], server_timings: Mapping[str, Any] | None = None) -> TtftParts | None:
    """One request's parts from its timing stamps (a record's `timing`, or a speed sample's) and,
    where the server sent them, its per-response timings (llama-server's prompt_ms)."""
    ttft = timing.get("ttft_s")
    if ttft is None:
        return None
    connect, written = timing.get("connect_s"), timing.get("written_s")
    head, chunk = timing.get("first_byte_s"), timing.get("first_chunk_s")
    prefill = None
    if isinstance(server_timings, Mapping) and server_timings.get("prompt_ms") is not None:
        try:
            prefill = float(server_timings["prompt_ms"]) / 1000.0
        except (TypeError, ValueError):
            prefill = None
    return TtftParts(float(ttft), connect, _diff(written, connect), _diff(head, written), _diff(chunk, head),
                     _diff(ttft, chunk), None, prefill, "timings" if prefill is not None else None)


def combine(parts: Iterable[TtftParts], how: str = "mean") -> TtftParts | None:
    """The mean (for a test: means add up) or the median of each part over many requests."""
    items = list(parts)
    if not items:
        return None
    center = statistics.fmean if how == "mean" else statistics.median

    def of(name: str) -> float | None:
        xs = [getattr(p, name) for p in items if getattr(p, name) is not None]
        # a part seen on fewer than half the requests would not describe them
        return center(xs) if xs and 2 * len(xs) >= len(items) else None

    sources = {p.server_source for p in items if p.server_source}
    return TtftParts(center([p.ttft for p in items]), of("connect"), of("send"), of("to_head"), of("head_to_chunk"),
                     of("chunk_to_token"), of("queue"), of("prefill"),
                     sources.pop() if len(sources) == 1 else None, len(items))


def with_server_means(parts: TtftParts, queue: float | None, prefill: float | None, source: str,
                      server_ttft: float | None = None) -> TtftParts:
    """`parts` with the server's mean queue and prefill over the same requests (metrics
    histograms), and the rest of the server's own first-token time where it counts that too
    (vLLM's time_to_first_token histogram): what is left unaccounted is then outside the server."""
    from dataclasses import replace

    if queue is None and prefill is None:
        return parts
    other = None
    if server_ttft is not None:
        other = max(0.0, server_ttft - (queue or 0.0) - (prefill or 0.0))
    return replace(parts, queue=queue, prefill=prefill if prefill is not None else parts.prefill, server_source=source,
                   server_other=other)


def run_breakdown(records: Iterable[Mapping[str, Any]]) -> TtftParts | None:
    """`show`: the median of each part over a run's answered, streamed records."""
    parts = []
    for r in records:
        timing = r.get("timing") or {}
        if r.get("error") or timing.get("ttft_s") is None:
            continue
        p = of_request(timing, r.get("server_timings"))
        if p is not None:
            parts.append(p)
    return combine(parts, "median")
