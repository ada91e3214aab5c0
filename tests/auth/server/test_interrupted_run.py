"""Ctrl-C on the test suite leaves no ``node tests/auth/as/server.mjs`` running (issue 28, item 8e).

A pytest process runs one test that starts the authorization server (its
module fixture and one started in the test); it is sent SIGINT, alone, as an
IDE's stop button or ``kill -INT`` does, as soon as the first ``node`` process
exists (while it starts, the moment an interruption used to leave it behind).
Every ``node`` it started must be gone once pytest has exited.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
TEST = "tests/auth/server/test_protected_http.py::test_wrong_issuer_is_refused"


def _children_running_server_mjs(parent: int) -> set[int]:
    """The processes whose parent is ``parent`` and whose command line names server.mjs."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"server.mjs" in cmdline:
            found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_sigint_to_pytest_leaves_no_node_behind(node: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", TEST],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        started: set[int] = set()
        while not started and proc.poll() is None and time.monotonic() < deadline:
            started = _children_running_server_mjs(proc.pid)
            time.sleep(0.005)  # polling for a process to appear, not waiting for silence
        assert started, f"no node server.mjs under pytest; it said:\n{proc.communicate()[0].decode()}"
        proc.send_signal(signal.SIGINT)
        output = proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, output  # pytest's "interrupted"
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = [pid for pid in started if _alive(pid)]
    for pid in left:  # clean up for the next run, then fail
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"node server.mjs still running after pytest was interrupted:\n{output}"
