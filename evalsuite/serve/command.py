"""The server command as typed for --serve: split like a shell would, leading NAME=value words
as its environment, {port} and a sweep's {name} placeholders filled, the host and port it
listens on found, and the secrets it names kept out of what is recorded."""
from __future__ import annotations

import re
import shlex
import socket
from typing import Mapping, Sequence

from ..errors import UsageError

SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def fill_placeholders(word: str, values: Mapping[str, str]) -> str:
    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            known = ", ".join("{" + k + "}" for k in values) or "none"
            raise UsageError(f"the server command has a placeholder {{{name}}} with no value (known: {known}); "
                             f"give it with --set {name}=VALUE (evalsuite sweep), or write the value itself")
        return str(values[name])

    return _PLACEHOLDER.sub(one, word)


def _named_port(argv: Sequence[str]) -> int | None:
    for n, word in enumerate(argv):
        value = None
        if word == "--port" and n + 1 < len(argv):
            value = argv[n + 1]
        elif word.startswith("--port="):
            value = word.split("=", 1)[1]
        if value is not None:
            try:
                return int(value)
            except ValueError:
                raise UsageError(f"the server command's --port {value!r} is not a number") from None
    return None


def _named_host(argv: Sequence[str]) -> str:
    for n, word in enumerate(argv):
        if word == "--host" and n + 1 < len(argv):
            host = argv[n + 1]
        elif word.startswith("--host="):
            host = word.split("=", 1)[1]
        else:
            continue
        return "127.0.0.1" if host in ("0.0.0.0", "::", "[::]", "localhost", "") else host
    return "127.0.0.1"


def parse_command(command: str, values: Mapping[str, str] | None = None,
                  port: int | None = None) -> tuple[list[str], dict[str, str], str, int]:
    """(argv, environment additions, host to ask, port) of a server command as typed."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"the server command cannot be split into words ({e}): {command!r}") from None
    env: dict[str, str] = {}
    while words and _ENV_WORD.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if not words:
        raise UsageError(f"the server command names no program: {command!r}")
    values = dict(values or {})
    wants_port = any("{port}" in w for w in words)
    if wants_port:
        values["port"] = str(port or free_port())
    argv = [fill_placeholders(w, values) for w in words]
    env = {k: fill_placeholders(v, values) for k, v in env.items()}
    named = _named_port(argv)
    if named is None:
        raise UsageError(f"the server command names no port: add `--port {{port}}` (evalsuite fills in a free one) "
                         f"or `--port N`: {command!r}")
    return argv, env, _named_host(argv), named


def redact_argv(argv: Sequence[str], secret: str | None = None) -> list[str]:
    """The command as recorded: a value after --api-key (and the run's own key) is never written."""
    out, hide = [], False
    for word in argv:
        if hide:
            out.append("***")
            hide = False
            continue
        if secret and secret in word:
            word = word.replace(secret, "***")
        if word in ("--api-key", "--api_key", "--hf-token"):
            hide = True
        elif word.startswith(("--api-key=", "--api_key=", "--hf-token=")):
            word = word.split("=", 1)[0] + "=***"
        out.append(word)
    return out


def _redact_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: ("***" if any(w in k.upper() for w in SECRET_WORDS) else v) for k, v in env.items()}
