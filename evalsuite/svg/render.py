"""Render model-written SVG to PNG, safely, after a run (`evalsuite svg-render RUN`).

The SVG is untrusted. Three layers keep it from reading anything:
1. it must pass the grader's validation (defusedxml: no DTD, entities or external
   references; size and element caps);
2. before drawing, every reference that is not a fragment (#id) or a small data: URI is
   removed: href/xlink:href/src attributes, url(...) in attributes and CSS, @import and
   xml:base; <script> and <foreignObject> are dropped;
3. cairosvg draws with unsafe=False and a url_fetcher that refuses everything except
   data: URIs under MAX_DATA_URI_BYTES (decoded here, never by urllib), so a reference
   the stripping missed still reads nothing.
Drawing runs in a child process with a wall-clock limit and an address-space cap, so a
pathological document costs at most RENDER_TIMEOUT_S and cannot exhaust memory.

Output: RENDER_SIZE x RENDER_SIZE PNG on white (aspect ratio kept, centred), plus a
blank check (every pixel the same colour).
"""
from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable
from xml.etree.ElementTree import Element

RENDER_SIZE = 512
RENDER_TIMEOUT_S = 20.0
MAX_DATA_URI_BYTES = 256 * 1024
WORKER_MEMORY_BYTES = 2 << 30
RENDERS_DIR = "renders"
INDEX_FILE = "index.json"
EMPTY_SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>'

_URL_FUNCTION = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
_IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
# elements whose whole job is to draw what their href points at
_DRAWS_ITS_REFERENCE = ("image", "use", "feImage", "tref")
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*")


@dataclass(frozen=True)
class RenderResult:
    png: bytes | None
    error: str | None = None
    refused: tuple[str, ...] = ()      # references removed or refused (first 200 chars each)
    blank: bool | None = None          # every pixel the same colour
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.png is not None and self.error is None


# ----------------------------------------------------------------------------- reference policy


def allowed_reference(value: str) -> bool:
    """A reference we let through: a fragment inside the document, or a small data: URI."""
    v = value.strip()
    if v.startswith("#"):
        return True
    return v[:5].lower() == "data:" and len(v) <= MAX_DATA_URI_BYTES


def decode_data_uri(url: str) -> bytes:
    """Bytes of a data: URI (base64 or percent-encoded). Raises ValueError when malformed."""
    header, sep, payload = url[5:].partition(",")
    if not sep:
        raise ValueError("data: URI without a comma")
    if header.lower().endswith(";base64"):
        return base64.b64decode(re.sub(r"\s+", "", payload), validate=True)
    return urllib.parse.unquote_to_bytes(payload)


def refusing_fetcher(refused: list[str]) -> Callable[[str, str], bytes]:
    """A cairosvg url_fetcher: small data: URIs are decoded here; everything else (http,
    https, file, relative paths, big data:) is refused and noted, and an empty image returned."""

    def fetch(url: str, resource_type: str) -> bytes:
        if url and allowed_reference(url) and not url.startswith("#"):
            try:
                return decode_data_uri(url)
            except ValueError:
                pass
        refused.append(f"fetch {resource_type}: {url[:200]}")
        return b"" if resource_type == "text/css" else EMPTY_SVG

    return fetch


def _strip_urls(text: str, where: str, refused: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        if allowed_reference(m.group(2)):
            return m.group(0)
        refused.append(f"{where}: url({m.group(2)[:200]})")
        return "none"

    if where == "<style>":
        for m in _IMPORT.finditer(text):
            refused.append(f"{where}: {m.group(0)[:200]}")
        text = _IMPORT.sub("", text)
    return _URL_FUNCTION.sub(replace, text)


def strip_external_references(root: Element) -> list[str]:
    """Remove every non-local reference from the tree in place; return what was removed."""
    from evalsuite.graders.svg import local_name

    refused: list[str] = []
    for parent in list(root.iter()):
        for child in list(parent):
            name = local_name(child.tag)
            if name in ("script", "foreignObject"):
                parent.remove(child)
                refused.append(f"<{name}> element removed")
            elif name in _DRAWS_ITS_REFERENCE:
                bad = [v for a, v in child.attrib.items() if local_name(a) in ("href", "src") and not allowed_reference(v)]
                if bad:  # without its reference it draws nothing: drop it rather than let it resolve ""
                    parent.remove(child)
                    refused.append(f"<{name}> removed: {bad[0][:200]}")
    for el in root.iter():
        name = local_name(el.tag) or "?"
        for attr, value in list(el.attrib.items()):
            attr_name = local_name(attr)
            if attr_name in ("href", "src") and not allowed_reference(value):
                del el.attrib[attr]
                refused.append(f"<{name} {attr_name}>: {value[:200]}")
            elif attr_name == "base":          # xml:base changes how references resolve
                del el.attrib[attr]
                refused.append(f"<{name} xml:base>: {value[:200]}")
            elif "url(" in value.lower():
                el.set(attr, _strip_urls(value, f"<{name} {attr_name}>", refused))
        if name == "style" and el.text:
            el.text = _strip_urls(el.text, "<style>", refused)
    return refused


# ----------------------------------------------------------------------------- drawing


def render_in_process(document: bytes, size: int = RENDER_SIZE) -> tuple[bytes, list[str]]:
    """Draw with cairosvg in this process, with the refusing fetcher (no stripping here).

    Used by the worker; tests call it directly to prove the fetcher alone reads nothing.
    """
    from cairosvg.surface import PNGSurface

    refused: list[str] = []
    png = PNGSurface.convert(bytestring=document, unsafe=False, url_fetcher=refusing_fetcher(refused),
                             output_width=size, output_height=size, background_color="white")
    return png, refused


def png_is_blank(png: bytes) -> bool:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        extrema = im.convert("RGBA").getextrema()
    return all(lo == hi for lo, hi in extrema)


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR), without decoding."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def _limit_worker_resources() -> None:
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the wall-clock limit still applies


def _worker_main(size: int) -> int:
    """stdin: the (already stripped) SVG; stdout: one JSON line, then the PNG bytes."""
    _limit_worker_resources()
    document = sys.stdin.buffer.read()
    try:
        png, refused = render_in_process(document, size)
        header = {"ok": True, "refused": refused, "blank": png_is_blank(png)}
    except Exception as e:  # anything cairosvg raises on odd input is a render failure, not a crash
        png, header = b"", {"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    sys.stdout.buffer.write(json.dumps(header).encode() + b"\n" + png)
    sys.stdout.buffer.flush()
    return 0


def render_svg(document: str, size: int = RENDER_SIZE, timeout_s: float = RENDER_TIMEOUT_S) -> RenderResult:
    """Validate, strip, and draw one SVG document in a time-limited child process."""
    from xml.etree.ElementTree import tostring

    from evalsuite.graders.svg import validate_svg

    started = time.monotonic()
    validation = validate_svg(document)
    if not validation.ok or validation.root is None:
        return RenderResult(None, "invalid SVG: " + "; ".join(validation.errors))
    root = validation.root
    refused = strip_external_references(root)
    cleaned = tostring(root, encoding="utf-8")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "evalsuite.svg.render", "--worker", str(size)],
            input=cleaned, capture_output=True, timeout=timeout_s,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired:
        return RenderResult(None, f"render timed out after {timeout_s:g}s", tuple(refused),
                            seconds=time.monotonic() - started)
    header_line, _, png = proc.stdout.partition(b"\n")
    try:
        header = json.loads(header_line)
    except json.JSONDecodeError:
        tail = proc.stderr.decode("utf-8", "replace")[-300:]
        return RenderResult(None, f"render worker failed (exit {proc.returncode}): {tail}", tuple(refused),
                            seconds=time.monotonic() - started)
    elapsed = time.monotonic() - started
    if not header.get("ok"):
        return RenderResult(None, header.get("error", "render failed"), tuple(refused), seconds=elapsed)
    return RenderResult(png, None, tuple(refused + header["refused"]), header["blank"], elapsed)


# ----------------------------------------------------------------------------- run folders


@dataclass(frozen=True)
class RenderEntry:
    """What renders/index.json says about one item."""

    id: str
    status: str                   # rendered, no-svg, invalid, failed, no-answer
    png: str | None = None        # path relative to the run folder
    error: str | None = None
    blank: bool | None = None
    refused: list[str] = field(default_factory=list)
    seconds: float | None = None
    size: int = RENDER_SIZE


def render_path(run_dir: Path, item_id: str) -> Path:
    """renders/<id>.png; ids come from a file, so refuse anything that could leave the folder."""
    if not _SAFE_ID.fullmatch(item_id) or any(part in (".", "..") for part in item_id.split("/")):
        raise ValueError(f"{run_dir}: item id {item_id!r} is not safe to use as a file name")
    return Path(run_dir) / RENDERS_DIR / f"{item_id}.png"


def read_render_index(run_dir: Path) -> dict[str, dict[str, Any]]:
    path = Path(run_dir) / RENDERS_DIR / INDEX_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON ({e})") from None
    return data if isinstance(data, dict) else {}


def render_run(run_dir: str | os.PathLike, size: int = RENDER_SIZE, timeout_s: float = RENDER_TIMEOUT_S,
               force: bool = False, progress: Callable[[str], None] | None = None) -> list[RenderEntry]:
    """Render every record's SVG into RUN/renders/<id>.png and write RUN/renders/index.json.

    The SVG is extracted again from the record's `answer` by the grader's own function,
    so old runs and regraded runs render the same way. Existing renders at the same size
    are kept unless `force`.
    """
    from evalsuite.graders.svg import extract_svg, validate_svg
    from evalsuite.store import load_run, write_json_atomic

    run_dir = Path(run_dir)
    run = load_run(run_dir)
    previous = {} if force else read_render_index(run_dir)
    entries: list[RenderEntry] = []
    for record in run.records:
        item_id = record["id"]
        target = render_path(run_dir, item_id)
        old = previous.get(item_id)
        if old and old.get("size") == size and (old.get("status") != "rendered" or target.exists()):
            entries.append(RenderEntry(**{k: old.get(k) for k in RenderEntry.__dataclass_fields__}))
            continue
        answer = record.get("answer")
        if answer is None:
            entries.append(RenderEntry(item_id, "no-answer", size=size))
            continue
        extraction = extract_svg(answer)
        if extraction.svg is None:
            entries.append(RenderEntry(item_id, "no-svg", error=extraction.reason, size=size))
            continue
        validation = validate_svg(extraction.svg)
        if not validation.ok:
            entries.append(RenderEntry(item_id, "invalid", error="; ".join(validation.errors), size=size))
            continue
        result = render_svg(extraction.svg, size, timeout_s)
        if not result.ok or result.png is None:
            entries.append(RenderEntry(item_id, "failed", error=result.error, refused=list(result.refused),
                                       seconds=round(result.seconds, 3), size=size))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(result.png)
            entries.append(RenderEntry(item_id, "rendered", png=target.relative_to(run_dir).as_posix(),
                                       blank=result.blank, refused=list(result.refused),
                                       seconds=round(result.seconds, 3), size=size))
        if progress:
            progress(f"{item_id}: {entries[-1].status}{' (blank)' if entries[-1].blank else ''}")
    (run_dir / RENDERS_DIR).mkdir(exist_ok=True)
    write_json_atomic(run_dir / RENDERS_DIR / INDEX_FILE, {e.id: asdict(e) for e in entries})
    return entries


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        raise SystemExit(_worker_main(int(sys.argv[2])))
    raise SystemExit("usage: python -m evalsuite.svg.render --worker SIZE (internal; use `evalsuite svg-render RUN`)")


def svg_render_main(run_dir: Path, size: int = RENDER_SIZE, timeout: float = RENDER_TIMEOUT_S, force: bool = False,
                    judge_endpoint: str | None = None, judge_model: str | None = None,
                    judge_api_key_env: str = "OPENAI_API_KEY", echo: Callable[[str], None] = print) -> int:
    """The `evalsuite svg-render` command: render each SVG answer (and optionally judge it); 2
    when the folder cannot be read."""
    from ..store import RunFolderError

    try:
        entries = render_run(run_dir, size=size, timeout_s=timeout, force=force)
    except (RunFolderError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    counts: dict = {}
    for e in entries:
        counts[e.status] = counts.get(e.status, 0) + 1
    blank = sum(1 for e in entries if e.blank)
    echo(f"{run_dir}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + f"; {blank} blank")
    if judge_endpoint:
        from .judge import judge_run

        results = judge_run(run_dir, judge_endpoint, judge_model, api_key=os.environ.get(judge_api_key_env))
        scored = [r.score for r in results if r.score is not None]
        mean = f"{sum(scored) / len(scored):.2f}" if scored else "—"
        echo(f"judge: {len(scored)}/{len(results)} scored, mean {mean} -> {Path(run_dir) / 'judge.jsonl'}")
    return 0
