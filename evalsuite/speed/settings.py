"""What a speed profile is asked to do (`SpeedSettings`), and the checks of what a person typed:
comma-separated lists as in `sweep --set`, a duration like 30m, and every bad value refused
with a line that names the option (exit 2 at the command line)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..client.errors import UsageError
from .load_rows import SLO_KEYS, Slo

WORKLOADS = ("math", "code", "prose", "extract")
OUTPUTS = ("table", "json", "csv", "none")


@dataclass(frozen=True)
class SpeedSettings:
    endpoint: str | None = None          # None with `serve`: the managed server's URL
    model: str | None = None             # None: the first one /v1/models lists
    api: str = "chat"
    pp: tuple[int, ...] = (512,)
    tg: tuple[int, ...] = (128,)
    depth: tuple[int, ...] = (0,)
    concurrency: tuple[int, ...] = (1,)
    runs: int = 5
    workloads: tuple[str, ...] = ("math",)   # "mix" is all four, each reported apart
    prefix_cache: bool = False           # also measure a context loaded once, then prompts over it
    duration_s: float | None = None      # a soak: hold the first concurrency this long on pack prompts
    data_dir: Path | None = None
    timeout: float = 600.0               # seconds one request may take
    ignore_eos: bool = True              # every request generates exactly --tg tokens
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    api_key_env: str | None = None
    json_path: Path | None = None
    html_path: Path | None = None
    output: str = "table"
    label: str | None = None
    seed: int = 0                        # where in the packs' text the prompts start
    warmup: bool = True
    serve: str | None = None             # a managed server (evalsuite/serve), restarted as in `run`
    serve_timeout: float = 600.0
    max_restarts: int = 3
    serve_hang_timeout: float = 120.0
    server_folder: Path | None = None    # where the managed server's log goes (default: beside --json)
    quiet: bool = False
    argv: tuple[str, ...] = ()
    # load by arrival rate (--rate): requests per second, Poisson arrivals seeded by rate_seed
    rates: tuple[float, ...] = ()
    slo: Slo = field(default_factory=Slo)
    requests: int = 60                   # per rate (or sessions per rate with --replay / --session)
    rate_seed: int = 0
    # a session replayed (--replay FILE) or made from the packs' text (--session TURNS, to the first --depth)
    replay: Path | None = None
    session_turns: int | None = None
    turn_tokens: int | None = None       # --tg given: every turn generates that many (else the logged length)
    # Fresh text in every run is what keeps a prefix cache from serving the prompts. False only
    # for the tests that show what a profile reusing one text would report (the cache's figure).
    fresh_text: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "pp": list(self.pp), "tg": list(self.tg), "depth": list(self.depth),
                "concurrency": list(self.concurrency), "runs": self.runs, "workloads": list(self.workloads),
                "prefix_cache": self.prefix_cache, "duration_s": self.duration_s, "ignore_eos": self.ignore_eos,
                "extra_body": dict(self.extra_body), "seed": self.seed, "timeout": self.timeout,
                "serve": self.serve, "warmup": self.warmup, "rates": [str(r) for r in self.rates],
                "slo": self.slo.to_dict() if self.slo.given else None, "requests": self.requests,
                "rate_seed": self.rate_seed, "replay": str(self.replay) if self.replay else None,
                "session_turns": self.session_turns, "turn_tokens": self.turn_tokens}


def parse_ints(text: str | None, option: str, minimum: int, default: tuple[int, ...]) -> tuple[int, ...]:
    """"512,2048" -> (512, 2048); each value at least `minimum`, else a UsageError naming the option."""
    if text is None:
        return default
    values = []
    for word in str(text).split(","):
        word = word.strip().replace("_", "")
        if not word:
            continue
        match = re.fullmatch(r"(-?\d+)([kK]?)", word)
        if not match:
            raise UsageError(f"{option} {text!r}: {word!r} is not a whole number (write e.g. {option} 512,2048 or 4k)")
        value = int(match.group(1)) * (1024 if match.group(2) else 1)
        if value < minimum:
            what = {0: "negative", 1: "zero or negative"}.get(minimum, f"below {minimum}")
            raise UsageError(f"{option} {value}: a {option.lstrip('-')} cannot be {what} (each value must be at least "
                             f"{minimum})")
        values.append(value)
    if not values:
        raise UsageError(f"{option} {text!r}: give at least one value")
    return tuple(dict.fromkeys(values))


def parse_workloads(text: str | None) -> tuple[str, ...]:
    if text is None:
        return ("math",)
    out = []
    for word in str(text).split(","):
        word = word.strip().lower()
        if not word:
            continue
        if word == "mix":
            out.extend(WORKLOADS)
        elif word in WORKLOADS:
            out.append(word)
        else:
            raise UsageError(f"--workload {word!r}: choose math, code, prose, extract or mix")
    if not out:
        raise UsageError("--workload: give one of math, code, prose, extract or mix")
    return tuple(dict.fromkeys(out))


_TIME = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s)?$")


def parse_slo(text: str | None) -> Slo:
    """"ttft=1s,tpot=60ms" (and itl=, e2e=, share=0.95) -> Slo; a bad part is a UsageError naming it."""
    if not text:
        return Slo()
    values: dict[str, float] = {}
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition("=")
        key = key.strip().lower()
        if key == "share":
            try:
                share = float(value)
            except ValueError:
                share = -1.0
            if not 0 < share <= 1:
                raise UsageError(f"--slo {part!r}: share is a fraction of the requests, above 0 and at most 1")
            values["share"] = share
            continue
        if key not in SLO_KEYS:
            raise UsageError(f"--slo {part!r}: the limits are {', '.join(SLO_KEYS)} (and share), e.g. --slo ttft=1s,tpot=60ms")
        match = _TIME.match(value.strip().lower())
        if not match:
            raise UsageError(f"--slo {part!r}: write a time like 1s, 500ms or 0.5 (seconds)")
        seconds = float(match.group(1)) / (1000.0 if match.group(2) == "ms" else 1.0)
        if seconds <= 0:
            raise UsageError(f"--slo {part!r}: a limit must be more than 0")
        values[key] = seconds
    return Slo(**values)


def parse_rates(text: str | None) -> tuple[float, ...]:
    """"0.5,1,2,inf" -> (0.5, 1.0, 2.0, inf): requests per second; inf sends them all at once."""
    if text is None:
        return ()
    out = []
    for word in str(text).split(","):
        word = word.strip().lower()
        if not word:
            continue
        try:
            rate = math.inf if word in ("inf", "infinity") else float(word)
        except ValueError:
            raise UsageError(f"--rate {text!r}: {word!r} is not a rate (requests per second, or inf)") from None
        if not rate > 0 or math.isnan(rate):
            raise UsageError(f"--rate {word}: a rate must be more than 0 requests per second")
        out.append(rate)
    if not out:
        raise UsageError(f"--rate {text!r}: give at least one rate")
    return tuple(dict.fromkeys(out))


_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str | None) -> float | None:
    """"30m" / "90s" / "1h30m" / "45" (seconds) -> seconds; None stays None."""
    if text is None:
        return None
    raw = str(text).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        seconds = float(raw)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smh])", raw)
        if not parts or "".join(f"{n}{u}" for n, u in parts) != raw.replace(" ", ""):
            raise UsageError(f"--duration {text!r}: write a duration like 90s, 30m or 1h30m")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(f"--duration {text!r}: a soak must last more than 0 seconds")
    return seconds


def check(settings: SpeedSettings) -> SpeedSettings:
    """The checks that need more than one option; returns the settings unchanged."""
    if settings.api not in ("chat", "completions"):
        raise UsageError(f"--api must be chat or completions, not {settings.api!r}")
    if settings.serve and settings.endpoint:
        raise UsageError("give either --endpoint or --serve, not both: --serve starts the server and asks it")
    if settings.runs < 1:
        raise UsageError(f"--runs {settings.runs}: at least one run")
    if settings.output not in OUTPUTS:
        raise UsageError(f"-o {settings.output!r}: choose {', '.join(OUTPUTS)}")
    if settings.timeout <= 0:
        raise UsageError(f"--timeout {settings.timeout:g}: must be more than 0 seconds")
    if not settings.pp or min(settings.pp) < 1:
        raise UsageError("--pp: each prompt must be at least 1 token")
    if not settings.tg or min(settings.tg) < 1:
        raise UsageError("--tg 0: each test generates at least 1 token (decode is measured over the tokens after the first)")
    if min(settings.depth) < 0:
        raise UsageError("--depth: a depth cannot be negative")
    if min(settings.concurrency) < 1:
        raise UsageError("--concurrency 0: at least one stream")
    if settings.replay is not None and settings.session_turns is not None:
        raise UsageError("give either --replay FILE (a logged session) or --session TURNS (one made from the packs' text)")
    if settings.session_turns is not None and settings.session_turns < 1:
        raise UsageError(f"--session {settings.session_turns}: at least one turn")
    if settings.session_turns is not None and max(settings.depth) < 1:
        raise UsageError("--session needs --depth D: the context the session grows to by its last turn")
    if settings.requests < 1:
        raise UsageError(f"--requests {settings.requests}: at least one request per rate")
    if settings.slo.given and not settings.rates:
        raise UsageError("--slo needs --rate: goodput is measured per arrival rate")
    if settings.rates and settings.prefix_cache:
        raise UsageError("--prefix-cache and --rate measure different things: give one")
    if settings.duration_s and not settings.rates and (settings.replay or settings.session_turns):
        raise UsageError("--duration is a soak of pack prompts; with --replay or --session give --rate to bound each rate")
    if settings.endpoint and "," in settings.endpoint and not settings.rates:
        raise UsageError("several endpoints (-e URL1,URL2) are loaded together by --rate only")
    return settings
