"""A whole profile of one endpoint: the tests of the grid one after another, or a soak.

    profile = await measure_profile(settings, url)          # a Profile (rows.py), JSON in/out there

Before the first test: the model (the first one /v1/models lists, or --model, which must be
listed), the engine (evalsuite/engines detection), the round trip (median of GET /models), the
chat template's tokens from a first request, and a warm-up request. Then, per workload, per
depth, pp, tg and concurrency, one test (measure.py); with --prefix-cache, for each depth > 0,
the same test once more over a context loaded first. A test whose every request gets a 400 (a
depth past the model's context) gets that message in its rows and the next test goes on. A
server that goes away ends the profile: the rows so far are kept and the profile is "partial".
With a managed server (`hold`), the test is measured again once the server is back.
"""
from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import replace
from typing import Callable

from .endpoint import EndpointError, SpeedEndpoint, UsageError, api_key_from_env, engine_name, now_iso, redact_url
from .figures import error_rows, rows_of
from .measure import BenchTest, make_prompts, run_test
from .prompts import Counter, PromptMaker
from .rows import Profile, Row, Soak
from .settings import SpeedSettings
from .text import corpus

Echo = Callable[[str], None]


class ServerDown(Exception):
    """The endpoint stopped answering: the profile ends, partial."""


def tests_of(settings: SpeedSettings, workload: str) -> list[BenchTest]:
    tests = []
    for depth, pp, tg, c in itertools.product(settings.depth, settings.pp, settings.tg, settings.concurrency):
        tests.append(BenchTest(workload, pp, tg, depth, c, settings.runs))
        if settings.prefix_cache and depth > 0:
            tests.append(BenchTest(workload, pp, tg, depth, c, settings.runs, cached_mode=True))
    return tests


async def choose_model(endpoint: SpeedEndpoint, wanted: str | None) -> str:
    try:
        models = await endpoint.models()
    except EndpointError as e:
        raise UsageError(f"nothing usable answers at {endpoint.url} (--endpoint): {e.message}") from None
    except Exception as e:   # NotOpenAICompatible and the like
        raise UsageError(f"{endpoint.url} is not an OpenAI-compatible endpoint: {e}") from None
    if wanted is None:
        if not models:
            raise UsageError(f"{endpoint.url}/models lists no model: give --model")
        return models[0]
    if models and wanted not in models:
        raise UsageError(f"--model {wanted!r} is not served at {endpoint.url} (it lists: {', '.join(models[:10])})")
    return wanted


async def _first_tokens(endpoint: SpeedEndpoint, model: str, text: str, extra) -> int | None:
    sample = await endpoint.stream(endpoint.body(model, text, 1, False, extra))
    if sample.error is not None:
        raise sample.error
    return sample.prompt_tokens


async def measure_profile(settings: SpeedSettings, url: str, echo: Echo | None = None,
                          checkpoint: Callable[[Profile], None] | None = None, hold=None) -> Profile:
    """Every test of `settings` against `url`. `checkpoint(profile)` after each test (the JSON
    is written there, so a crash keeps what was measured); `hold`: a managed server's watch."""
    say = echo or (lambda line: None)
    api_key = api_key_from_env(settings.api_key_env)
    url = url.split(",")[0].strip()      # -e URL1,URL2: the others are loaded by --rate beside the first
    endpoint = SpeedEndpoint(url, api_key, settings.timeout, settings.api)
    extra = dict(settings.extra_body)
    rows: list[Row] = []
    profile = Profile(model=settings.model or "?", endpoint=redact_url(url), rows=(), status="running",
                      label=settings.label, started_at=now_iso(), settings=settings.to_dict(), argv=settings.argv)
    try:
        model = await choose_model(endpoint, settings.model)
        engine = await asyncio.to_thread(engine_name, url, api_key)
        latency = await endpoint.round_trip()
        counter = Counter(endpoint, model)
        try:
            await counter.calibrate(lambda text: _first_tokens(endpoint, model, text, extra))
        except EndpointError as e:
            raise UsageError(f"the first request to {endpoint.url} failed: {e.message}") from None
        if counter.exact is False:
            say(f"{endpoint.url} has no /tokenize: prompts are sized from the usage of two first requests "
                f"({counter.chars_per_token:.2f} characters per token); the figures use each request's own usage")
        profile = replace(profile, model=model, engine=engine, latency_ms=1000 * latency,
                          token_counts="/tokenize" if counter.exact else "usage")
        notes = [f"round trip {1000 * latency:.2f} ms (median of GET /models), subtracted from each TTFT for the prefill time",
                 f"chat template: {counter.template_tokens} tokens around each prompt, counted in pp"
                 if settings.api == "chat" else f"{counter.template_tokens} special tokens around each prompt, counted in pp"]
        if settings.warmup:
            warm = await endpoint.stream(endpoint.body(model, "Say hello.", min(16, max(settings.tg)), settings.ignore_eos,
                                                       extra))
            if warm.error is not None and warm.error.kind in ("bad_request",):
                raise UsageError(f"{endpoint.url} refused the request: {warm.error.message}"
                                 + (" (try --no-ignore-eos)" if "ignore_eos" in warm.error.message else ""))
        profile = replace(profile, notes=tuple(notes))
        if settings.rates:
            load = await run_load(url, endpoint, model, settings, counter, latency, say)
            return replace(profile, load=load, status="finished", ended_at=now_iso())
        if settings.replay is not None or settings.session_turns:
            replay = await run_replay(endpoint, model, settings, counter, latency, say)
            return replace(profile, replay=replay, status="finished", ended_at=now_iso())
        if settings.duration_s:
            soak = await run_soak(endpoint, settings, model, corpus(settings.workloads[0], settings.data_dir), say, hold)
            return replace(profile, soak=soak, status="finished", ended_at=now_iso())
        for workload in settings.workloads:
            maker = PromptMaker(corpus(workload, settings.data_dir), counter, seed=settings.seed,
                                fresh=settings.fresh_text)
            for test in tests_of(settings, workload):
                new = await _one_test(endpoint, maker, test, model, settings, latency, extra, hold, say)
                rows += new
                for row in new:
                    say(_progress(row))
                profile = profile.with_rows(rows)
                if any(r.partial for r in new):
                    profile = replace(profile, status="partial", ended_at=now_iso())
                    if checkpoint:
                        checkpoint(profile)
                    return profile
                if checkpoint:
                    checkpoint(profile)
        return replace(profile, status="finished", ended_at=now_iso())
    except (asyncio.CancelledError, KeyboardInterrupt):
        profile = replace(profile.with_rows(rows), status="interrupted", ended_at=now_iso())
        if checkpoint:
            checkpoint(profile)
        raise
    finally:
        await endpoint.close()


async def _one_test(endpoint, maker, test, model, settings, latency, extra, hold, say) -> list[Row]:
    try:
        prompts = await make_prompts(maker, test)
    except (EndpointError, OSError) as e:
        return error_rows(test, f"the prompts could not be made: {e}")
    attempts = 0
    while True:
        result = await run_test(endpoint, prompts, test, model, settings.ignore_eos, extra, hold)
        if result.down is None or hold is None:
            return rows_of(result, latency)
        # a managed server: wait until it is back (or given up), then measure the test again
        attempts += 1
        name = Row(test="pp", workload=test.workload, pp=test.pp, tg=test.tg, depth=test.depth,
                   concurrency=test.concurrency, runs=0, figure=None, cached_mode=test.cached_mode).name
        say(f"{test.workload} {name}: the server went away ({result.down}); measuring the test again once it is back")
        if not await hold.wait_up() or attempts > settings.max_restarts:
            return rows_of(result, latency)
        prompts = await make_prompts(maker, test)   # fresh text: the restarted server has an empty cache anyway


def _progress(row: Row) -> str:
    if row.error:
        return f"{row.workload} {row.name}: {row.error}"
    f = row.figure
    figure = "n/a" if not f or f.mean is None else f"{f.mean:.2f}" + (f" ± {f.std:.2f}" if f.std is not None else "")
    agg = f", aggregate {row.aggregate.mean:.2f}" if row.aggregate and row.aggregate.mean is not None else ""
    return f"{row.workload} {row.name}: {figure} {row.unit}{agg}" + (f", {row.failed} failed" if row.failed else "")


# ----------------------------------------------------------------------------- sessions and load


async def _sessions(settings: SpeedSettings, counter, say: Echo):
    """The conversations to replay (the file's, or one made from the packs' text) and their source."""
    from .replay import read_conversations, synthetic_conversation

    workload = settings.workloads[0]
    maker = PromptMaker(corpus(workload, settings.data_dir), counter, seed=settings.seed, fresh=settings.fresh_text)
    if settings.replay is not None:
        conversations = read_conversations(settings.replay)
        turns = sum(len(c.turns) for c in conversations)
        source = f"{settings.replay.name} ({len(conversations)} conversation(s), {turns} turns)"
    else:
        depth, tg = max(settings.depth), settings.turn_tokens or settings.tg[0]
        say(f"session: {settings.session_turns} turns growing to {depth} tokens of {workload} text, {tg} tokens a turn")
        conversations = [await synthetic_conversation(maker, settings.session_turns, depth, tg)]
        source = f"synthetic: {settings.session_turns} turns to depth {depth} ({workload}), tg {tg}"
    return conversations, source, maker


async def run_replay(endpoint: SpeedEndpoint, model: str, settings: SpeedSettings, counter, latency: float,
                     say: Echo):
    """Each conversation's turns in order, each sent with everything before it."""
    from .replay import run_session, turn_of, turn_requests
    from .replay_rows import Replay

    conversations, source, maker = await _sessions(settings, counter, say)
    turns = []
    for n, conversation in enumerate(conversations, 1):
        requests = await turn_requests(conversation, f"Session {n} ({maker.mark}).", counter.count, settings.turn_tokens)

        def progress(k: int, sample, counters, requests=requests, n=n) -> None:
            turn = turn_of(k, sample, requests[k - 1].max_tokens, latency, n, counters)
            turns.append(turn)
            figure = "failed" if turn.error else (f"context {turn.context_tokens}, cached {turn.cached_tokens}, TTFT "
                                                  f"{turn.ttft_ms or 0:.0f} ms, decode "
                                                  + (f"{turn.decode_tps:.1f}" if turn.decode_tps else "n/a") + " t/s")
            say(f"session {n} turn {k}/{len(requests)}: {figure}")

        await run_session(endpoint, model, requests, settings.ignore_eos, dict(settings.extra_body), progress,
                          counters=True)
    notes = ("each turn sent with everything before it; the logged assistant messages are the history of the next "
             "turn",)
    return Replay(source, tuple(turns), notes)


async def run_load(url: str, endpoint: SpeedEndpoint, model: str, settings: SpeedSettings, counter, latency: float,
                   say: Echo):
    """Each --rate in turn: --requests requests (or sessions) on a seeded Poisson schedule, over
    every endpoint of -e URL1,URL2 (arrival i to endpoint i mod k), on fresh text per rate."""
    from .load import describe_rate, run_rate, single_request_jobs
    from .load_rows import LoadSweep

    urls = [u.strip() for u in (settings.endpoint or url).split(",") if u.strip()] or [url]
    endpoints = [endpoint] + [SpeedEndpoint(u, api_key_from_env(settings.api_key_env), settings.timeout, settings.api)
                              for u in urls[1:]]
    try:
        models = [model] + [await choose_model(e, settings.model) for e in endpoints[1:]]
        extra = dict(settings.extra_body)
        sessions = settings.replay is not None or bool(settings.session_turns)
        if sessions:
            conversations, workload, maker = await _sessions(settings, counter, say)
        else:
            maker = PromptMaker(corpus(settings.workloads[0], settings.data_dir), counter, seed=settings.seed,
                                fresh=settings.fresh_text)
            pp, tg, depth = settings.pp[0], settings.tg[0], settings.depth[0]
            workload = f"{settings.workloads[0]} pp{pp} tg{tg}" + (f" @ d{depth}" if depth else "")
        points = []
        for rate in settings.rates:
            if sessions:
                from .replay import run_session, turn_requests

                jobs = []
                for k in range(settings.requests):
                    requests = await turn_requests(conversations[k % len(conversations)],
                                                   f"Session {k + 1} ({maker.mark}, rate {describe_rate(rate)}).",
                                                   counter.count, settings.turn_tokens)

                    async def job(e: int, requests=requests):
                        return await run_session(endpoints[e], models[e], requests, settings.ignore_eos, extra)
                    jobs.append(job)
            else:
                prompts = [await maker.next(depth, pp) for _ in range(settings.requests)]
                jobs = single_request_jobs(endpoints, models, [endpoint.body(model, p.content, tg, settings.ignore_eos,
                                                                             extra) for p in prompts])
            say(f"rate {describe_rate(rate)}/s: {len(jobs)} {'sessions' if sessions else 'requests'}"
                + (f" over {len(endpoints)} endpoints" if len(endpoints) > 1 else ""))
            point = await run_rate(rate, jobs, len(endpoints), settings.slo, settings.rate_seed, settings.duration_s)
            points.append(point)
            say(f"rate {describe_rate(rate)}/s: TTFT p50 {point.ttft_ms[0] or 0:.0f} ms, p99 {point.ttft_ms[2] or 0:.0f} ms"
                f", {point.failed} failed, client lag p99 {point.lag_ms[1] or 0:.1f} ms"
                + (f", within the SLO {100 * point.good_share:.0f}%" if point.good_share is not None else ""))
        return LoadSweep(tuple(points), settings.slo, settings.rate_seed, workload, tuple(redact_url(u) for u in urls))
    finally:
        for e in endpoints[1:]:
            await e.close()


# ----------------------------------------------------------------------------- soak


async def run_soak(endpoint: SpeedEndpoint, settings: SpeedSettings, model: str, text, say: Echo, hold=None) -> Soak:
    """Hold the first --concurrency for --duration on the workload's pack prompts (each with its
    own numbered first line, so none is served from a cache), then stop: requests, failures,
    restarts, and the aggregate t/s of each window of the run. A request still running at the
    end is cut there and the tokens it streamed are counted (usage's tokens per chunk of the
    finished requests, times its chunks); a window in which the server was down (requests failed,
    no token came) is a gap, not a zero."""
    c, tg, duration = settings.concurrency[0], settings.tg[0], float(settings.duration_s)
    window = min(60.0, max(0.5, duration / 60))
    extra = dict(settings.extra_body)
    start = time.perf_counter()
    deadline = start + duration
    n_windows = max(1, int(duration / window + 0.999))
    tokens = [0.0] * n_windows
    chunks = [0] * n_windows           # chunks of finished requests without usage, and of cut ones
    down = [False] * n_windows
    counts = {"requests": 0, "failed": 0, "tokens": 0, "cut": 0, "usage_tokens": 0, "usage_chunks": 0, "no_usage": 0}
    number = itertools.count(1)
    tasks = text.tasks

    def window_of(at: float) -> int | None:
        k = int((at - start) / window)
        return k if 0 <= k < n_windows else None

    async def stream() -> None:
        while time.perf_counter() < deadline:
            if hold is not None and hold.restarting:
                await hold.wait_up()
                continue
            n = next(number)
            content = f"Request {n}.\n" + tasks[(settings.seed + n) % len(tasks)]
            body = endpoint.body(model, content, tg, settings.ignore_eos, extra)
            sample = await endpoint.stream(body, cut_at=deadline)
            if sample.cut:
                counts["cut"] += 1
            else:
                counts["requests"] += 1
            if not sample.ok:
                counts["failed"] += 1
                k = window_of(sample.started + sample.total)
                if k is not None and sample.error.kind in ("connection", "stream_broken", "timeout", "server_error"):
                    down[k] = True
                if sample.error.kind in ("connection",) and hold is None:
                    await asyncio.sleep(0.5)   # a server down: do not spin; every try is a failure counted
                continue
            if sample.completion_tokens is None:
                counts["no_usage"] += not sample.cut
                for t in sample.token_times:
                    if (k := window_of(sample.started + t)) is not None:
                        chunks[k] += 1
                continue
            counts["tokens"] += sample.completion_tokens
            counts["usage_tokens"] += sample.completion_tokens
            counts["usage_chunks"] += sample.chunks
            for t, weight in zip(sample.token_times, sample.chunk_tokens()):
                if (k := window_of(sample.started + t)) is not None:
                    tokens[k] += weight

    say(f"soak: concurrency {c}, tg {tg}, for {duration:g} s on {text.workload} prompts")
    await asyncio.gather(*(stream() for _ in range(c)))
    elapsed = min(time.perf_counter(), deadline) - start
    notes = []
    per_chunk = counts["usage_tokens"] / counts["usage_chunks"] if counts["usage_chunks"] else None
    if per_chunk is None and (counts["no_usage"] or any(chunks)):
        notes.append("the server sent no usage: no token counts, so no rates (never estimated from characters)")
    if counts["cut"]:
        notes.append(f"{counts['cut']} request(s) cut at the end: their streamed chunks counted at "
                     + (f"{per_chunk:.2f} tokens a chunk (the finished requests' usage)" if per_chunk else "no rate"))
    series: list[tuple[float, float | None]] = []
    for k in range(n_windows):
        end = min((k + 1) * window, elapsed)
        width = end - k * window
        if width <= 0.25 * window:
            continue
        counted = tokens[k] + (chunks[k] * per_chunk if per_chunk else 0.0)
        if per_chunk is None or (down[k] and counted == 0):
            series.append((round(end, 3), None))     # a gap: the server was down, or nothing was counted
        else:
            series.append((round(end, 3), counted / width))
    if any(v is None for _, v in series) and per_chunk is not None:
        notes.append(f"{sum(1 for _, v in series if v is None)} window(s) with the server down: gaps, left out "
                     "of the mean")
    restarts = hold.restarts if hold is not None else 0
    return Soak(duration, c, tg, counts["requests"], counts["failed"], restarts, window, tuple(series),
                counts["tokens"] + round(sum(chunks) * per_chunk if per_chunk else 0), counts["cut"], tuple(notes))
