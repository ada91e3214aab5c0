"""Races over loopback Streamable HTTP: cancellation against completion (2025-11-25 sessions), TTL expiry
against polls and cancels from two connections at once.

Spec: extensions/tasks/tasks.md (Task Polling: a task is found until its TTL
has elapsed, never expired early; Task Cancellation: a terminal status never
changes) and 2025-11-25 basic/utilities/tasks.mdx ("Cancelling Tasks":
cancelling a terminal task is -32602; a task reaches exactly one terminal
status). The server is tests/server/tasks/task_server.py under ``wiremcp run
--http`` with a TTL of 1.5 s. (The 2026-07-28 cancel/complete race over HTTP is
test_tasks_http.py's; over stdio with the client, test_client_tasks_modern.py's.)
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

import pytest
from test_tasks_http import Modern, legacy_session, terminal

from conftest import wiremcp_cmd

pytestmark = pytest.mark.slow
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

HERE = Path(__file__).resolve().parent
TTL_MS = 1500
#: createdAt is given to the millisecond: the end computed from it is exact to that much.
MS = 0.001


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    log = tempfile.NamedTemporaryFile(prefix="wiremcp-tasks-races-", suffix=".log", delete=False)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path_factory.mktemp("state")), "TASK_TTL_MS": str(TTL_MS)}
    proc = subprocess.Popen(
        wiremcp_cmd("run", str(HERE / "task_server.py"), "--http", "--port", "0"), stdout=subprocess.DEVNULL, stderr=log, env=env
    )
    try:
        deadline = time.monotonic() + 20
        while not (found := re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", Path(log.name).read_text(errors="replace"))):
            assert time.monotonic() < deadline and proc.poll() is None, Path(log.name).read_text()
            time.sleep(0.02)
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(10)
        Path(log.name).unlink(missing_ok=True)


def _ts(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_legacy_cancel_racing_completion_leaves_one_outcome(port):
    """Either the cancel wins (its reply is the cancelled task) or the completion did (-32602, terminal);
    tasks/get and tasks/result then agree with it, every time."""
    _, ask = legacy_session(port)
    outcomes = set()
    n = 0
    for _ in range(12):
        n += 3
        task_id = ask(n, "tools/call", {"name": "quick", "arguments": {"x": "race"}, "task": {}})["result"]["task"]["taskId"]
        cancel = ask(n + 1, "tasks/cancel", {"taskId": task_id})
        if "result" in cancel:
            assert cancel["result"]["status"] == "cancelled"
            outcome = "cancelled"
        else:
            assert cancel["error"]["code"] == -32602 and cancel["error"]["data"]["status"] == "completed"
            outcome = "completed"
        assert ask(n + 2, "tasks/get", {"taskId": task_id})["result"]["status"] == outcome
        fetched = ask(n + 3, "tasks/result", {"taskId": task_id})
        if outcome == "completed":
            assert fetched["result"]["content"][0]["text"] == "done race"
        else:
            assert "error" in fetched and "cancelled" in fetched["error"]["message"]
        outcomes.add(outcome)
    assert outcomes <= {"completed", "cancelled"}


def test_expiry_racing_polls_and_cancels_from_two_connections(port):
    """Two connections poll (and cancel) a completed and a running task across their TTL's end: before it,
    each answer is the task as it is; from it on, each is -32602 "expired"; never early, never back."""
    rpc = Modern(port)
    done = rpc.result("tools/call", {"name": "quick", "arguments": {"x": "ttl"}})
    rpc.poll(done["taskId"], terminal)
    running = rpc.result("tools/call", {"name": "hang", "arguments": {}})
    assert done["ttlMs"] == running["ttlMs"] == TTL_MS
    ends = {t["taskId"]: _ts(t["createdAt"]) + TTL_MS / 1000 for t in (done, running)}
    seen: list[tuple[str, str, float, float, Any]] = []
    problems: list[BaseException] = []

    def poller(method: str) -> None:
        mine = Modern(port)
        expired = set()
        try:
            while len(expired) < len(ends):
                for task_id in ends:
                    sent = time.time()
                    status, body = mine(method, {"taskId": task_id})
                    seen.append((task_id, method, sent, time.time(), body))
                    if "error" in body:
                        assert status == 400 and body["error"]["data"]["reason"] == "expired", body
                        expired.add(task_id)
                    else:
                        assert task_id not in expired, f"{task_id} answered after it had expired"
                assert time.time() < max(ends.values()) + 15, "the tasks never expired"
        except BaseException as exc:  # noqa: BLE001  # reported by the test thread below
            problems.append(exc)

    threads = [threading.Thread(target=poller, args=("tasks/get",)), threading.Thread(target=poller, args=("tasks/cancel",))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not problems, problems
    for task_id, method, sent, answered, body in seen:
        if "error" in body:
            assert answered + MS >= ends[task_id], f"{method} {task_id}: expired {ends[task_id] - answered:.3f}s early"
        elif method == "tasks/get":
            task = body["result"]
            assert sent < ends[task_id] + MS  # found after the end: never
            if task_id == done["taskId"]:
                assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "done ttl"
            else:
                assert task["status"] in ("working", "cancelled")
    # the cancels before the end acknowledged: the running task was cancelled, the completed one stayed completed
    gets = [b["result"] for tid, m, s, a, b in seen if tid == done["taskId"] and m == "tasks/get" and "result" in b]
    assert gets and all(g["status"] == "completed" for g in gets)
