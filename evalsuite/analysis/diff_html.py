"""The `evalsuite diff --html` page: one self-contained file (inline CSS, no scripts, nothing
fetched). Each divergence side by side, the differing tokens highlighted, and the baseline's
top-k table at that point. Everything from the runs is escaped: model output is untrusted."""
from __future__ import annotations

import datetime as dt
import html
from typing import Any, Sequence

from .diff import DiffResult, ItemDiff

MAX_ITEMS_SHOWN = 200

CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:75em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}
th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.item{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}
.badge{display:inline-block;padding:0 .5em;border-radius:4px;color:#fff;font-weight:600}
.identical{background:#4a7}.near_tie{background:#58a}.suspicious{background:#d90}.real{background:#c33}
.undetermined{background:#888}.drift{background:#a5a}.not_greedy{background:#b60}.cut_prefix{background:#7a9}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:1em}
.side{font-family:ui-monospace,monospace;white-space:pre-wrap;word-break:break-all;background:#fafafa;
 border:1px solid #eee;padding:.5em;font-size:.9em}
.prefix{color:#888}.first{background:#fbb;outline:1px solid #c33}.differ{background:#fee}
.mark{font-weight:700}.note{color:#666;font-size:.9em}
"""


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def show_token(text: str | None) -> str:
    """A token made visible: control characters and "" spelled out, then escaped."""
    if text is None:
        return "<i>(none)</i>"
    if text == "":
        return "<i>''</i>"
    visible = "".join(c if c.isprintable() or c in "\n " else f"\\x{ord(c):02x}" for c in text)
    return esc(visible)


def fmt(x: float | None, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def counts_table(result: DiffResult) -> str:
    counts = result.counts
    head = "".join(f"<th>{esc(k)}</th>" for k in counts)
    row = "".join(f"<td class='num'>{v}</td>" for v in counts.values())
    return f"<table><tr>{head}</tr><tr>{row}</tr></table>"


def runs_table(result: DiffResult) -> str:
    rows = []
    for role, side in (("baseline", result.baseline), ("candidate", result.candidate)):
        acc = "-" if side.accuracy is None else f"{100 * side.accuracy:.1f}% ({side.n_correct}/{side.n - side.n_errors})"
        rows.append(f"<tr><td>{role}</td><td>{esc(side.label)}</td><td>{esc(', '.join(side.endpoints))}</td>"
                    f"<td class='num'>{acc}</td><td>{esc(side.path)}</td></tr>")
    return ("<table><tr><th></th><th>label</th><th>endpoint</th><th>accuracy</th><th>run folder</th></tr>"
            + "".join(rows) + "</table>")


def side_html(prefix: str, rest: Sequence[str], differing: int) -> str:
    """The shared prefix in grey, then the tokens from the divergence: the first outlined,
    the ones before the re-merge shaded."""
    spans = [f"<span class='prefix'>{show_token(prefix) if prefix else ''}</span>"]
    for n, text in enumerate(rest):
        cls = "first" if n == 0 else "differ" if n < differing else ""
        spans.append(f"<span class='{cls}'>{show_token(text) if text else ''}</span>" if cls else show_token(text) if text else "")
    return "".join(spans)


def top_table(item: ItemDiff) -> str:
    if not item.top:
        return "<p class='note'>no top-k at this point</p>"
    b = item.baseline_token
    c = item.candidate_token
    rows = []
    for n, alt in enumerate(item.top, 1):
        marks = []
        if b is not None and _same(alt, b):
            marks.append("baseline")
        if c is not None and _same(alt, c):
            marks.append("candidate")
        cls = " class='mark'" if marks else ""
        ident = alt.get("id") if alt.get("id") is not None else (alt.get("bytes") if alt.get("bytes") is not None else "")
        rows.append(f"<tr{cls}><td class='num'>{n}</td><td>{show_token(alt.get('text'))}</td><td>{esc(ident)}</td>"
                    f"<td class='num'>{fmt(alt.get('logprob'), 6)}</td><td>{esc(' + '.join(marks))}</td></tr>")
    return ("<table><tr><th>#</th><th>token</th><th>id / bytes</th><th>baseline logprob</th><th></th></tr>"
            + "".join(rows) + "</table>")


def _same(alt: dict[str, Any], tok: Any) -> bool:
    if alt.get("id") is not None and tok.id is not None:
        return alt["id"] == tok.id
    if alt.get("bytes") is not None and tok.bytes is not None:
        return alt["bytes"] == tok.bytes
    return alt.get("text") == tok.text


def item_html(item: ItemDiff) -> str:
    badge = f"<span class='badge {esc(item.verdict)}'>{esc(item.verdict.replace('_', '-'))}</span>"
    drift = " <span class='badge drift'>hidden drift</span>" if item.hidden_drift else ""
    facts = []
    if item.token_index is not None:
        facts.append(f"token {item.token_index}, {esc(item.part)} character {item.char_offset}")
    if item.margin is not None:
        facts.append(f"m {'≥' if item.margin_is_bound else '='} {fmt(item.margin)} nats")
    if item.remerge is not None:
        r = item.remerge
        facts.append(f"re-merged after {r.baseline_tokens_between} baseline / {r.candidate_tokens_between} candidate "
                     f"tokens (at baseline token {r.baseline_index}; the {r.agreed_tokens} tokens from there to the "
                     f"end agree)")
    elif item.token_index is not None:
        facts.append("does not re-merge")
    if item.answer_changed:
        facts.append(f"answer {esc(item.baseline_extracted)!s} → {esc(item.candidate_extracted)!s}"
                     + (" (correctness changed)" if item.correctness_changed else ""))
    tokens = ""
    if item.baseline_token is not None or item.candidate_token is not None:
        def one(name: str, t: Any) -> str:
            if t is None:
                return f"<td>{name}</td><td colspan='4'><i>unknown</i></td>"
            ident = t.id if t.id is not None else (t.bytes if t.bytes is not None else "")
            return (f"<td>{name}{' (inferred from text)' if t.inferred else ''}</td><td>{show_token(t.text)}</td>"
                    f"<td>{esc(ident)}</td><td class='num'>{fmt(t.logprob_baseline, 6)}</td>"
                    f"<td class='num'>{esc(t.rank_baseline if t.rank_baseline is not None else '-')}</td>")
        tokens = ("<table><tr><th></th><th>token</th><th>id / bytes</th><th>baseline logprob</th><th>rank</th></tr>"
                  f"<tr>{one('baseline', item.baseline_token)}</tr><tr>{one('candidate', item.candidate_token)}</tr></table>")
    sides = ""
    if item.baseline_rest or item.candidate_rest:
        nb = item.remerge.baseline_tokens_between if item.remerge else len(item.baseline_rest)
        nc = item.remerge.candidate_tokens_between if item.remerge else len(item.candidate_rest)
        sides = ("<div class='sides'><div><b>baseline</b><div class='side'>"
                 + side_html(item.prefix, item.baseline_rest, nb) + "</div></div><div><b>candidate</b><div class='side'>"
                 + side_html(item.prefix, item.candidate_rest, nc) + "</div></div></div>")
    notes = "".join(f"<p class='note'>{esc(n)}</p>" for n in item.notes)
    return (f"<div class='item' id='{esc(item.id)}'><p>{badge}{drift} <b>{esc(item.id)}</b> · {' · '.join(facts)}</p>"
            f"<p>{esc(item.reason)}</p>{tokens}{sides}"
            + (f"<details open><summary>baseline top-{len(item.top)} at this point</summary>{top_table(item)}</details>"
               if item.top else "") + notes + "</div>")


def render_html(result: DiffResult, title: str | None = None) -> str:
    title = title or f"evalsuite diff: {result.baseline.label} vs {result.candidate.label}"
    shown = [i for i in result.items if i.verdict != "identical" or i.hidden_drift]
    order = {"real": 0, "suspicious": 1, "not_greedy": 2, "undetermined": 3, "near_tie": 4, "cut_prefix": 5, "identical": 6}
    shown.sort(key=lambda i: order.get(i.verdict, 5))
    changed = sum(i.answer_changed for i in result.items)
    body = [
        f"<h1>{esc(title)}</h1>",
        f"<p class='note'>made {esc(dt.datetime.now(dt.timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))} from run "
        f"folders only · tau {result.tau:g} nats · identical: byte-identical text; near tie: 0 ≤ m ≤ tau; "
        f"suspicious: ≤ 2 tau; real: beyond, or outside the baseline's top-k; not greedy: m &lt; 0 (the run's own "
        f"token was not its top-1)</p>",
        runs_table(result),
        f"<p><b>{esc(result.summary_line())}</b>. Answer changed on {changed} item(s), correctness on "
        f"{sum(i.correctness_changed for i in result.items)}.</p>",
        counts_table(result),
    ]
    body += [f"<p class='note'>{esc(n)}</p>" for n in result.settings_notes]
    body.append(f"<h2>Divergences ({len(shown)})</h2>")
    body += [item_html(i) for i in shown[:MAX_ITEMS_SHOWN]]
    if len(shown) > MAX_ITEMS_SHOWN:
        body.append(f"<p class='note'>{len(shown) - MAX_ITEMS_SHOWN} more in the JSON output</p>")
    if not shown:
        body.append("<p>None: every item is byte-identical.</p>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
