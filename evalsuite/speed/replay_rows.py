"""A replayed session (`speed --replay FILE`, or `--session TURNS --depth D`), as typed values:
each turn's figures (`Turn`) and the session's summary (`Replay`): mean and median decode, the
jitter (the coefficient of variation of the turns' decode rates), the worst turn, the retention
(the last turn's decode over the first's) and the cache's share of the prompt tokens. Pure:
read back from the profile's JSON, no endpoint.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Mapping


def _f(x: Any) -> float | None:
    return None if x is None else float(x)


@dataclass(frozen=True)
class Turn:
    """One assistant turn, sent with everything before it."""
    index: int                          # 1-based, in the session
    context_tokens: int | None          # usage.prompt_tokens
    cached_tokens: int | None           # usage's cached_tokens (or llama-server's cache_n)
    ttft_ms: float | None
    prefill_tps: float | None           # the uncached part over (TTFT - round trip); None below the floor
    decode_tps: float | None            # (tokens - 1) over first to last token; None below the floor
    tokens: int | None                  # generated (usage)
    asked_tokens: int = 0               # max_tokens sent (the logged turn's length, or --tg)
    error: str | None = None
    ttft_parts: str | None = None       # "TTFT 412.0 ms = connect 0.1 + ..." (analysis/ttft_parts.py)
    session: int = 0                    # which session (with --rate, several arrive)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "context_tokens": self.context_tokens, "cached_tokens": self.cached_tokens,
                "ttft_ms": self.ttft_ms, "prefill_tps": self.prefill_tps, "decode_tps": self.decode_tps,
                "tokens": self.tokens, "asked_tokens": self.asked_tokens, "error": self.error,
                "ttft_parts": self.ttft_parts, "session": self.session}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Turn":
        def i(x: Any) -> int | None:
            return None if x is None else int(x)
        return cls(int(d["index"]), i(d.get("context_tokens")), i(d.get("cached_tokens")), _f(d.get("ttft_ms")),
                   _f(d.get("prefill_tps")), _f(d.get("decode_tps")), i(d.get("tokens")), int(d.get("asked_tokens") or 0),
                   d.get("error"), d.get("ttft_parts"), int(d.get("session") or 0))


@dataclass(frozen=True)
class Replay:
    """The turns of one session, and where they came from."""
    source: str                          # "agent.jsonl (1 conversation)" or "synthetic: 16 turns to depth 32768 (math)"
    turns: tuple[Turn, ...]
    notes: tuple[str, ...] = ()

    @property
    def decodes(self) -> list[float]:
        return [t.decode_tps for t in self.turns if t.decode_tps is not None]

    def summary(self) -> dict[str, Any]:
        """mean / median decode, CV (std / mean over the turns), worst turn, retention (last turn's
        decode over the first's, both measured), cache hit share (cached / prompt tokens)."""
        rates = self.decodes
        out: dict[str, Any] = {"turns": len(self.turns), "failed": sum(1 for t in self.turns if t.error),
                               "decode_mean": None, "decode_median": None, "decode_cv": None, "worst_turn": None,
                               "worst_decode": None, "retention": None, "cache_hit_share": None}
        if rates:
            mean = statistics.fmean(rates)
            out.update(decode_mean=mean, decode_median=statistics.median(rates),
                       decode_cv=statistics.stdev(rates) / mean if len(rates) > 1 and mean else None)
            worst = min((t for t in self.turns if t.decode_tps is not None), key=lambda t: t.decode_tps)
            out.update(worst_turn=worst.index, worst_decode=worst.decode_tps)
            timed = [t for t in self.turns if t.decode_tps is not None]
            if len(timed) > 1 and timed[0].decode_tps:
                out["retention"] = timed[-1].decode_tps / timed[0].decode_tps
        prompt = sum(t.context_tokens or 0 for t in self.turns if t.cached_tokens is not None)
        if prompt:
            out["cache_hit_share"] = sum(t.cached_tokens or 0 for t in self.turns) / prompt
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "summary": self.summary(), "turns": [t.to_dict() for t in self.turns],
                "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Replay | None":
        if not d:
            return None
        return cls(str(d.get("source") or "?"), tuple(Turn.from_dict(t) for t in d.get("turns") or ()),
                   tuple(d.get("notes") or ()))
