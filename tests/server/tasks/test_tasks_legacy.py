"""2025-11-25 experimental tasks (2025-11-25 basic/utilities/tasks.mdx) over stdio, on the same tools.

A tool registered with ``task=`` is a task for a legacy client that augments
its ``tools/call`` with ``params.task``; ``tasks/get``, ``tasks/result``,
``tasks/list`` and ``tasks/cancel`` answer in that revision's shapes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from conftest import wiremcp_cmd

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
RELATED = "io.modelcontextprotocol/related-task"


class Session:
    def __init__(self, peer: Any, capabilities: dict[str, Any] | None = None) -> None:
        self.peer = peer
        self.n = 0
        self.notifications: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.init = self("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities or {}, "clientInfo": {"name": "old", "version": "1"}})
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        self.n += 1
        self.peer.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params or {}})
        return self.n

    def reply(self, id_: int) -> dict[str, Any]:
        while True:
            message = self.peer.recv()
            if message.get("id") == id_ and "method" not in message:
                return message
            (self.requests if "id" in message else self.notifications).append(message)

    def __call__(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.reply(self.send(method, params))

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def poll(self, task_id: str, until: Any) -> dict[str, Any]:
        end = time.monotonic() + 15
        while True:
            task = self.result("tasks/get", {"taskId": task_id})
            if until(task) or time.monotonic() > end:
                return task


@pytest.fixture
def session(spawn, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return Session(spawn(*wiremcp_cmd("run", str(HERE / "task_server.py"))), {"elicitation": {}})


def test_initialize_declares_tasks_and_tools_declare_task_support(session):
    caps = session.init["result"]["capabilities"]
    assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "extensions" not in caps
    tools = {t["name"]: t for t in session.result("tools/list")["tools"]}
    assert "execution" not in tools["plain"]
    assert tools["quick"]["execution"] == {"taskSupport": "optional"}
    assert tools["maybe"]["execution"] == {"taskSupport": "optional"}
    assert tools["always_job"]["execution"] == {"taskSupport": "required"}


def test_task_augmented_call_get_result_list(session):
    created = session.result("tools/call", {"name": "quick", "arguments": {"x": "old"}, "task": {"ttl": 60_000}})
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 60_000 and task["pollInterval"] == 50
    assert "ttlMs" not in task and "resultType" not in created
    result = session.result("tasks/result", {"taskId": task["taskId"]})  # blocks until terminal
    assert result["content"] == [{"type": "text", "text": "done old"}]
    assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
    got = session.result("tasks/get", {"taskId": task["taskId"]})
    assert got["status"] == "completed" and got["ttl"] == 60_000 and "result" not in got
    listed = session.result("tasks/list")
    assert [t["taskId"] for t in listed["tasks"]] == [task["taskId"]] and "nextCursor" not in listed
    assert session("tasks/list", {"cursor": "bogus"})["error"]["code"] == -32602
    statuses = [n["params"]["status"] for n in session.notifications if n["method"] == "notifications/tasks/status"]
    assert statuses and statuses[-1] == "completed"


def test_without_params_task_the_call_is_plain_and_required_is_32601(session):
    plain = session.result("tools/call", {"name": "quick", "arguments": {"x": "sync"}})
    assert plain["content"][0]["text"] == "done sync" and "task" not in plain
    refused = session("tools/call", {"name": "always_job", "arguments": {}})
    assert refused["error"]["code"] == -32601 and "params.task" in refused["error"]["message"]
    bad = session("tools/call", {"name": "quick", "arguments": {}, "task": {"ttl": "soon"}})
    assert bad["error"]["code"] == -32602


def test_failed_and_tool_errors_in_the_legacy_shapes(session):
    oops = session.result("tools/call", {"name": "oops", "arguments": {}, "task": {}})["task"]["taskId"]
    result = session.result("tasks/result", {"taskId": oops})
    assert result["isError"] is True
    assert session.result("tasks/get", {"taskId": oops})["status"] == "failed"  # 2025-11-25: isError is failed
    boom = session.result("tools/call", {"name": "boom", "arguments": {}, "task": {}})["task"]["taskId"]
    error = session("tasks/result", {"taskId": boom})["error"]
    assert error == {"code": -32603, "message": "the backend is down", "data": {"backend": "db"}}


def test_cancel_returns_the_task_and_refuses_a_terminal_one(session):
    task_id = session.result("tools/call", {"name": "hang", "arguments": {}, "task": {}})["task"]["taskId"]
    cancelled = session.result("tasks/cancel", {"taskId": task_id})
    assert cancelled["taskId"] == task_id and cancelled["status"] == "cancelled"
    again = session("tasks/cancel", {"taskId": task_id})
    assert again["error"]["code"] == -32602 and "terminal" in again["error"]["message"]
    assert session("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602


def test_input_in_a_legacy_task_is_a_real_request_tagged_with_the_task(session):
    task_id = session.result("tools/call", {"name": "gate", "arguments": {}, "task": {}})["task"]["taskId"]
    waiting = session.send("tasks/result", {"taskId": task_id})
    while not session.requests:
        message = session.peer.recv()
        (session.requests if "id" in message and "method" in message else session.notifications).append(message)
    asked = session.requests[0]
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["_meta"][RELATED] == {"taskId": task_id}
    session.peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"confirm": True}}})
    result = session.reply(waiting)["result"]
    assert result["content"][0]["text"] == "confirmed=True action=accept"
    statuses = [n["params"]["status"] for n in session.notifications if n.get("method") == "notifications/tasks/status"]
    assert "input_required" in statuses and statuses[-1] == "completed"
