"""Issue 24, defect 5: ``wiremcp tap`` tells a stream the client hung up on from a request never answered.

A real wiremcp client in a subprocess opens ``subscriptions/listen`` through tap to a real wiremcp
server and goes away (killed, or exiting without clean-up, as Claude Code does on every session).
That is not a violation: tap logs a ``hung-up`` note saying the client closed first. A server that
closes first with the stream still open, or a plain request left unanswered, stays a
``never-answered`` problem that says which side closed first.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from _servers import ROOT
from wiremcp.cli._tap import Tap

pytestmark = pytest.mark.slow

LISTENER = str(Path(__file__).resolve().parent / "peers" / "wiremcp_listener.py")
SAMPLE = str(ROOT / "tests" / "servers" / "sample.py")


def _records(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def _final(log: Path, timeout: float = 30) -> list[dict[str, Any]]:
    """The records tap wrote at exit (msg null), once it has written them (tap outlives the client)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists():
            finals = [r for r in _records(log) if r["msg"] is None]
            if finals:
                return finals
        time.sleep(0.1)
    raise AssertionError(f"tap wrote no final record: {log.read_text() if log.exists() else '(no log)'}")


@pytest.mark.parametrize("how", ["exit", "kill", "terminate"])
def test_a_listen_stream_the_client_hung_up_on_is_not_a_violation(tmp_path: Path, how: str) -> None:
    """``terminate``: the host ends the server with SIGTERM, stdin still open, so the server's stdout
    ends first; seen with Claude Code 2.1.328 on every modern session. The host hung up all the same."""
    log = tmp_path / "wire.jsonl"
    tap = [sys.executable, "-m", "wiremcp", "tap", "--log", str(log), "--", sys.executable, "-m", "wiremcp", "run", SAMPLE]
    client = subprocess.Popen(
        [sys.executable, LISTENER, "wait" if how == "kill" else how, *tap], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert client.stdout is not None
        assert client.stdout.readline() == b"listening\n", client.stderr.read() if client.stderr else b""
        if how == "kill":
            client.send_signal(signal.SIGKILL)
        client.wait(30)
        (final,) = _final(log)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert final["problems"] == [], final
    assert final["closedFirst"] == "client" and final["dir"] == "s2c"
    assert final["note"]["code"] == "hung-up"
    assert "subscriptions/listen" in final["note"]["message"] and "the client hung up" in final["note"]["message"]
    assert final.get("signal") == ("SIGTERM" if how == "terminate" else None)
    # `wiremcp validate` judges the capture as tap did (the Claude Code test found it did not)
    validated = subprocess.run([sys.executable, "-m", "wiremcp", "validate", str(log)], capture_output=True, text=True, timeout=60)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    listens = [r for r in _records(log) if (r["msg"] or {}).get("method") == "subscriptions/listen"]
    assert len(listens) == 1 and listens[0]["problems"] == []


def _line(obj: dict[str, Any]) -> bytes:
    return orjson.dumps(obj) + b"\n"


_LISTEN = {
    "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
    "params": {"notifications": {"toolsListChanged": True}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    }},
}


@pytest.mark.parametrize(("first", "code"), [("s2c", "never-answered"), ("c2s", None)])
def test_which_side_closed_first_decides(first: str, code: str | None) -> None:
    """The same open stream: a violation when the server closed first, a hang-up when the client did."""
    out = io.BytesIO()
    tap = Tap(out)
    tap.feed("c2s", _line(_LISTEN))
    second = "c2s" if first == "s2c" else "s2c"
    tap.end(first)  # type: ignore[arg-type]
    tap.end(second)  # type: ignore[arg-type]
    tap.finish()
    final = json.loads(out.getvalue().splitlines()[-1])
    assert final["closedFirst"] == ("server" if first == "s2c" else "client")
    if code is None:
        assert final["problems"] == [] and final["note"]["code"] == "hung-up"
    else:
        (problem,) = final["problems"]
        assert problem["code"] == code and problem["message"].endswith("the server closed its side first")


def test_a_plain_request_left_unanswered_stays_a_violation_when_the_client_closed_first() -> None:
    out = io.BytesIO()
    tap = Tap(out)
    tap.feed("c2s", _line({**_LISTEN, "method": "tools/list", "params": {"_meta": _LISTEN["params"]["_meta"]}}))
    tap.end("c2s")
    tap.end("s2c")
    tap.finish()
    final = json.loads(out.getvalue().splitlines()[-1])
    (problem,) = final["problems"]
    assert problem["code"] == "never-answered" and problem["message"].endswith("the client closed its side first")
