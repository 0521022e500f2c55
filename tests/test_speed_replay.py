"""`speed --replay FILE` and `--session TURNS --depth D` against the paced server with its prefix
cache: per turn, the cached tokens are the server's own, the prefill rate of the uncached part
is the programmed one within 5%, and the decode follows the programmed decay with the context
within 5%; the summary (mean, median, CV, worst turn, retention, cache share) is computed from
those turns; a bad file is one line naming the line."""
from __future__ import annotations

import json
import statistics

import pytest
from paced_server import PacedServer

from evalsuite.client.errors import UsageError
from evalsuite.speed import SpeedSettings, profile
from evalsuite.speed.replay import read_conversations
from evalsuite.speed.rows import read_profile, write_profile


@pytest.fixture()
def server():
    s = PacedServer(prefill_rate=4000, decode_rate=60, decode_halving=4000, latency=0.01, context=32768).start()
    yield s
    s.stop()


def check_turns(p, s, turns):
    served = s.served[-turns:]
    assert len(p.replay.turns) == turns
    for turn, truth in zip(p.replay.turns, served):
        assert turn.error is None and turn.context_tokens == truth["prompt"]
        assert turn.cached_tokens == truth["cached"], (turn.index, turn.cached_tokens, truth)
        assert turn.prefill_tps == pytest.approx(4000, rel=0.05), (turn.index, turn.prefill_tps, truth)
        expected = s.expected_decode(truth["prompt"], 1)
        assert turn.decode_tps == pytest.approx(expected, rel=0.05), (turn.index, turn.decode_tps, expected)
        # the first-token wait broken down with the server's own histograms (one request between two reads)
        assert "prefill" in turn.ttft_parts and "unaccounted" in turn.ttft_parts, turn.ttft_parts


def test_a_synthetic_session_grows_its_context_and_the_cache_serves_the_earlier_turns(server, data_dir, tmp_path):
    p = profile(SpeedSettings(endpoint=server.url, session_turns=5, depth=(10000,), tg=(24,), data_dir=data_dir,
                              quiet=True))
    check_turns(p, server, 5)
    contexts = [t.context_tokens for t in p.replay.turns]
    assert all(b > a for a, b in zip(contexts, contexts[1:])) and contexts[-1] == pytest.approx(10000, rel=0.05)
    # turn k finds the k - 1 turns before it in the cache: (k - 1) / k of its context
    assert p.replay.turns[0].cached_tokens == 0
    assert all(t.cached_tokens > 0.9 * (t.index - 1) / t.index * t.context_tokens for t in p.replay.turns[1:])
    summary = p.replay.summary()
    rates = [t.decode_tps for t in p.replay.turns]
    assert summary["decode_mean"] == pytest.approx(statistics.fmean(rates))
    assert summary["decode_median"] == pytest.approx(statistics.median(rates))
    assert summary["decode_cv"] == pytest.approx(statistics.stdev(rates) / statistics.fmean(rates))
    assert summary["worst_turn"] == 5 and summary["retention"] == pytest.approx(rates[-1] / rates[0])
    # the programmed decay: 60/(1+2000/4000) at the first turn against 60/(1+10000/4000) at the last
    assert summary["retention"] == pytest.approx((1 + contexts[0] / 4000) / (1 + contexts[-1] / 4000), rel=0.06)
    assert summary["cache_hit_share"] == pytest.approx(sum(t.cached_tokens for t in p.replay.turns) / sum(contexts))
    path = tmp_path / "s.json"
    write_profile(path, p)
    assert read_profile(path).replay.summary() == summary


def test_a_logged_conversation_is_replayed_turn_by_turn_with_the_logged_lengths(server, data_dir, tmp_path):
    # each user turn brings 2,000 new tokens (0.5 s of prefill at 4,000 t/s: a loaded machine's late wake-ups stay < 5%)
    words = [f"word{k}" for k in range(7000)]
    lines = [{"role": "system", "content": "You are an agent. " + " ".join(words[:1000])}]
    for k in range(3):
        step = " ".join(words[1000 + 2000 * k: 3000 + 2000 * k])
        lines += [{"role": "user", "content": [{"type": "text", "text": f"Step {k}: " + step}]},
                  {"role": "assistant", "content": " ".join(["ok"] * (10 + 5 * k))}]
    log = tmp_path / "agent.jsonl"
    log.write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    p = profile(SpeedSettings(endpoint=server.url, replay=log, data_dir=data_dir, quiet=True))
    check_turns(p, server, 3)
    # each turn asked for as many tokens as the logged reply held (the server's own count)
    assert [t.asked_tokens for t in p.replay.turns] == [10, 15, 20] == [t.tokens for t in p.replay.turns]
    assert "agent.jsonl (1 conversation(s), 3 turns)" in p.replay.source


def test_a_bad_replay_file_is_one_line_naming_the_line(tmp_path, run_cli):
    bad = tmp_path / "bad.jsonl"
    for text, said in (('{"role": "user", "content": "hi"}\nnot json\n', "line 2: not JSON"),
                       ('{"role": "user", "content": "hi"}\n', "no assistant message"),
                       ('{"role": "robot", "content": "hi"}\n', "line 1: a message is an object with a role"),
                       ('{"role": "assistant", "content": "hi"}\n', "starts with an assistant message"),
                       ('{"role": "user", "content": "a"}\n[{"role": "user", "content": "b"}]\n', "line 2: a whole "
                                                                                                  "conversation after")):
        bad.write_text(text)
        with pytest.raises(UsageError, match=said):
            read_conversations(bad)
    # at the command line: exit 2, one line, no traceback, before any server is asked
    bad.write_text('{"role": "user", "content": "hi"}\nnot json\n')
    done = run_cli("speed", "-e", "http://127.0.0.1:9/v1", "--replay", bad, timeout=120)
    assert done.returncode == 2 and "line 2: not JSON" in done.stderr and "Traceback" not in done.stderr, done.stderr
