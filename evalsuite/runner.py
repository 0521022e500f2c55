"""`evalsuite run`: items -> requests -> responses -> verdicts -> records, crash-safe and resumable.

The runner keeps `concurrency` requests in flight per endpoint, retries what may be retried
(bounded in count and time, honouring Retry-After, with jitter), grades each answer in a thread
pool once its request slot is free again, and appends one record per finished item to
records.jsonl as soon as it is graded (its token logprobs, if kept, to the side file first).
Anything not yet recorded when the process dies is simply asked again on resume.
"""
from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .client import Decoding, Endpoint, Request, now_iso, redact_url
from .engines import apply_neutral_settings, interrupt_hint, start_examples
from .errors import EndpointError, UsageError
from .grade_pool import GradePool
from .manifest import make_manifest, prepare_run_dir, resume_command
from .progress import Progress
from .run_items import build_request, find_pack, jobs_of, load_items, sample_decoding
from .run_records import error_record, response_record
from .run_settings import RunSettings
from .store import (MANIFEST, PARQUET, RECORDS, SUMMARY, TOKENS, RecordWriter, compact_records, compact_tokens,
                    iter_record_lines, read_records, sample_key, write_json_atomic, write_parquet)
from .store.record import BULKY_FIELDS, slim

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


# ----------------------------------------------------------------------------- the run

class EndpointDown(Exception):
    pass


class ReplicaDown(Exception):
    """This replica cannot be reached while another one answers: its item goes back to the queue."""


DOWN_POLL_S = 5.0  # longest wait between two tries of an endpoint that does not answer
# The watchdog (docs/reliability.md, "A server that stops answering"): an endpoint with a request
# in flight that has received nothing for STALL_S, or one a request could not connect to, is
# probed (GET /models on a new connection, PROBE_TIMEOUT_S; at most once per STALL_S while it
# answers); if that fails it is DOWN and its requests in flight are cut, to be sent again once a
# probe (every WATCH_TICK_S while it is down) answers.
STALL_S = 5.0
PROBE_TIMEOUT_S = 3.0
WATCH_TICK_S = 0.5
GRADE_DRAIN_S = 30.0  # longest wait, at the end or on Ctrl-C, for responses still being graded


class Scheduler:
    """Workers pull items from one queue; each worker is bound to one endpoint, so a
    faster replica simply takes more items."""

    def __init__(self, settings: RunSettings, pack, endpoints: list[Endpoint], model: str,
                 writer: RecordWriter, progress: Progress):
        self.settings, self.pack, self.endpoints, self.model = settings, pack, endpoints, model
        self.writer, self.progress = writer, progress
        # per endpoint: since when nothing has answered it (None while it answers); per endpoint so
        # that one healthy replica does not hide a dead one
        self.down_since: dict[str, float | None] = {}
        self.stopped_reason: str | None = None
        self.retries = 0
        self.retrying = 0          # items now waiting to be asked again (shown by the progress display)
        self.flush_pending = False
        # replicas taken out of the rotation: url -> when, why (back in when they answer again)
        self.retired: dict[str, dict[str, Any]] = {}
        self.in_flight = 0
        # managed servers being restarted (evalsuite.serve): their workers hold their requests
        self.restarting: set[str] = set()
        # responses whose logprobs were partly missing (speculative tokens), for the manifest
        self.logprobs_missing = {"tokens": 0, "items": 0}
        self.answering: dict[str, asyncio.Event] = {}   # per endpoint: set while it is not down
        self._probing: dict[str, int] = {}               # url -> probes of it in flight
        self._answered_probe: dict[str, float] = {}     # url -> when a probe of it last answered
        self._requests: dict[str, Request] = {}         # item id -> its request, while its samples are asked
        self._decodings: dict[int, Decoding] = {}       # sample index -> its decoding (its seed)

    def mark_down(self, url: str, since: float) -> None:
        was_up = self.down_since.get(url) is None
        self.down_since[url] = self.down_since.get(url) or since
        self.answering.setdefault(url, asyncio.Event()).clear()
        if was_up:
            self.progress.endpoints_changed()

    def mark_up(self, url: str) -> None:
        self.down_since[url] = None
        self.answering.setdefault(url, asyncio.Event()).set()

    async def watch_endpoints(self) -> None:
        """Probe endpoints that look stuck or are down (see STALL_S); never decides an item's fate."""
        while True:
            await asyncio.sleep(WATCH_TICK_S)
            now = time.monotonic()
            for endpoint in self.endpoints:
                url = endpoint.url
                probing = self._probing.get(url, 0)
                if url in self.retired:
                    continue
                down = self.down_since.get(url) is not None
                # one silent request is enough: a SIGTERMed llama-server finishes the answer it is
                # writing (up to ~30 s) while the ones queued behind it never get one
                stalled = (endpoint.in_flight > 0 and endpoint.longest_silence(now) >= STALL_S
                           and now - self._answered_probe.get(url, -STALL_S) >= STALL_S)
                # a down endpoint gets a new probe every tick even while older ones wait out their
                # timeout (a hung server that answers again is seen within a tick, not a timeout)
                if (down and probing < PROBE_TIMEOUT_S / WATCH_TICK_S) or (stalled and not probing):
                    self._probing[url] = probing + 1
                    task = asyncio.create_task(self.probe(endpoint, stalled))
                    self.pending_probes.add(task)
                    task.add_done_callback(self.pending_probes.discard)

    async def probe(self, endpoint: Endpoint, stalled: bool) -> None:
        url = endpoint.url
        silent_since = endpoint.last_activity
        started = time.monotonic()
        try:
            try:
                await endpoint.probe(PROBE_TIMEOUT_S)
            except (EndpointError, asyncio.TimeoutError) as e:
                if self._answered_probe.get(url, float("-inf")) > started:
                    return   # a later probe has answered since: this one's news is old
                why = e.message if isinstance(e, EndpointError) else f"no answer within {PROBE_TIMEOUT_S:g} s"
                self.mark_down(url, silent_since if stalled else time.monotonic())
                cut = endpoint.abandon_in_flight(
                    f"{url} stopped answering: a request in flight received nothing for "
                    f"{endpoint.longest_silence(time.monotonic()):.0f} s and GET /models failed ({why})")
                if cut and not self.settings.quiet:
                    print(f"{redact_url(url)} stopped answering (GET /models: {why}); {cut} request(s) in flight "
                          f"cut, to be sent again when it answers", file=sys.stderr)
                return
            self._answered_probe[url] = time.monotonic()   # it answers: busy, not stuck
            if self.down_since.get(url) is not None:
                self.mark_up(url)
        finally:
            self._probing[url] -= 1

    async def run(self, items) -> None:
        queue: asyncio.Queue = asyncio.Queue()
        for item in items:
            queue.put_nowait(item)
        slots = self.settings.concurrency * len(self.endpoints)
        # Grading runs in a thread pool, off the request slots: a slow grade (sympy) must not hold
        # one of the run's `--concurrency` requests. At most this many responses wait to be graded;
        # past it the workers wait (back-pressure) instead of piling responses up in memory.
        self.grading = asyncio.Semaphore(2 * slots)
        # worker threads; finished grades come back to the loop in batches (evalsuite/grade_pool.py)
        self.pool = GradePool(asyncio.get_running_loop(), self.graded)
        self.pending_probes: set[asyncio.Task] = set()
        workers = [asyncio.create_task(self.worker(queue, self.endpoints[n % len(self.endpoints)]))
                   for n in range(slots)]
        watchdog = asyncio.create_task(self.watch_endpoints())
        try:
            await asyncio.gather(*workers)
        finally:
            for w in [*workers, watchdog, *self.pending_probes]:
                w.cancel()
            await asyncio.gather(*workers, watchdog, *self.pending_probes, return_exceptions=True)
            # Responses already received are graded and recorded before the run ends, on Ctrl-C
            # too (a bounded wait: a grader that hangs leaves its item to the resume).
            await self.pool.wait(GRADE_DRAIN_S)
            self.pool.close()

    async def worker(self, queue: asyncio.Queue, endpoint: Endpoint) -> None:
        while self.stopped_reason is None:
            if queue.empty():
                # an item in flight elsewhere may still come back (its replica died): wait for it
                if self.in_flight == 0:
                    return
                await asyncio.sleep(0.05)
                continue
            job = queue.get_nowait()
            item, sample = job
            self.in_flight += 1
            try:
                answered = await self.ask(item, endpoint, sample)
            except ReplicaDown as e:
                queue.put_nowait(job)  # another replica asks it; this one waits until it answers
                self.in_flight -= 1
                if not await self.sideline(endpoint, str(e), queue):
                    return
                continue
            except EndpointDown as e:
                # the item stays unrecorded: a resume asks it
                self.in_flight -= 1
                self.stopped_reason = self.stopped_reason or str(e)
                return
            self.in_flight -= 1
            if isinstance(answered, dict):
                self.record(answered, None)
                continue
            await self.grading.acquire()
            self.pool.submit(answered, self.pack.grade, answered[0], answered[2].answer)

    def others_answer(self, url: str) -> bool:
        return any(e.url != url and e.url not in self.retired and self.down_since.get(e.url) is None
                   for e in self.endpoints)

    async def sideline(self, endpoint: Endpoint, reason: str, queue: asyncio.Queue) -> bool:
        """Keep a dead replica out of the rotation: poll it until it answers (True: take items
        again) or until there is nothing left to ask (False). It stays in `retired`, with why,
        for the manifest, unless it came back."""
        url = endpoint.url
        if url not in self.retired:
            self.retired[url] = {"at": now_iso(), "reason": reason}
            if not self.settings.quiet:
                print(f"{redact_url(url)} does not answer ({reason}); its items go to the other "
                      f"endpoint(s)", file=sys.stderr)
        while self.stopped_reason is None:
            if queue.empty() and self.in_flight == 0:
                return False
            if not self.others_answer(url):
                # the others are down too: back in, and the run's --max-downtime rule decides
                self.retired.pop(url, None)
                return True
            await asyncio.sleep(min(DOWN_POLL_S, 1.0))
            try:
                await asyncio.wait_for(endpoint.list_models(), timeout=min(5.0, self.settings.timeout))
            except Exception:
                continue
            self.retired.pop(url, None)
            self.mark_up(url)
            return True
        return False

    def record(self, record: dict[str, Any], tokens) -> None:
        # Records graded in the same turn of the event loop reach the file in one write, at the
        # end of that turn: until then they are like a request in flight (asked again after a crash).
        self.writer.append(record, tokens, flush=False)
        if not self.flush_pending:
            self.flush_pending = True
            asyncio.get_running_loop().call_soon(self.flush)
        self.progress.update(record, tokens)

    def flush(self) -> None:
        self.flush_pending = False
        self.writer.flush()

    def graded(self, answered: tuple, verdict, raised: BaseException | None) -> None:
        """A response graded in the pool (on the loop again): append its record (with its token
        streams): a record is only ever written graded, in one append."""
        item, request, response, attempt, endpoint, started_at, t0 = answered
        try:
            if raised is not None and not isinstance(raised, Exception):
                return   # the grading thread was stopped (SystemExit ...): the item is asked again on resume
            if raised is not None:  # a grader bug must not lose the response
                e = raised
                error = EndpointError("grader", f"grader raised {type(e).__name__}: {e}")
                self.record(error_record(item, request, error, endpoint, attempt, started_at,
                                         time.monotonic() - t0, response), None)
                return
            if response.logprobs_missing:
                self.logprobs_missing["tokens"] += response.logprobs_missing
                self.logprobs_missing["items"] += 1
            self.record(response_record(item, request, response, verdict, attempt), response.logprobs)
        finally:
            self.grading.release()

    async def wait_to_retry(self, seconds: float, until: asyncio.Event | None = None) -> None:
        """Wait `seconds`, or less if `until` is set before."""
        self.retrying += 1
        try:
            if until is None:
                await asyncio.sleep(seconds)
            else:
                try:
                    await asyncio.wait_for(until.wait(), timeout=seconds)
                except asyncio.TimeoutError:
                    pass
        finally:
            self.retrying -= 1

    def request_of(self, item, sample: int | None) -> tuple[Request, Decoding]:
        """The request and decoding of (item, sample). An item's N samples are queued one after
        the other: its request (prompt and hash) is built once and kept while they are asked."""
        if sample is None:
            return build_request(self.pack, item, self.settings.api), self.settings.decoding
        base = self._requests.get(item.id)
        if base is None:
            if len(self._requests) >= 4 * self.settings.concurrency * len(self.endpoints):
                self._requests.pop(next(iter(self._requests)))   # the oldest item
            base = self._requests[item.id] = build_request(self.pack, item, self.settings.api)
            _ = base.sha256   # computed once, kept by with_sample
        decoding = self._decodings.get(sample)
        if decoding is None:
            decoding = self._decodings[sample] = sample_decoding(self.settings.decoding, sample)
        return base.with_sample(sample), decoding

    async def ask(self, item, endpoint: Endpoint, sample: int | None = None) -> dict[str, Any] | tuple:
        """An error record, or (item, request, response, attempt, endpoint, started_at, t0) to grade."""
        settings = self.settings
        policy = settings.retry
        request, decoding = self.request_of(item, sample)
        started_at, t0 = now_iso(), time.monotonic()
        attempt = 0
        failures = 0                          # retryable failures other than "cannot connect"
        first_failure: float | None = None    # when the retry budget (max_total) started
        unreachable_since: float | None = None  # this item's current streak of "cannot connect"
        while True:
            while endpoint.url in self.restarting and self.stopped_reason is None:
                await asyncio.sleep(0.1)   # sent once, to the restarted server
            attempt += 1
            try:
                response = await endpoint.complete(request, self.model, decoding)
            except EndpointError as error:
                now = time.monotonic()
                if error.kind == "connection":
                    # A server that is down does not use up an item's retries: the run waits for
                    # it (up to --max-downtime) instead of recording every item as an error.
                    self.mark_down(endpoint.url, now)
                    down_since = self.down_since[endpoint.url]
                    if endpoint.url in self.restarting:   # a managed server coming back: its supervisor bounds this
                        self.down_since[endpoint.url] = down_since = now
                        unreachable_since = None
                    if len(self.endpoints) > 1 and self.others_answer(endpoint.url):
                        # a replica died while others answer: they take its items
                        raise ReplicaDown(error.message)
                    unreachable_since = unreachable_since or now
                    down_for = now - down_since
                    if self.stopped_reason:
                        raise EndpointDown(self.stopped_reason)
                    if down_for > settings.max_downtime:
                        raise EndpointDown(f"{endpoint.url} has not answered for {down_for:.0f} s "
                                           f"(--max-downtime {settings.max_downtime:g}): {error.message}")
                    if now - unreachable_since > settings.max_downtime:
                        # the endpoint answers other requests but never this one (e.g. a proxy
                        # that drops it): an error of this item, so the run still ends by itself
                        return error_record(item, request, error, endpoint.url, attempt, started_at, now - t0)
                    self.retries += 1
                    # ask again once the watchdog's probe finds it answering, never past the window
                    window_left = settings.max_downtime - down_for
                    await self.wait_to_retry(max(0.05, window_left), until=self.answering[endpoint.url])
                    continue
                unreachable_since = None
                first_failure = first_failure if first_failure is not None else now
                failures += 1
                retries_left = failures <= policy.max_retries
                time_left = now - first_failure < policy.max_total
                if error.retryable and retries_left and time_left:
                    self.retries += 1
                    wait = policy.delay(failures - 1, error)
                    await self.wait_to_retry(max(0.0, min(wait, policy.max_total - (now - first_failure))))
                    continue
                return error_record(item, request, error, endpoint.url, attempt, started_at, now - t0)
            self.mark_up(endpoint.url)
            return item, request, response, attempt, endpoint.url, started_at, t0


async def preflight(settings: RunSettings, endpoints: list[Endpoint]) -> tuple[dict[str, list[str]], str]:
    """Ask every endpoint for /v1/models before any item is sent."""
    from .client import NotOpenAICompatible

    served: dict[str, list[str]] = {}
    for endpoint in endpoints:
        try:
            served[endpoint.url] = await asyncio.wait_for(endpoint.list_models(), timeout=min(30.0, settings.timeout))
        except (EndpointError, asyncio.TimeoutError) as e:
            if isinstance(e, EndpointError) and e.status == 401:
                raise UsageError(f"{endpoint.url} refused the API key (HTTP 401): set OPENAI_API_KEY or the variable "
                                 f"named by --api-key-env") from None
            reason = e.message if isinstance(e, EndpointError) else "no answer within the timeout"
            if "DNS lookup" in reason:
                raise UsageError(f"{reason}: the host name in --endpoint does not resolve. Check it (a typo, "
                                 f"a VPN or /etc/hosts entry), or start a local server and pass "
                                 f"--endpoint http://127.0.0.1:PORT/v1") from None
            raise UsageError(
                f"nothing answers at {endpoint.url} ({reason}). Start an OpenAI-compatible server first, e.g.\n"
                + start_examples() + "or pass --endpoint http://HOST:PORT/v1") from None
        except NotOpenAICompatible as e:
            raise UsageError(f"{endpoint.url} is not an OpenAI-compatible endpoint: tried GET {endpoint.url}/models "
                             f"(expecting JSON {{\"data\": [{{\"id\": ...}}]}}) and it answered {e}. "
                             f"Is the URL right? OpenAI-compatible servers answer under /v1, "
                             f"e.g. --endpoint http://HOST:PORT/v1") from None
    first = next(iter(served.values()))
    model = settings.model or (first[0] if first else None)
    if model is None:
        raise UsageError(f"{endpoints[0].url} lists no model; pass --model")
    if settings.model and settings.check_model:
        for url, models in served.items():
            if models and settings.model not in models:
                raise UsageError(f"{url} does not list model {settings.model!r}; it serves: {', '.join(models)} "
                                 f"(pass one of these to --model, or --no-check-model)")
    return served, model


class _NoPandas:
    """A meta-path finder that says pandas is not installed. pyarrow's first pa.array() call
    imports pandas to see whether its argument is a pandas object (0.3 CPU s and 40 MB); a run
    process never hands it one, so during that first call pandas is reported absent, and pyarrow
    remembers that for the rest of the process."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is not needed by `evalsuite run`")
        return None


def _warm_finish_imports() -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet  # noqa: F401

        if "pandas" not in sys.modules:
            sys.meta_path.insert(0, _NoPandas)
            try:
                pa.array([0])
            finally:
                sys.meta_path.remove(_NoPandas)
    except Exception:  # the finishing step will say what is wrong
        pass


def _warm_sampling_imports() -> None:
    """A sampled run's summary takes the t quantile from scipy.special (~0.2 s to import): loaded
    while the requests are in flight, not after the last one."""
    try:
        import scipy.special  # noqa: F401
    except Exception:   # the summary will say what is wrong
        pass


def finish_run(run_dir: Path, manifest: dict[str, Any], item_ids: list[str], status: str) -> dict:
    """A finished run: compact records.jsonl and the token streams, write records.parquet and
    summary.json, and only then mark the manifest. Every file is written to a temporary file
    and renamed, so a crash anywhere in here leaves a folder that is still resumable (status
    not yet `finished`; a resume with nothing left to ask redoes this step), never a manifest
    that says finished beside a missing or half-written file. Streams the records: nothing
    holds the whole file, and the summary reads them without their bulky text fields."""
    from .analysis.summary import summarize

    manifest = dict(manifest, status=status, ended_at=now_iso())
    for name in (RECORDS, PARQUET, TOKENS, SUMMARY, MANIFEST):
        for stale in run_dir.glob(f".{name}.*.tmp"):  # left by a process killed while writing
            stale.unlink(missing_ok=True)
    from .analysis.loops import loop_of, loops_in_records

    if status == "finished":
        compact_records(run_dir, item_ids)
        compact_tokens(run_dir, item_ids)
        # One pass over the compacted file (one record per key now) feeds records.parquet, the
        # summary's records without their bulky fields and the loops, as read_records and
        # loops_in_records would read them: the file is parsed once instead of three times.
        records: list[dict[str, Any]] = []
        loops: dict[str, Any] = {}

        def feed():
            for record in iter_record_lines(run_dir / RECORDS):
                record = slim(record)[0]
                loop = loop_of(record)
                if loop is None:
                    loops.pop(record["id"], None)
                else:
                    loops[record["id"]] = loop
                kept = dict(record)
                for name in BULKY_FIELDS:
                    kept.pop(name, None)
                records.append(kept)
                yield record

        write_parquet(run_dir, feed())
        summary = summarize(manifest, records, loops=loops)
    else:
        summary = summarize(manifest, read_records(run_dir / RECORDS, drop=BULKY_FIELDS),
                            loops=loops_in_records(run_dir / RECORDS))
    write_json_atomic(run_dir / SUMMARY, summary)
    write_json_atomic(run_dir / MANIFEST, manifest)
    return summary


def _speculation_counters(endpoints: list[Endpoint]) -> dict[str, Any]:
    from .speculation import fetch_counters

    return {e.url: fetch_counters(e.url, timeout=2.0) for e in endpoints}


def _judge(settings: RunSettings) -> dict[str, Any]:
    """The judge pass after the requests (evalsuite/judge.py); a failing judge loses nothing."""
    from .judge import judge_run_folder

    echo = None if settings.quiet else (lambda line: print(line, file=sys.stderr))
    try:
        return judge_run_folder(settings.run_dir, settings.judge, echo=echo)
    except Exception as e:
        print(f"judge failed ({type(e).__name__}: {e}); the rule verdicts are all recorded; "
              f"`evalsuite regrade {settings.run_dir} --judge-endpoint URL` can judge later", file=sys.stderr)
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


def _speculation_report(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per endpoint: draft/accepted counters before and after, what moved, and the sentence."""
    from .speculation import delta, describe

    out = {}
    for url, b in before.items():
        a = after.get(url)
        moved = delta(b, a)
        out[redact_url(url)] = {"before": b and b.to_dict(), "after": a and a.to_dict(),
                                "during_run": moved and moved.to_dict(), "summary": describe(moved)}
    return out


async def _run_async(settings: RunSettings) -> int:
    pack = find_pack(settings)
    # Local data is read first (bad input: exit 2 before any request). Data from the network is
    # fetched after the endpoint answered: without a server, "start one" is the news, not a
    # download error, and nothing is downloaded for a run that cannot start.
    local = settings.data_dir is not None or bool((pack.spec or {}).get("path"))  # a user's file is local too
    if local:
        pack, items, settings = load_items(settings, pack)
    api_key = os.environ.get(settings.api_key_env or "OPENAI_API_KEY")
    endpoints = [Endpoint(url, api_key, settings.timeout, settings.api, settings.stream) for url in settings.endpoints]
    try:
        served, model = await preflight(settings, endpoints)
        if not local:
            pack, items, settings = load_items(settings, pack)
        settings, engine = await apply_neutral_settings(settings, api_key)   # docs/lossless.md: greedy must be greedy
        if settings.judge is not None:   # the judge must answer before the run starts (evalsuite/judge.py)
            from .judge import check_judge

            try:
                settings = replace(settings, judge=await asyncio.to_thread(check_judge, settings.judge))
            except ValueError as e:
                raise UsageError(str(e)) from None
        manifest = dict(make_manifest(settings, pack, items, served, model), engine=engine)
        manifest, done = prepare_run_dir(settings, manifest)
        if settings.managed is not None:
            manifest = settings.managed.annotate(manifest)
        write_json_atomic(settings.run_dir / MANIFEST, manifest)
        if pack.needs_sympy:   # importing sympy takes 1-2 s: not on the first item's grade
            from .graders import sandbox

            sandbox.prestart()

        def finished(record: dict) -> bool:
            return record["outcome"] != "error" or not settings.retry_errors

        jobs = jobs_of(items, settings.samples)   # (item, sample): one record each, keyed as store.sample_key
        todo = [(i, j) for i, j in jobs if not (sample_key(i.id, j) in done and finished(done[sample_key(i.id, j)]))]
        # What start-up built (modules, items, prompts, records already done) lives until the end:
        # keep the garbage collector from rescanning it, and let it run less often. A streamed
        # token allocates a few dicts; at the default threshold (700) collections cost ~30 % of
        # the client's CPU on long answers with logprobs (docs/performance.md).
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        if settings.resume and not settings.quiet:
            what = "items" if settings.samples <= 1 else f"answers ({settings.samples} per item)"
            print(f"resuming {settings.run_dir}: {len(jobs) - len(todo)} of {len(jobs)} {what} already recorded, "
                  f"{len(todo)} to ask", file=sys.stderr)
        progress = Progress(len(jobs), len(jobs) - len(todo), settings.quiet)
        writer = RecordWriter(settings.run_dir / RECORDS)
        scheduler = Scheduler(settings, pack, endpoints, model, writer, progress)
        progress.watch(scheduler)
        if settings.managed is not None:   # evalsuite.serve: restarts its server when it dies
            settings.managed.attach(scheduler)
        # the servers' own draft counters around the run: did speculation engage (docs/engines.md)
        spec_before = await asyncio.to_thread(_speculation_counters, endpoints)
        status = "interrupted"
        # the finishing step's imports (pyarrow, and the pandas its first call imports: ~0.5 s)
        # load in a thread while the requests are in flight, not after them; a run that keeps
        # logprobs converts its first tokens with pyarrow at once: there, before the requests,
        # or that first call imports pandas after all (~0.3 CPU s, 40 MB)
        if settings.decoding.logprobs is not None:
            _warm_finish_imports()
        else:
            asyncio.get_running_loop().run_in_executor(None, _warm_finish_imports)
        if settings.samples > 1:
            asyncio.get_running_loop().run_in_executor(None, _warm_sampling_imports)
        progress.start()
        try:
            await scheduler.run(todo)
            status = "stopped" if scheduler.stopped_reason else "finished"
        finally:
            writer.close()
            progress.finish()
            if scheduler.retired:
                # which replicas were out of the rotation at the end; each record names its endpoint
                manifest = dict(manifest, retired_endpoints={redact_url(u): v for u, v in scheduler.retired.items()})
            if scheduler.logprobs_missing["items"]:
                manifest = dict(manifest, logprobs_missing=dict(scheduler.logprobs_missing))
            if settings.judge is not None and status != "interrupted":
                manifest = dict(manifest, judge=await asyncio.to_thread(_judge, settings))
            if status != "interrupted":
                manifest = dict(manifest, speculation=_speculation_report(
                    spec_before, await asyncio.to_thread(_speculation_counters, endpoints)))
            if settings.managed is not None:
                manifest = settings.managed.annotate(manifest)   # its restarts
            # status stays "interrupted" when we leave through a cancellation (Ctrl-C, SIGTERM)
            summary = finish_run(settings.run_dir, manifest, [i.id for i in items], status)
        if scheduler.stopped_reason:
            print(f"\nstopped: {scheduler.stopped_reason}\nnothing recorded was lost; when the endpoint is back:\n  "
                  f"{resume_command(settings.argv, settings.run_dir)}", file=sys.stderr)
            return EXIT_STOPPED
        if not settings.quiet:
            from .analysis.summary import format_summary
            print(format_summary(summary, manifest))
        print(f"run folder: {settings.run_dir}", file=sys.stderr)
        if settings.decoding.temperature == 0:
            progress.greedy.warn()
        if summary["n_errors"]:
            print(f"{summary['n_errors']} item(s) ended in errors; to ask them again:\n  "
                  f"{resume_command(settings.argv, settings.run_dir)} --retry-errors", file=sys.stderr)
            hint = interrupt_hint(engine, summary, settings.concurrency)
            if hint:
                print(hint, file=sys.stderr)
            return EXIT_ERRORS
        return EXIT_OK
    finally:
        for endpoint in endpoints:
            try:
                await endpoint.close()
            except Exception:
                pass


def run(settings: RunSettings) -> int:
    """Run and return the exit code. Ctrl-C / SIGTERM stop cleanly with everything saved."""
    loop = asyncio.new_event_loop()
    if settings.serve:
        from .serve import serve_and_run
        main = loop.create_task(serve_and_run(settings, _run_async))
    else:
        main = loop.create_task(_run_async(settings))
    interrupted = []

    def interrupt(signum: int) -> None:
        interrupted.append(signum)
        main.cancel()
        # a second Ctrl-C kills at once (records on disk stay valid either way)
        loop.remove_signal_handler(signal.SIGINT)

    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, interrupt, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread, or Windows
            pass
    try:
        return loop.run_until_complete(main)
    except asyncio.CancelledError:
        print(f"\ninterrupted ({signal.Signals(interrupted[0]).name if interrupted else 'cancelled'}): "
              f"every finished item is saved in {settings.run_dir}. To continue:\n  "
              f"{resume_command(settings.argv, settings.run_dir)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except UsageError:
        raise
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
