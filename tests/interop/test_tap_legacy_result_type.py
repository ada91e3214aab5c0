"""``wiremcp tap`` flags a ``resultType`` in a legacy session's result (issue 24), on a real stdio conversation.

``resultType`` is a 2026-07-28 member; a 2025-11-25 (or older) session's result must not carry it.
Tap sits between raw envelopes written here and a canned broken server (tests/servers/
legacy_result_type.py); the same server without the member, and a real wiremcp server's legacy
session, give no problem.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _servers import ROOT

pytestmark = pytest.mark.slow

CANNED = str(ROOT / "tests" / "servers" / "legacy_result_type.py")
SAMPLE = str(ROOT / "tests" / "servers" / "sample.py")
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def _tapped(tmp_path: Path, server: list[str], tool: str) -> list[dict[str, Any]]:
    """Initialize, call ``tool`` through tap, close; tap's log records."""
    log = tmp_path / "wire.jsonl"
    tap = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "tap", "--log", str(log), "--", *server],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    assert tap.stdin is not None and tap.stdout is not None
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {"text": "hi"}}},
        ):
            tap.stdin.write(json.dumps(message).encode() + b"\n")
            tap.stdin.flush()
            if "id" in message:
                reply = json.loads(tap.stdout.readline())
                assert reply["id"] == message["id"] and "result" in reply, reply
        tap.stdin.close()
        tap.wait(30)
    finally:
        if tap.poll() is None:
            tap.kill()
            tap.wait()
    return [json.loads(line) for line in log.read_text().splitlines() if line]


def _call_reply(records: list[dict[str, Any]]) -> dict[str, Any]:
    (record,) = [r for r in records if r["msg"] is not None and r["msg"].get("id") == 2 and "method" not in r["msg"]]
    return record


def test_tap_flags_result_type_in_a_legacy_result(tmp_path: Path) -> None:
    record = _call_reply(_tapped(tmp_path, [sys.executable, CANNED, "broken"], "echo"))
    codes = [p["code"] for p in record["problems"]]
    assert codes == ["legacy-result-type"], record
    assert "2025-11-25" in record["problems"][0]["message"] and "resultType" in record["problems"][0]["message"]


def test_tap_passes_the_same_result_without_it(tmp_path: Path) -> None:
    assert _call_reply(_tapped(tmp_path, [sys.executable, CANNED, "clean"], "echo"))["problems"] == []


def test_a_wiremcp_legacy_session_passes_tap(tmp_path: Path) -> None:
    records = _tapped(tmp_path, [sys.executable, "-m", "wiremcp", "run", SAMPLE], "echo")
    assert "resultType" not in _call_reply(records)["msg"]["result"]
    assert [r["problems"] for r in records if r["problems"]] == []
