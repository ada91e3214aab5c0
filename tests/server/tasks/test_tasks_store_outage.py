"""The task store becomes unreachable while the server runs (issue 14, "Bad input gets"), over stdio.

Rules tested (extensions/tasks/tasks.md: a ``CreateTaskResult`` only once the
task is durably created; basic/index.mdx: -32603 for an internal error):
while the store is down a new task gets -32603 naming the store's problem and
is not created, and looking a task up is -32603 too; a task already running
goes on and finishes; its outcome, written again until the store is back,
is not lost, and is reported exactly once (one terminal status notification).
The server is tests/server/tasks/flaky_store_server.py under ``wiremcp run``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from conftest import META, request, wiremcp_cmd

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}


class Rpc:
    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.n = 0
        self.notifications: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.n += 1
        self.peer.send(request(self.n, method, params, meta=EXT))
        return self.n

    def reply(self, id_: int) -> dict[str, Any]:
        while True:
            message = self.peer.recv(15)
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return message
            self.notifications.append(message)

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.reply(self.send(method, params))

    def tool(self, name: str) -> dict[str, Any]:
        return self("tools/call", {"name": name, "arguments": {}})


def test_a_store_outage_refuses_new_tasks_and_loses_nothing_of_running_ones(spawn, tmp_path):
    rpc = Rpc(spawn(*wiremcp_cmd("run", str(HERE / "flaky_store_server.py")), env={"STORE_PATH": str(tmp_path / "t.sqlite3")}))
    task_id = rpc.tool("gated")["result"]["taskId"]
    listen = rpc.send("subscriptions/listen", {"notifications": {"taskIds": [task_id]}})
    ack = rpc.peer.recv(15)
    assert ack["method"] == "notifications/subscriptions/acknowledged" and ack["params"]["notifications"] == {"taskIds": [task_id]}
    while rpc("tasks/get", {"taskId": task_id})["result"].get("statusMessage") != "waiting for release":
        time.sleep(0.01)

    assert rpc.tool("store_down")["result"]["content"][0]["text"] == "down"
    refused = rpc.tool("quick")["error"]
    assert refused["code"] == -32603
    assert refused["message"].startswith("Internal error: the task could not be created")
    assert "the task store is unreachable" in refused["message"]
    looked = rpc("tasks/get", {"taskId": task_id})["error"]
    assert looked["code"] == -32603 and "the task store is unreachable" in looked["message"]

    assert rpc.tool("release")["result"]["content"][0]["text"] == "released"  # the running task finishes now
    assert rpc.tool("store_down")["result"]["content"][0]["text"] == "down"  # (the server still answers)
    assert rpc.tool("store_up")["result"]["content"][0]["text"] == "up"
    deadline = time.monotonic() + 15
    while (task := rpc("tasks/get", {"taskId": task_id})["result"])["status"] == "working":
        assert time.monotonic() < deadline, "the outcome was never written"
        time.sleep(0.02)
    assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "gated work done"
    assert rpc("tasks/get", {"taskId": task_id})["result"]["status"] == "completed"

    rpc.peer.send(request(999, "ping", {}, meta=EXT))  # a marker: every notification sent before it has arrived
    rpc.reply(999)
    finals = [n["params"] for n in rpc.notifications if n.get("method") == "notifications/tasks" and n["params"]["status"] != "working"]
    assert [(f["taskId"], f["status"]) for f in finals] == [(task_id, "completed")]  # reported once
    assert finals[0]["result"]["content"][0]["text"] == "gated work done"
    assert listen not in [m.get("id") for m in rpc.notifications]  # the subscription is still open
    # the store is back: new tasks are created again; the refused one never existed
    again = rpc.tool("quick")["result"]
    assert again["resultType"] == "task"
