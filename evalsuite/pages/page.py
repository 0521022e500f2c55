"""One way to draw the HTML pages (report, diff, gallery): Jinja2 templates with
autoescaping and one shared stylesheet, each page written as one self-contained file
(inline CSS, `data:` images, a Content-Security-Policy that lets nothing be fetched or run).

Model output is untrusted and may hold any character: every value a template prints goes
through `shown()`, which writes None as a dash, rounds floats, and spells control characters
out as escapes (a NUL becomes the four characters `\\x00`), before Jinja escapes the HTML.
"""
from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache
from typing import Any

# nothing fetched, nothing run: only the inline stylesheet and embedded images
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
DASH = "—"

# control characters a page keeps as they are: newline and tab lay text out in <pre>
_KEEP = {"\n", "\t"}


def visible(text: str) -> str:
    """Control characters (C0, DEL, C1) spelled out as escapes; newline and tab kept."""
    if all(c in _KEEP or not _is_control(c) for c in text):
        return text
    return "".join(c if c in _KEEP or not _is_control(c) else _escape(c) for c in text)


def token_text(text: str | None) -> str:
    """A token made visible: every non-printable character but the space spelled out,
    newline included (a token that is a newline must be seen as one)."""
    if text is None:
        return DASH
    if text == "":
        return "''"
    return "".join(c if c == " " or c.isprintable() else _escape(c) for c in text)


def _is_control(c: str) -> bool:
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F


def _escape(c: str) -> str:
    o = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


def number(x: float | int | None, digits: int = 3) -> str:
    """A figure rounded to what a reader needs: `digits` significant digits, thousands
    separated, no exponent for ordinary sizes."""
    if x is None:
        return DASH
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if not math.isfinite(x):
        return "−∞" if x < 0 else ("∞" if x > 0 else "n/a")
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    if abs(x) < 1e-4:
        return f"{x:.1e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def seconds(x: float | None) -> str:
    return DASH if x is None else f"{number(x)} s"


def clip(text: str | None, limit: int) -> str:
    """At most `limit` characters, saying how many more there were."""
    if text is None:
        return ""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not shown)"


def shown(value: Any) -> Any:
    """Every `{{ value }}` passes here before escaping: the one place that decides how a
    value reads on a page."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    if value is None:
        return DASH
    if isinstance(value, (bool, int, float)):
        return number(value)
    if isinstance(value, str):
        return visible(value)
    return visible(str(value))


def made_at() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


@lru_cache(maxsize=1)
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("evalsuite", "templates"), autoescape=True, finalize=shown,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(number=number, seconds=seconds, token=token_text, clip=clip)
    env.globals.update(CSP=CSP)
    return env


def render(template: str, **context: Any) -> str:
    """A page from evalsuite/templates/<template>, every value shown through `shown()`."""
    return _environment().get_template(template).render(made_at=made_at(), **context)
