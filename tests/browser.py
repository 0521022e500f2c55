"""Headless Chromium for the render tests of the HTML pages. CI installs Debian's `chromium`
(.ci/run); there a missing browser fails the test instead of skipping it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

WIDTH = 1400


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    why = "chromium absent: install Debian's `chromium` package (apt-get install -y chromium) to render the pages"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(why + " (CI=true: the render test must run)")
    pytest.skip(why)


def chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--hide-scrollbars", f"--user-data-dir={profile}", *args],
                          capture_output=True, timeout=120, check=False)


def page_width(binary: str, page: Path, work: Path, width: int = WIDTH) -> int:
    """The laid-out width of a page in a `width`-pixel window (document scrollWidth). The page
    forbids scripts, so a copy without its CSP meta and with one measuring script is loaded."""
    text = page.read_text(encoding="utf-8")
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text)
    probe = ("<script>window.addEventListener('load',function(){document.body.setAttribute('data-scroll-width',"
             "String(document.documentElement.scrollWidth))});</script>")
    copy = work / (page.stem + "-probe.html")
    copy.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    done = chromium(binary, work / "profile", f"--window-size={width},1000", "--virtual-time-budget=5000",
                    "--dump-dom", copy.resolve().as_uri())
    found = re.search(r'data-scroll-width="(\d+)"', done.stdout.decode(errors="replace"))
    assert found, done.stderr.decode(errors="replace")[-2000:]
    return int(found.group(1))


def screenshot(binary: str, page: Path, shot: Path, work: Path, width: int = WIDTH, height: int = 1600) -> Path:
    done = chromium(binary, work / "profile", f"--screenshot={shot}", f"--window-size={width},{height}",
                    page.resolve().as_uri())
    assert shot.exists(), done.stderr.decode(errors="replace")[-2000:]
    return shot
