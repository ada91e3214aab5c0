"""Finding S6: ``wiremcp tap --log FILE`` wrote every envelope to a file other users could read.

The log holds each message whole -- tool arguments and results, the answers
a person typed into an elicitation form -- and was opened with ``open(path,
"wb")``: mode 0644 under the usual umask, and an existing log kept its mode.
Now a log file is 0600 whether it is new or not; a device (``/dev/stderr``)
is left alone. Over a real ``wiremcp tap`` in front of a real server.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import META, request

ECHO = str(Path(__file__).resolve().parents[2] / "src" / "wiremcp" / "examples" / "echo.py")


@pytest.fixture
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _tap(log: str) -> subprocess.CompletedProcess[bytes]:
    line = json.dumps(request(1, "tools/call", {"name": "echo", "arguments": {"text": "private"}}, meta=META)).encode() + b"\n"
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "tap", "--log", log, "--", sys.executable, "-m", "wiremcp", "run", ECHO],
        input=line, capture_output=True, timeout=60,
    )


def test_a_new_tap_log_is_private(tmp_path: Path, usual_umask: None) -> None:
    log = tmp_path / "wire.jsonl"
    done = _tap(str(log))
    assert done.returncode == 0, done.stderr
    assert b"private" in log.read_bytes()  # what the log holds
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_an_existing_world_readable_tap_log_is_made_private(tmp_path: Path, usual_umask: None) -> None:
    log = tmp_path / "wire.jsonl"
    log.write_text("old\n")
    log.chmod(0o644)
    done = _tap(str(log))
    assert done.returncode == 0, done.stderr
    assert b"old" not in log.read_bytes()  # truncated, as before
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_device_log_is_left_as_it_is(tmp_path: Path) -> None:
    before = stat.S_IMODE(os.stat("/dev/null").st_mode)
    done = _tap("/dev/null")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat("/dev/null").st_mode) == before
