"""Did speculative decoding engage during a run, and how much of what it drafted was accepted?

Engines report it in two places, both read here:
- Prometheus `/metrics` running totals: llama-server (started with `--metrics`) as
  `llamacpp:spec_decode_num_draft_tokens_total` / `…_accepted_tokens_total`, vLLM as
  `vllm:spec_decode_num_draft_tokens_total` / `…_accepted_tokens_total` (one series per engine
  label, summed). A snapshot before and after a run gives the run's share, when the server
  served nothing else meanwhile.
- llama-server's per-response `timings`: `draft_n` and `draft_n_accepted`, present only when
  drafting happened for that request.

Each engine file in evalsuite/engines/ names its counters (`spec_metrics`); this module stays
outside that package because the analyses read its manifest sentences.

What engines say about their own settings is not trusted for this: llama-server's `/props`
says `speculative.types: none` while it drafts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import urlsplit, urlunsplit

DRAFTED_SUFFIX = "spec_decode_num_draft_tokens_total"
ACCEPTED_SUFFIX = "spec_decode_num_accepted_tokens_total"
MAX_METRICS_BYTES = 4 << 20


@dataclass(frozen=True)
class SpecCounters:
    drafted: float
    accepted: float
    source: str               # "metrics" or "timings"

    def to_dict(self) -> dict[str, Any]:
        return {"drafted": self.drafted, "accepted": self.accepted, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> "SpecCounters | None":
        if not d:
            return None
        return cls(float(d["drafted"]), float(d["accepted"]), str(d.get("source", "metrics")))


def parse_prometheus(text: str) -> dict[str, float]:
    """`name{labels} value [timestamp]` lines -> {"name{labels}": value}; comments and junk skipped."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        # labels may contain spaces inside quotes: split the value off after the closing brace
        head, _, tail = line.rpartition("}") if "}" in line else ("", "", line)
        name = (head + "}") if head else tail.split()[0]
        rest = tail.split() if head else tail.split()[1:]
        if not rest:
            continue
        try:
            out[name] = float(rest[0])
        except ValueError:
            continue
    return out


def counters_from_metrics(metrics: dict[str, float]) -> SpecCounters | None:
    """Summed draft/accepted token counters, or None when the server exposes none."""
    drafted = [v for k, v in metrics.items() if k.split("{")[0].endswith(DRAFTED_SUFFIX)]
    accepted = [v for k, v in metrics.items() if k.split("{")[0].endswith(ACCEPTED_SUFFIX)]
    if not drafted and not accepted:
        return None
    return SpecCounters(sum(drafted), sum(accepted), "metrics")


def counters_from_timings(timings: Iterable[dict[str, Any] | None]) -> SpecCounters | None:
    """llama-server `timings` of each response summed; None when no response had any timings."""
    seen, drafted, accepted = False, 0.0, 0.0
    for t in timings:
        if not isinstance(t, dict):
            continue
        seen = True
        drafted += float(t.get("draft_n") or 0)
        accepted += float(t.get("draft_n_accepted") or 0)
    return SpecCounters(drafted, accepted, "timings") if seen else None


def metrics_url(endpoint: str) -> str:
    """http://host:port/v1 -> http://host:port/metrics (both engines serve it at the root)."""
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urlunsplit((parts.scheme, parts.netloc, path + "/metrics", "", ""))


def fetch_counters(endpoint: str, timeout: float = 5.0) -> SpecCounters | None:
    """The endpoint's counters now; None when it has no /metrics or no speculation counters."""
    import urllib.error         # here: urllib.request costs ~0.1 s to import, and `diff` never asks
    import urllib.request

    try:
        with urllib.request.urlopen(metrics_url(endpoint), timeout=timeout) as r:
            body = r.read(MAX_METRICS_BYTES)
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return counters_from_metrics(parse_prometheus(body.decode("utf-8", "replace")))


def delta(before: SpecCounters | None, after: SpecCounters | None) -> SpecCounters | None:
    if before is None or after is None:
        return after if before is None and after is not None and after.source == "timings" else None
    return SpecCounters(after.drafted - before.drafted, after.accepted - before.accepted, after.source)


def run_acceptance(manifest: dict[str, Any] | None, server_timings: Iterable[Any] = ()) -> SpecCounters | None:
    """The drafted and accepted tokens of one run: its manifest's counters during the run
    (`speculation.*.during_run`, summed over endpoints) where it recorded them, else the records'
    own llama-server `timings` (draft_n, draft_n_accepted); None when the run has neither."""
    reports = (manifest or {}).get("speculation")
    moved = [r.get("during_run") for r in reports.values() if isinstance(r, dict) and isinstance(r.get("during_run"), dict)] \
        if isinstance(reports, dict) else []
    if moved:
        try:
            return SpecCounters(sum(float(m.get("drafted") or 0) for m in moved),
                                sum(float(m.get("accepted") or 0) for m in moved), str(moved[0].get("source", "metrics")))
        except (TypeError, ValueError):
            pass
    return counters_from_timings(t for t in server_timings if isinstance(t, dict))


def describe(moved: SpecCounters | None) -> str:
    """One line for a person: engaged (with the acceptance), never engaged, or not reported."""
    if moved is None:
        return ("speculation: no draft counters at /metrics (speculation off — vLLM shows them only when it is on — "
                "or llama-server started without --metrics)")
    if moved.drafted <= 0:
        return "speculation never engaged: no tokens were drafted during the run"
    share = 100.0 * moved.accepted / moved.drafted
    return f"speculation engaged: {moved.accepted:.0f} of {moved.drafted:.0f} drafted tokens accepted ({share:.1f}%)"


def manifest_summary(manifest: dict[str, Any] | None) -> str | None:
    """The run's speculation sentence from its manifest (`speculation`, per endpoint), for
    `show`, `diff` and `report`; None when the run recorded none (an older evalsuite, or an
    interrupted run)."""
    reports = (manifest or {}).get("speculation")
    if not isinstance(reports, dict) or not reports:
        return None
    lines = [(url, r.get("summary")) for url, r in reports.items() if isinstance(r, dict) and r.get("summary")]
    if not lines:
        return None
    if len(lines) == 1:
        return str(lines[0][1])
    return "; ".join(f"{url}: {text}" for url, text in lines)


# what asks for speculation: request fields (llama-server, vLLM, transformers serve) and server flags
SPEC_FIELDS = ("speculative", "draft_", "num_speculative_tokens", "prompt_lookup", "n_draft")
SPEC_FLAGS = ("-md", "--model-draft", "--draft", "--spec", "--speculative", "--lookup", "--num-speculative",
              "--prompt-lookup", "--draft_model")


def speculation_configured(manifest: dict[str, Any] | None) -> bool:
    """Whether the run asked for speculation: a speculation field in the request body, or a flag
    of the managed server's command line (the run cannot see how a server it did not start was
    started: its counters say so, when they move)."""
    m = manifest or {}
    body = (m.get("decoding") or {}).get("extra_body") or {}
    text = " ".join(str(k) for k in body) + " " + " ".join(str(v) for v in body.values() if isinstance(v, str))
    if any(f in text for f in SPEC_FIELDS):
        return True
    argv = (((m.get("engine") or {}).get("managed") or {}).get("argv")) or []
    return any(isinstance(a, str) and a.split("=")[0].startswith(SPEC_FLAGS) for a in argv)


def counters_moved(manifest: dict[str, Any] | None) -> bool:
    """Whether a server's own draft counters moved during the run."""
    reports = (manifest or {}).get("speculation")
    if not isinstance(reports, dict):
        return False
    return any(((r or {}).get("during_run") or {}).get("drafted", 0) > 0 for r in reports.values() if isinstance(r, dict))


def speculation_line(manifest: dict[str, Any] | None) -> str | None:
    """manifest_summary, only where it says something about this run: speculation was asked for,
    or the counters moved (a plain run is not told about draft counters it never had)."""
    if not (speculation_configured(manifest) or counters_moved(manifest)):
        return None
    return manifest_summary(manifest)


def stream_mode(manifest: dict[str, Any] | None) -> str | None:
    """"streamed" / "unstreamed" (`--no-stream`) from the manifest's `client.stream`; None for a
    run made before evalsuite recorded it."""
    stream = ((manifest or {}).get("client") or {}).get("stream")
    return None if stream is None else ("streamed" if stream else "unstreamed (--no-stream)")
