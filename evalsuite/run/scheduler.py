"""The run's workers: they pull jobs from one queue, each bound to one endpoint (a faster
replica takes more), ask, retry what may be retried, hand answers to the grading pool and
append each graded record; a watchdog probes endpoints that stop answering (docs/reliability.md).
The run around it (preflight, resume, finishing) is runner.py's.
"""
from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from ..client.endpoint import Endpoint, now_iso, redact_url
from ..client.errors import EndpointError
from ..client.exchange import Decoding, Request
from .grading import GradePool
from .progress import Progress
from .items import build_request, sample_decoding
from .records import error_record, response_record
from .settings import RunSettings
from ..store import RecordWriter


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
        # endpoints whose GET /models waits for the requests they serve (engines' models_wait_for_requests)
        self.models_wait: set[str] = set()

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
                # a server whose /models waits behind its requests is asked with the request's own timeout
                await endpoint.probe(self.settings.timeout if url in self.models_wait and endpoint.in_flight
                                     else PROBE_TIMEOUT_S)
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
        # worker threads; finished grades come back to the loop in batches (evalsuite/run/grading.py)
        self.pool = GradePool(asyncio.get_running_loop(), self.graded, batch_max=slots)
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
