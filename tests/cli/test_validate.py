"""``wiremcp validate FILE``: a tap capture or a plain JSONL of envelopes, every problem with its line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conftest import SERVERS, StdioPeer, call

BROKEN = str(SERVERS / "broken_wire.py")


def validate(path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiremcp", "validate", str(path)], capture_output=True, text=True, timeout=30)


def jsonl(path: Path, *messages: object) -> Path:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    return path


def ok(request_id: object) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", "content": []}}


def test_a_clean_plain_jsonl_conversation_passes(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "ok.jsonl", call(1, "echo"), ok(1), call(2, "echo"), ok(2))
    done = validate(path)
    # issue 28 item 8a: a clean capture says what was checked (it printed nothing, as if nothing was read)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", f"{path}: 4 messages, no problems\n")


def test_each_problem_is_reported_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        orjson.dumps(call(1, "echo")) + b"\n"                                    # 1: never answered
        + b"\n"                                                                  # 2: blank, skipped
        + orjson.dumps(call(2, "echo")) + b"\n"                                  # 3
        + orjson.dumps({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}) + b"\n"  # 4: no resultType
        + b"not json at all\n"                                                   # 5
        + orjson.dumps(ok(77)) + b"\n"                                           # 6: unknown id
    )
    done = validate(path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert [line.split(": ")[0:2] for line in lines] == [
        [f"{path}:4", "missing-result-type"],
        [f"{path}:5", "parse-error"],
        [f"{path}:6", "unknown-id"],
        [f"{path}:1", "never-answered"],
    ]
    assert "4 problems found" in done.stderr


def test_a_tap_capture_is_checked_again(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    peer = StdioPeer([sys.executable, "-m", "wiremcp", "tap", "--log", str(log), "--", sys.executable, BROKEN, "unknown-id"])
    peer.send(call(1, "echo", {"text": "hi"}))
    assert peer.read_line() and peer.read_line()
    peer.close_stdin()
    assert peer.wait() == 0
    done = validate(log)
    assert done.returncode == 1
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"{log}:3: unknown-id: the server replied to id \"nobody-sent-this\"")


def test_directions_come_from_the_capture_not_from_guessing(tmp_path: Path) -> None:
    # the same id used by both sides is fine when the capture says who sent what
    server_request = {"jsonrpc": "2.0", "id": 1, "method": "roots/list"}
    path = tmp_path / "cap.jsonl"
    legacy_init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "c", "version": "1"}}}
    init_ok = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}}
    rows = [("c2s", legacy_init), ("s2c", init_ok), ("s2c", server_request), ("c2s", {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})]
    path.write_bytes(b"".join(orjson.dumps({"t": 0.0, "dir": d, "msg": m, "problems": []}) + b"\n" for d, m in rows))
    done = validate(path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", f"{path}: 4 messages, no problems\n")


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_an_empty_capture_has_no_problem(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    done = validate(path)
    assert (done.returncode, done.stderr) == (0, f"{path}: 0 messages, no problems\n")


def test_a_missing_file(tmp_path: Path) -> None:
    done = validate(tmp_path / "nope.jsonl")
    assert done.returncode == 2 and "cannot read" in done.stderr
