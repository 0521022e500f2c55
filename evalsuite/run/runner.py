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
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..client.endpoint import Endpoint, now_iso, redact_url
from ..engines import apply_neutral_settings, interrupt_hint, models_wait_for_requests, start_examples
from ..client.errors import EndpointError
from ..errors import UsageError
from .manifest import make_manifest, prepare_run_dir, resume_command
from .progress import Progress
from .items import find_pack, jobs_of, load_items
from .settings import RunSettings
from .scheduler import Scheduler
from ..store import (MANIFEST, PARQUET, RECORDS, SUMMARY, TOKENS, RecordWriter, WrittenLines, compact_records,
                    compact_tokens, iter_record_lines, read_records, sample_key, write_json_atomic, write_parquet)
from ..store.record import bulky, slim

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_STOPPED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

# what the summary reads of each record: not the bulky fields, but the server's own timings, which
# `show`'s first-token breakdown needs (its prefill), the same at the end of a run as after it
SUMMARY_DROPS = bulky(keep=("server_timings",))


# ----------------------------------------------------------------------------- the run

async def preflight(settings: RunSettings, endpoints: list[Endpoint]) -> tuple[dict[str, list[str]], str]:
    """Ask every endpoint for /v1/models before any item is sent."""
    from ..client.endpoint import NotOpenAICompatible

    served: dict[str, list[str]] = {}
    option = "the --serve server" if settings.serve else settings.endpoint_option
    for endpoint in endpoints:
        try:
            served[endpoint.url] = await asyncio.wait_for(endpoint.list_models(), timeout=min(30.0, settings.timeout))
        except (EndpointError, asyncio.TimeoutError) as e:
            if isinstance(e, EndpointError) and e.status == 401:
                raise UsageError(f"{endpoint.url} refused the API key (HTTP 401): set OPENAI_API_KEY or the variable "
                                 f"named by --api-key-env") from None
            reason = e.message if isinstance(e, EndpointError) else "no answer within the timeout"
            if "DNS lookup" in reason:
                raise UsageError(f"{option} {endpoint.url}: {reason}: the host name does not resolve. Check it (a typo, "
                                 f"a VPN or /etc/hosts entry), or start a local server and pass "
                                 f"{option} http://127.0.0.1:PORT/v1") from None
            raise UsageError(
                f"nothing answers at {endpoint.url} ({option}: {reason}). Start an OpenAI-compatible server first, e.g.\n"
                + start_examples() + f"  or pass {option} http://HOST:PORT/v1") from None
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


class _Absent:
    """A meta-path finder that says some packages are not installed, while pyarrow is first
    imported and first called. Its first pa.array() call imports pandas to see whether its
    argument is a pandas object (0.3 CPU s and 40 MB), and `import pyarrow` imports numpy when it
    can (0.1-0.15 CPU s): a run process never hands pyarrow either. pyarrow remembers them
    absent for the rest of the process (numpy itself can still be imported after)."""

    names: tuple[str, ...] = ()

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in cls.names:
            raise ImportError(f"{name} is not needed by `evalsuite run`")
        return None


def _warm_finish_imports(numbers: bool = True) -> None:
    """pyarrow and pyarrow.parquet for the finishing step, imported now. `numbers`: whether
    the run hands pyarrow numpy arrays (its token streams, with --logprobs); without, pyarrow
    is imported without numpy, where neither is imported yet."""
    try:
        absent = ("pandas",) if numbers or "pyarrow" in sys.modules or "numpy" in sys.modules else ("pandas", "numpy")
        if "pandas" in sys.modules:
            absent = tuple(n for n in absent if n != "pandas")
        _Absent.names = absent
        sys.meta_path.insert(0, _Absent)
        try:
            import pyarrow as pa
            import pyarrow.parquet  # noqa: F401

            pa.array([0])
        finally:
            sys.meta_path.remove(_Absent)
    except Exception:  # the finishing step will say what is wrong
        pass


def finish_run(run_dir: Path, manifest: dict[str, Any], item_ids: list[str], status: str,
               written: WrittenLines | None = None) -> dict:
    """A finished run: compact records.jsonl and the token streams, write records.parquet and
    summary.json, and only then mark the manifest. Every file is written to a temporary file
    and renamed, so a crash anywhere in here leaves a folder that is still resumable (status
    not yet `finished`; a resume with nothing left to ask redoes this step), never a manifest
    that says finished beside a missing or half-written file. Streams the records: nothing
    holds the whole file, and the summary reads them without their bulky text fields.
    `written`: the run's RecordWriter.written(), so compaction need not parse its lines."""
    from ..analysis.summary import summarize

    manifest = dict(manifest, status=status, ended_at=now_iso())
    for name in (RECORDS, PARQUET, TOKENS, SUMMARY, MANIFEST):
        for stale in run_dir.glob(f".{name}.*.tmp"):  # left by a process killed while writing
            stale.unlink(missing_ok=True)
    from ..analysis.loops import loop_of, loops_in_records

    if status == "finished":
        compact_records(run_dir, item_ids, written)
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
                for name in SUMMARY_DROPS:
                    kept.pop(name, None)
                records.append(kept)
                yield record

        write_parquet(run_dir, feed())
        summary = summarize(manifest, records, loops=loops)
    else:
        summary = summarize(manifest, read_records(run_dir / RECORDS, drop=SUMMARY_DROPS),
                            loops=loops_in_records(run_dir / RECORDS))
    write_json_atomic(run_dir / SUMMARY, summary)
    write_json_atomic(run_dir / MANIFEST, manifest)
    return summary


def _speculation_counters(endpoints: list[Endpoint]) -> dict[str, Any]:
    from ..speculation import fetch_counters

    return {e.url: fetch_counters(e.url, timeout=2.0) for e in endpoints}


def _judge(settings: RunSettings) -> dict[str, Any]:
    """The judge pass after the requests (evalsuite/judge.py); a failing judge loses nothing."""
    from ..judge import judge_run_folder

    echo = None if settings.quiet else (lambda line: print(line, file=sys.stderr))
    try:
        return judge_run_folder(settings.run_dir, settings.judge, echo=echo)
    except Exception as e:
        print(f"judge failed ({type(e).__name__}: {e}); the rule verdicts are all recorded; "
              f"`evalsuite regrade {settings.run_dir} --judge-endpoint URL` can judge later", file=sys.stderr)
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}


def _speculation_report(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per endpoint: draft/accepted counters before and after, what moved, and the sentence."""
    from ..speculation import delta, describe

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
            from ..judge import check_judge

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
            from ..graders import sandbox

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
        scheduler.models_wait = models_wait_for_requests(engine, settings.endpoints)
        progress.watch(scheduler)
        if settings.managed is not None:   # evalsuite.serve: restarts its server when it dies
            settings.managed.attach(scheduler)
        # the servers' own draft counters around the run: did speculation engage (docs/engines.md)
        spec_before = await asyncio.to_thread(_speculation_counters, endpoints)
        status = "interrupted"
        # the finishing step's imports (pyarrow; never the pandas its first call would import,
        # ~0.3 CPU s and 40 MB, nor, without logprobs, numpy, ~0.1 s) before the requests: a run
        # that keeps logprobs converts its first tokens with pyarrow at once, and while the
        # finder says numpy is absent no other thread may import it (~0.06 s without numpy)
        _warm_finish_imports(numbers=settings.decoding.logprobs is not None)
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
            summary = finish_run(settings.run_dir, manifest, [i.id for i in items], status, writer.written())
        if scheduler.stopped_reason:
            print(f"\nstopped: {scheduler.stopped_reason}\nnothing recorded was lost; when the endpoint is back:\n  "
                  f"{resume_command(settings.argv, settings.run_dir)}", file=sys.stderr)
            return EXIT_STOPPED
        from ..analysis.summary import format_summary, summary_line

        # -q hides the progress, not the result: the summary's one line and the folder stay
        print(summary_line(summary) if settings.quiet else format_summary(summary, manifest))
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
        from ..serve import serve_and_run
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
