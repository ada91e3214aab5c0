"""``wiremcp call`` with tasks (live status, ``--detach``) and ``wiremcp task get|cancel|watch``, as a user runs them.

Spec: extensions/tasks tasks.md (Task Polling, Task Cancellation) and
2025-11-25 basic/utilities/tasks.mdx. Servers are real processes:
``wiremcp run examples/everything.py`` (over HTTP, where a task outlives
each command's connection, and over stdio).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import orjson
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = str(ROOT / "src" / "wiremcp" / "examples" / "everything.py")


def wiremcp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiremcp", *args], capture_output=True, text=True, timeout=60, cwd=ROOT)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """examples/everything.py over Streamable HTTP on a free loopback port."""
    pytest.importorskip("uvicorn")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", EVERYTHING, "--http", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "WIREMCP_TASK_STORE": "memory"},
    )
    try:
        end = time.monotonic() + 30
        while True:  # until it listens: a synchronisation point
            assert proc.poll() is None, "the server exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < end, "the server never listened"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_call_shows_status_changes_live_and_prints_the_result() -> None:
    done = wiremcp("call", EVERYTHING, "slow_compute", '{"seconds": 0.3, "label": "sum"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "computed sum after 0.3s"
    lines = [line for line in done.stderr.splitlines() if line.startswith("task ")]
    assert lines[0].endswith(": working") or ": working" in lines[0]
    assert ": completed" in lines[-1]
    assert "\x1b[" not in done.stderr  # plain when piped


def test_detach_prints_the_id_then_task_commands_follow_it(url: str) -> None:
    done = wiremcp("call", "--detach", url, "slow_compute", '{"seconds": 0.5, "label": "later"}')
    assert done.returncode == 0, done.stderr
    task_id = done.stdout.strip()
    assert task_id and "\n" not in task_id
    got = wiremcp("task", "get", url, task_id)
    assert got.returncode == 0, got.stderr
    task = orjson.loads(got.stdout)
    assert task["taskId"] == task_id and task["status"] in ("working", "completed")
    watched = wiremcp("task", "watch", url, task_id)
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.strip() == "computed later after 0.5s"
    assert f"task {task_id}: completed" in watched.stderr
    got = wiremcp("task", "get", url, task_id)
    task = orjson.loads(got.stdout)
    assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "computed later after 0.5s"


def test_task_cancel_then_watch_reports_the_cancellation(url: str) -> None:
    done = wiremcp("call", "--detach", url, "slow_compute", '{"seconds": 30}')
    task_id = done.stdout.strip()
    cancelled = wiremcp("task", "cancel", url, task_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith(f"task {task_id}: ")
    watched = wiremcp("task", "watch", url, task_id)
    assert watched.returncode == 1
    assert f"task {task_id} was cancelled" in watched.stdout


def test_watch_with_listen_waits_for_notifications(url: str) -> None:
    # long enough to be running still when watch starts (a process start): the test waits on the task, not a clock
    task_id = wiremcp("call", "--detach", url, "slow_compute", '{"seconds": 4}').stdout.strip()
    watched = wiremcp("task", "watch", "--listen", "--wire", url, task_id)
    assert watched.returncode == 0, watched.stderr
    assert '"method": "subscriptions/listen"' in watched.stdout
    assert '"method": "tasks/get"' in watched.stdout  # the first look; then notifications only
    assert watched.stdout.count('"method": "tasks/get"') == 1
    assert '"method": "notifications/tasks"' in watched.stdout
    assert "computed result after 4s" in watched.stdout


def test_an_unknown_task_is_the_servers_error_and_exit_status_1(url: str) -> None:
    got = wiremcp("task", "get", url, "no-such-task")
    assert got.returncode == 1
    assert "error -32602" in got.stdout


def test_usage_errors_exit_2(url: str) -> None:
    done = wiremcp("task", "get", url)
    assert done.returncode == 2 and "task get wants TARGET and one task ID" in done.stderr
    done = wiremcp("task", "stop", url, "x")
    assert done.returncode == 2


def test_a_tool_answered_at_once_just_prints_its_result_even_with_detach() -> None:
    done = wiremcp("call", "--detach", EVERYTHING, "greet", '{"name": "Ada"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello, Ada!"
