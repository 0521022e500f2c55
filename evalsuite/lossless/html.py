"""The `evalsuite diff --html` page: one self-contained file. Each divergence as a card (the
two outputs side by side, the differing tokens highlighted, the baseline's top-k at that
point); the page itself is drawn by templates/diff.html.j2."""
from __future__ import annotations

from ..pages.cards import divergence_card, is_divergence, sort_divergences
from ..pages.page import render
from .drift import page_view
from .runs import DiffResult, _finite

MAX_ITEMS_SHOWN = 200


def runs_rows(result: DiffResult) -> list[list[str]]:
    rows = []
    for role, side in (("baseline", result.baseline), ("candidate", result.candidate)):
        acc = "n/a" if side.accuracy is None else \
            f"{100 * side.accuracy:.1f}% ({side.n_correct}/{side.n - side.n_errors})"
        serving = "; ".join(x for x in (side.speculation, side.stream) if x) or "not recorded"
        rows.append([role, side.label, ", ".join(side.endpoints), acc, side.path, serving])
    return rows


def render_html(result: DiffResult, title: str | None = None, noise_floor: str | None = None,
                speed: str | None = None) -> str:
    title = title or f"evalsuite diff: {result.baseline.label} vs {result.candidate.label}"
    items = [_finite(i.to_dict()) for i in result.items]
    shown = sort_divergences([i for i in items if is_divergence(i)])
    return render("diff.html.j2", title=title, tau=f"{result.tau:g}", runs=runs_rows(result),
                  summary=result.summary_line(), answer_changes=sum(i.answer_changed for i in result.items),
                  correctness_changes=sum(i.correctness_changed for i in result.items), counts=result.counts,
                  settings_notes=list(result.settings_notes), n_shown=len(shown),
                  cards=[divergence_card(i) for i in shown[:MAX_ITEMS_SHOWN]], drift=page_view(result.drift),
                  noise_floor=noise_floor, speed=speed)
