"""``wiremcp tap`` over real processes: bytes unchanged, every envelope logged, broken servers caught.

The official `mcp` SDK client drives tap in front of a wiremcp server
(tests/client/_helpers.py has its interpreter); deliberately broken servers
are tests/servers/broken_wire.py. Each test reads the log tap wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import ROOT, SERVERS, StdioPeer, call

pytestmark = pytest.mark.slow

OFFICIAL_PYTHON = ROOT / "bench" / ".venv-official" / "bin" / "python"
REQUIRE_INTEROP = bool(os.environ.get("WIREMCP_REQUIRE_INTEROP"))
BROKEN = str(SERVERS / "broken_wire.py")
HERE = Path(__file__).resolve().parent


def tap(log: Path, *command: str) -> list[str]:
    return [sys.executable, "-m", "wiremcp", "tap", "--log", str(log), "--", *command]


def records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def problems(log: Path) -> list[tuple[str, str]]:
    return [(p["code"], p["message"]) for r in records(log) for p in r["problems"]]


@pytest.mark.skipif(not OFFICIAL_PYTHON.exists() and not REQUIRE_INTEROP, reason="bench/.venv-official is not set up")
def test_official_client_through_tap_to_a_wiremcp_server(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    command = tap(log, sys.executable, "-m", "wiremcp", "run", str(SERVERS / "sample.py"))
    done = subprocess.run(
        [str(OFFICIAL_PYTHON), str(HERE / "official_client.py"), "echo", '{"text": "through the tap"}', "--", *command],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "through the tap"
    logged = records(log)
    assert [(r["dir"], r["msg"].get("method"), r["msg"].get("id")) for r in logged] == [
        ("c2s", "initialize", 1),
        ("s2c", None, 1),
        ("c2s", "notifications/initialized", None),
        ("c2s", "tools/list", 2),
        ("s2c", None, 2),
        ("c2s", "tools/call", 3),
        ("s2c", None, 3),
    ]
    assert all(r["problems"] == [] for r in logged), problems(log)
    assert logged[1]["msg"]["result"]["protocolVersion"] == "2025-11-25"
    assert logged[-1]["msg"]["result"]["content"][0]["text"] == "through the tap"
    times = [r["t"] for r in logged]
    assert times == sorted(times) and all(type(t) is float for t in times)


def test_bytes_pass_unchanged_both_ways(tmp_path: Path) -> None:
    log, seen = tmp_path / "wire.jsonl", tmp_path / "server-saw.bin"
    peer = StdioPeer(tap(log, sys.executable, BROKEN, "mirror", str(seen)))
    sent = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"t":"caf\xc3\xa9 \\u2713"},"_meta":'
        b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}\n',
        b'   {"jsonrpc": "2.0", "id": "two", "method": "tools/call", "params": {"name": "e", "arguments": {"x": "' + b"y" * 300_000
        + b'"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}\r\n',
    ]
    peer.send_raw(sent[0][:40])  # a message split across writes still arrives whole and in order
    peer.send_raw(sent[0][40:])
    first = peer.read_line()  # (read_line removes the "\n")
    peer.send_raw(sent[1])
    second = peer.read_line()
    peer.close_stdin()
    assert peer.wait() == 0
    expected = b'{"jsonrpc": "2.0",  "id": %s, "result": {"resultType": "complete", "content": [{"type": "text", "text": "caf\\u00e9 \xe2\x9c\x93"}]}}\r'
    assert first == expected % b"1"
    assert second == expected % b'"two"'
    assert seen.read_bytes() == b"".join(sent)
    logged = records(log)
    assert [(r["dir"], r["msg"]["id"]) for r in logged] == [("c2s", 1), ("s2c", 1), ("c2s", "two"), ("s2c", "two")]
    assert logged[0]["msg"]["params"]["arguments"]["t"] == "café ✓"
    assert all(r["problems"] == [] for r in logged), problems(log)


@pytest.mark.parametrize(
    ("mode", "code", "words"),
    [
        ("no-result-type", "missing-result-type", "resultType"),
        ("unknown-id", "unknown-id", '"nobody-sent-this"'),
        ("unparseable", "parse-error", "not JSON"),
        ("never-answers", "never-answered", "request 1 (tools/call) from the client was never answered"),
    ],
)
def test_a_broken_server_is_reported_with_a_clear_message(tmp_path: Path, mode: str, code: str, words: str) -> None:
    log = tmp_path / "wire.jsonl"
    peer = StdioPeer(tap(log, sys.executable, BROKEN, mode))
    peer.send(call(1, "echo", {"text": "hi"}))
    if mode != "never-answers":
        replies = [peer.read_line() for _ in range(2 if mode in ("unknown-id", "unparseable") else 1)]
        assert all(replies)
    peer.close_stdin()
    assert peer.wait() == 0
    found = problems(log)
    assert len(found) == 1, found
    assert found[0][0] == code and words in found[0][1]
    if mode == "unparseable":
        (bad,) = [r for r in records(log) if r["msg"] is None]
        assert bad["raw"] == "Server starting... (a print() that went to stdout)" and bad["dir"] == "s2c"


def test_the_log_defaults_to_stderr_and_exit_status_passes_through(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "tap", "--", sys.executable, "-c", "import sys; print('{\"jsonrpc\": \"2.0\"}'); sys.exit(7)"],
        capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 7
    assert done.stdout == b'{"jsonrpc": "2.0"}\n'
    (record,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert record["dir"] == "s2c" and record["problems"][0]["code"] == "invalid-envelope"


def test_signals_reach_the_server_and_its_death_by_signal_is_tap_s(tmp_path: Path) -> None:
    script = (
        "import signal, sys, os\n"
        "signal.signal(signal.SIGTERM, lambda *a: (sys.stdout.write('got TERM\\n'), sys.stdout.flush(), os._exit(3)))\n"
        "sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
        "signal.pause()\n"
    )
    peer = StdioPeer(tap(tmp_path / "log", sys.executable, "-c", script))
    assert peer.read_line() == b"ready"
    peer.proc.send_signal(signal.SIGTERM)
    assert peer.read_line() == b"got TERM"
    assert peer.wait() == 3
    killer = StdioPeer(tap(tmp_path / "log2", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"))
    assert killer.wait() == -signal.SIGKILL


def test_stdin_eof_reaches_the_server_at_once(tmp_path: Path) -> None:
    script = "import sys\nfor line in sys.stdin: pass\nprint('saw EOF', flush=True)\ninput_done = True\nimport time; time.sleep(30)\n"
    peer = StdioPeer(tap(tmp_path / "log", sys.executable, "-c", script))
    peer.close_stdin()
    assert peer.read_line(timeout=10) == b"saw EOF"
    peer.kill()


def test_a_line_cut_off_by_the_end_of_the_stream_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    done = subprocess.run(
        tap(log, sys.executable, "-c", "import sys; sys.stdout.write('{\"jsonrpc\": \"2.0\", \"method\": \"x\"')"),
        capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0
    (record,) = records(log)
    assert record["problems"][0]["code"] == "unterminated-line" and record["raw"].startswith('{"jsonrpc"')


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "tap", "--", str(tmp_path / "no-such-server")], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 127 and "cannot start" in done.stderr
    done = subprocess.run([sys.executable, "-m", "wiremcp", "tap"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "after --" in done.stderr
