"""examples/tasks.py end to end over stdio (SQLite store): progress, approval, cancellation."""

from __future__ import annotations

import time
from typing import Any

import pytest

from conftest import META, ROOT, request, wiremcp_cmd

pytestmark = pytest.mark.slow

TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}}}


@pytest.fixture
def peer(spawn, tmp_path):
    return spawn(*wiremcp_cmd("run", str(ROOT / "examples" / "tasks.py")), env={"XDG_STATE_HOME": str(tmp_path)})


def ask(peer: Any, id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = peer.ask(request(id_, method, params, meta=EXT))
    assert "result" in reply, reply
    return reply["result"]


def poll(peer: Any, task_id: str, until: Any) -> list[dict[str, Any]]:
    seen, end, n = [], time.monotonic() + 15, 1000
    while True:
        n += 1
        seen.append(ask(peer, n, "tasks/get", {"taskId": task_id}))
        if until(seen[-1]) or time.monotonic() > end:
            return seen


def test_progress_then_approval_then_result(peer):
    task_id = ask(peer, 1, "tools/call", {"name": "export_report", "arguments": {"rows": 1000}})["taskId"]
    seen = poll(peer, task_id, lambda t: t["status"] != "working")
    parked = seen[-1]
    assert parked["status"] == "input_required" and parked["statusMessage"] == "Waiting for input from the client"
    assert {t.get("statusMessage") for t in seen[:-1]} <= {None, *(f"exported {n} of 1000 rows" for n in (250, 500, 750, 1000))}
    [(key, asked)] = parked["inputRequests"].items()
    assert asked["params"]["requestedSchema"]["required"] == ["publish"]
    # progress reported before the question never overwrites input_required
    assert ask(peer, 2, "tasks/get", {"taskId": task_id})["status"] == "input_required"
    ask(peer, 3, "tasks/update", {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"publish": True, "note": "Q3"}}}})
    done = poll(peer, task_id, lambda t: t["status"] in ("completed", "failed", "cancelled"))[-1]
    assert done["result"]["content"][0]["text"] == "Exported 1000 rows and published the report: Q3."


def test_cancellation_stops_the_job(peer):
    task_id = ask(peer, 1, "tools/call", {"name": "export_report", "arguments": {"rows": 10_000_000, "batch": 1}})["taskId"]
    poll(peer, task_id, lambda t: (t.get("statusMessage") or "").startswith("exported"))
    ask(peer, 2, "tasks/cancel", {"taskId": task_id})
    assert ask(peer, 3, "tasks/get", {"taskId": task_id})["status"] == "cancelled"
    assert "export_report: cancelled after" in peer.finish()[2]


def test_the_callable_decides_per_call(peer):
    assert ask(peer, 1, "tools/call", {"name": "count_rows", "arguments": {"rows": 10}})["resultType"] == "complete"
    assert ask(peer, 2, "tools/call", {"name": "count_rows", "arguments": {"rows": 5000}})["resultType"] == "task"
