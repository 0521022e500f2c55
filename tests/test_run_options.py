"""`evalsuite run`'s options become one RunSettings in run/settings.py (settings_from_options),
as every other command hands its options to its room: parsed by the real command here, with the
runner replaced by one that keeps the settings it is given (nothing is asked or written)."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import typer

from evalsuite import cli
from evalsuite.client.errors import UsageError
from evalsuite.run import runner
from evalsuite.run.settings import RunSettings, settings_from_options


def run_command(monkeypatch, *args: str) -> tuple[int, list[RunSettings]]:
    """`evalsuite run ARGS` through the real command: its exit code and the settings it ran."""
    given: list[RunSettings] = []
    monkeypatch.setattr(runner, "run", lambda settings: given.append(settings) or 0)
    monkeypatch.setattr("sys.argv", ["evalsuite", "run", *args])
    # as sweep runs it (cli._run_command): usage errors are one line and an exit code, not exceptions
    code = cli._invoke(typer.main.get_command(cli.app).commands["run"], list(args), "evalsuite run")
    return code, given


@pytest.fixture
def settings_of(monkeypatch):
    def settings(*args: str) -> RunSettings:
        code, given = run_command(monkeypatch, *args)
        assert code == 0 and len(given) == 1
        return given[0]
    return settings


def test_every_run_option_reaches_the_settings():
    """An option added to the command but not to settings_from_options would do nothing."""
    options = set(inspect.signature(cli.run).parameters)
    assert set(inspect.signature(settings_from_options).parameters) - {"default_endpoint", "argv"} == options


def test_the_defaults(settings_of):
    s = settings_of("gsm8k")
    assert s.pack == "gsm8k" and s.endpoints == (cli.DEFAULT_ENDPOINT,) and s.api == "chat"
    assert (s.concurrency, s.timeout, s.retry.max_retries, s.max_downtime, s.samples) == (4, 600.0, 5, 300.0, 1)
    assert (s.decoding.temperature, s.decoding.top_p, s.decoding.seed, s.decoding.max_tokens) == (0.0, 1.0, 0, None)
    assert s.decoding.extra_body == {} and s.decoding.stop == () and s.subsets == ()
    assert s.run_dir.parent == Path("results") and re.fullmatch(r"gsm8k-\d{8}-\d{6}", s.run_dir.name)
    assert not s.resume and s.serve is None and s.judge is None and s.file_options is None
    assert s.stream and s.check_model and not s.quiet and s.argv == ("evalsuite", "run", "gsm8k")


def test_options_are_carried_into_the_settings(settings_of, tmp_path):
    s = settings_of("gsm8k", "-e", "http://a/v1", "-e", "http://b/v1", "--subset", "algebra, geometry,",
                    "--extra-body", '{"top_k": 1}', "--stop", "###", "--temperature", "0.6", "--samples", "4",
                    "--resume", str(tmp_path), "--retry-errors", "--max-retries", "2", "--label", "spec-on",
                    "--judge-endpoint", "http://j/v1", "--judge-model", "judge", "--no-stream", "--logprobs", "3")
    assert s.endpoints == ("http://a/v1", "http://b/v1") and s.subsets == ("algebra", "geometry")
    assert s.decoding.extra_body == {"top_k": 1} and s.decoding.stop == ("###",) and s.decoding.logprobs == 3
    assert s.decoding.temperature == 0.6 and s.samples == 4 and not s.stream
    assert s.run_dir == tmp_path and s.resume and s.retry_errors and s.retry.max_retries == 2
    assert s.label == "spec-on" and (s.judge.endpoint, s.judge.model) == ("http://j/v1", "judge")


def test_a_served_run_and_a_file_pack(settings_of):
    served = settings_of("gsm8k", "--serve", "llama-server -m m.gguf --port {port}", "--label", "q4")
    assert served.endpoints == () and served.serve == "llama-server -m m.gguf --port {port}"
    assert served.run_dir.name.startswith("gsm8k-") and served.run_dir.name.endswith("-q4")
    own = settings_of("data/my.questions.jsonl", "--fields", "question=q,answer=a", "--kind", "numeric")
    assert own.run_dir.name.startswith("my.questions-")    # named by the file's stem, not nested by its path
    assert dict(own.file_options.fields) == {"question": "q", "answer": "a"} and own.file_options.kind == "numeric"


@pytest.mark.parametrize("args, message", [
    (("gsm8k", "--api", "foo"), "--api must be chat or completions, not 'foo'"),
    (("gsm8k", "--extra-body", "[1]"), "--extra-body '[1]' must be a JSON object"),
    (("gsm8k", "--extra-body", "{bad"), "--extra-body '{bad' is not valid JSON"),
    (("gsm8k", "--run-dir", "a", "--resume", "b"), "give either --run-dir or --resume, not both"),
    (("gsm8k", "--retry-errors"), "--retry-errors needs --resume RUN_DIR"),
    (("gsm8k", "--serve", "x {port}", "-e", "http://e/v1"), "give either --endpoint or --serve"),
    (("gsm8k", "--kind", "text"), "--fields, --kind, --template and --split apply to your own questions"),
    (("q.jsonl", "--fields", "bad"), "--fields: 'bad' is not KEY=COLUMN"),
])
def test_bad_options_are_usage_errors_that_name_the_option(monkeypatch, capsys, args, message):
    code, given = run_command(monkeypatch, *args)
    assert code == 2 and not given
    assert capsys.readouterr().err.startswith(f"error: {message}")


def test_the_settings_refuse_bad_options_without_the_command():
    options = {name: None for name in inspect.signature(settings_from_options).parameters if name != "pack"}
    with pytest.raises(UsageError, match="--api must be chat or completions"):
        settings_from_options("gsm8k", **{**options, "api": "grpc"})
