"""The tasks extension (extensions/tasks/tasks.md, SEP-2663) end to end over stdio: a real server process.

The server is tests/server/tasks/task_server.py under ``wiremcp run``. Each
test speaks raw JSON-RPC lines; polling loops wait for a state the server
must reach, never for a fixed time.
"""

from __future__ import annotations

import os
import re
import signal
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import META, request, wiremcp_cmd

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}}}
NO_EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class Rpc:
    """Numbered requests to one peer; replies matched by id (notifications kept aside)."""

    def __init__(self, peer: Any) -> None:
        self.peer = peer
        self.n = 0
        self.notifications: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] = EXT) -> int:
        self.n += 1
        self.peer.send(request(self.n, method, params, meta=meta))
        return self.n

    def reply(self, id_: int, timeout: float = 10.0) -> dict[str, Any]:
        while True:
            message = self.peer.recv(timeout)
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return message
            self.notifications.append(message)

    def __call__(self, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] = EXT) -> dict[str, Any]:
        return self.reply(self.send(method, params, meta))

    def call(self, tool: str, arguments: dict[str, Any] | None = None, meta: dict[str, Any] = EXT, **extra: Any) -> dict[str, Any]:
        return self("tools/call", {"name": tool, "arguments": arguments or {}, **extra}, meta)

    def result(self, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] = EXT) -> dict[str, Any]:
        reply = self(method, params, meta)
        assert "result" in reply, reply
        return reply["result"]

    def poll(self, task_id: str, until: Any, deadline: float = 15.0) -> dict[str, Any]:
        """tasks/get until ``until(task)`` holds (the server must get there; the deadline only bounds a failure)."""
        end = time.monotonic() + deadline
        while True:
            task = self.result("tasks/get", {"taskId": task_id})
            if until(task) or time.monotonic() > end:
                return task


def terminal(task: dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def server(spawn: Any, **env: str) -> Rpc:
    return Rpc(spawn(*wiremcp_cmd("run", str(HERE / "task_server.py")), env=env or None))


@pytest.fixture(autouse=True)
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``wiremcp run`` keeps tasks in SQLite under $XDG_STATE_HOME: a fresh one per test."""
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


@pytest.fixture
def rpc(spawn: Any) -> Rpc:
    return server(spawn)


def test_discover_declares_the_extension_not_a_v1_tasks_capability(rpc):
    caps = rpc.result("server/discover", meta=NO_EXT)["capabilities"]
    assert caps["extensions"] == {TASKS: {}}
    assert "tasks" not in caps


def test_create_is_flat_durable_and_completes_with_the_result_inlined(rpc):
    created = rpc.call("quick", {"x": "1"})["result"]
    assert created["resultType"] == "task"
    assert set(created) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert not set(created) & {"task", "result", "error", "inputRequests", "requestState", "ttl", "pollInterval"}
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 50
    # durable before the reply: the very next request finds it
    first = rpc.result("tasks/get", {"taskId": created["taskId"]})
    assert first["resultType"] == "complete" and first["taskId"] == created["taskId"]
    done = rpc.poll(created["taskId"], terminal)
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "done 1"}]
    assert "io.modelcontextprotocol/related-task" not in (done["result"].get("_meta") or {})
    assert "error" not in done and "inputRequests" not in done


def test_without_the_extension_auto_and_callable_tools_answer_plainly(rpc):
    for tool, args in (("quick", {"x": "2"}), ("maybe", {"big": True})):
        result = rpc.call(tool, args, meta=NO_EXT)["result"]
        assert result["resultType"] == "complete" and "taskId" not in result
    # the callable decides per request: not big, no task even with the extension
    small = rpc.call("maybe", {"big": False})["result"]
    assert small["resultType"] == "complete" and small["content"][0]["text"] == "maybe big=False"
    assert rpc.call("maybe", {"big": True})["result"]["resultType"] == "task"
    # never: a tool without task= is never a task, and a legacy `task` param promotes nothing
    plain = rpc.call("plain", {"x": "y"}, task={"ttl": 1000})["result"]
    assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "plain y"


def test_a_required_task_without_the_extension_is_32021_naming_it(rpc):
    reply = rpc.call("always_job", meta=NO_EXT)
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert "always_job" in reply["error"]["message"]
    # declared on an earlier request counts for nothing: the next one without it is refused again
    assert rpc.call("always_job")["result"]["resultType"] == "task"
    assert rpc.call("always_job", meta=NO_EXT)["error"]["code"] == -32021


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_task_methods_need_the_extension(rpc, method):
    reply = rpc(method, {"taskId": "whatever", "inputResponses": {}}, meta=NO_EXT)
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_removed_v1_methods_are_method_not_found(rpc, method):
    assert rpc(method, {"taskId": "x"})["error"]["code"] == -32601


def test_unknown_and_malformed_task_ids_are_32602_saying_which(rpc):
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        reply = rpc(method, {"taskId": "no-such-task", "inputResponses": {}})
        assert reply["error"]["code"] == -32602
        assert "Task not found" in reply["error"]["message"]
        assert reply["error"]["data"] == {"taskId": "no-such-task", "reason": "unknown"}
        bad = rpc(method, {"taskId": 7, "inputResponses": {}})
        assert bad["error"]["code"] == -32602 and "'taskId'" in bad["error"]["message"]


def test_tool_error_completes_with_is_error_and_protocol_error_fails_with_it(rpc):
    oops = rpc.poll(rpc.call("oops")["result"]["taskId"], terminal)
    assert oops["status"] == "completed" and oops["result"]["isError"] is True
    assert oops["result"]["content"] == [{"type": "text", "text": "bad input"}]
    boom = rpc.poll(rpc.call("boom")["result"]["taskId"], terminal)
    assert boom["status"] == "failed" and "result" not in boom
    assert boom["error"] == {"code": -32603, "message": "the backend is down", "data": {"backend": "db"}}
    assert boom["statusMessage"] == "Tool execution failed: the backend is down"


def test_input_required_surfaces_requests_and_resumes_on_update(rpc):
    task_id = rpc.call("gate")["result"]["taskId"]
    parked = rpc.poll(task_id, lambda t: t["status"] == "input_required")
    assert parked["inputRequests"] == {
        "confirm": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Go on?", "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}},
        }
    }
    # the same snapshot again on the next poll (clients deduplicate)
    assert rpc.result("tasks/get", {"taskId": task_id})["inputRequests"] == parked["inputRequests"]
    # a key that is not outstanding is ignored, and acked
    ack = rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"nope": {"action": "accept"}}})
    assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
    assert rpc.result("tasks/get", {"taskId": task_id})["status"] == "input_required"
    ack = rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}})
    assert ack["resultType"] == "complete" and not set(ack) & {"taskId", "status", "result", "error", "inputRequests"}
    done = rpc.poll(task_id, terminal)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "confirmed=True action=accept"


def test_partial_fulfilment_keeps_the_task_waiting_for_the_rest(rpc):
    task_id = rpc.call("two")["result"]["taskId"]
    parked = rpc.poll(task_id, lambda t: t["status"] == "input_required")
    assert set(parked["inputRequests"]) == {"a", "b"}
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": {"action": "accept", "content": {"name": "Ann"}}}})
    half = rpc.result("tasks/get", {"taskId": task_id})
    assert half["status"] == "input_required" and list(half["inputRequests"]) == ["b"]
    # answering "a" again changes nothing (already answered: ignored)
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"a": {"action": "accept", "content": {"name": "Zed"}}}})
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"b": {"action": "accept", "content": {"name": "Bob"}}}})
    done = rpc.poll(task_id, terminal)
    assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "Ann & Bob"


def test_input_request_keys_are_never_reused_over_a_task(rpc):
    task_id = rpc.call("twice")["result"]["taskId"]
    first = rpc.poll(task_id, lambda t: t["status"] == "input_required")
    assert list(first["inputRequests"]) == ["q"]
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"q": {"action": "accept", "content": {"name": "one"}}}})
    second = rpc.poll(task_id, lambda t: t["status"] == "input_required" and "q" not in t["inputRequests"])
    assert list(second["inputRequests"]) == ["q-2"]
    # a late answer to the spent key is ignored; the fresh key resumes the task
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"q": {"action": "accept", "content": {"name": "late"}}}})
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"q-2": {"action": "accept", "content": {"name": "two"}}}})
    assert rpc.poll(task_id, terminal)["result"]["content"][0]["text"] == "one then two"


def test_update_needs_an_object_of_answers(rpc):
    task_id = rpc.call("gate")["result"]["taskId"]
    for bad in (None, [], "x"):
        reply = rpc("tasks/update", {"taskId": task_id, "inputResponses": bad})
        assert reply["error"]["code"] == -32602 and "inputResponses" in reply["error"]["message"]
    rpc.result("tasks/cancel", {"taskId": task_id})


def test_update_of_a_task_not_waiting_for_input_is_acked_and_ignored(rpc):
    """tasks.md: a server SHOULD ignore responses to keys not currently outstanding."""
    task_id = rpc.call("hang")["result"]["taskId"]
    ack = rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"x": {"action": "accept"}}})
    assert ack["resultType"] == "complete"
    assert rpc.result("tasks/get", {"taskId": task_id})["status"] == "working"
    rpc.result("tasks/cancel", {"taskId": task_id})
    done = rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"x": {"action": "accept"}}})
    assert done["resultType"] == "complete" and rpc.result("tasks/get", {"taskId": task_id})["status"] == "cancelled"


def test_cancel_acks_stops_the_work_and_is_idempotent(rpc):
    task_id = rpc.call("hang")["result"]["taskId"]
    working = rpc.poll(task_id, lambda t: t.get("statusMessage") == "started")
    assert working["status"] == "working"  # progress became the status message, no notifications/progress
    ack = rpc.result("tasks/cancel", {"taskId": task_id})
    assert ack["resultType"] == "complete" and not set(ack) & {"taskId", "status", "result", "error", "inputRequests"}
    assert rpc.result("tasks/get", {"taskId": task_id})["status"] == "cancelled"
    again = rpc.result("tasks/cancel", {"taskId": task_id})
    assert again["resultType"] == "complete"
    # a terminal task cancelled stays what it was
    done_id = rpc.call("quick")["result"]["taskId"]
    rpc.poll(done_id, terminal)
    rpc.result("tasks/cancel", {"taskId": done_id})
    assert rpc.result("tasks/get", {"taskId": done_id})["status"] == "completed"
    assert not [n for n in rpc.notifications if n.get("method") == "notifications/progress"]
    err = rpc.peer.finish()[2]
    assert "hang: cancelled" in err


def test_cancel_while_waiting_for_input(rpc):
    task_id = rpc.call("gate")["result"]["taskId"]
    rpc.poll(task_id, lambda t: t["status"] == "input_required")
    rpc.result("tasks/cancel", {"taskId": task_id})
    task = rpc.result("tasks/get", {"taskId": task_id})
    assert task["status"] == "cancelled" and "inputRequests" not in task
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}})
    assert rpc.result("tasks/get", {"taskId": task_id})["status"] == "cancelled"


def test_mrtr_first_then_the_task(rpc):
    first = rpc.call("named")["result"]
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert list(first["inputRequests"]) == ["who"]
    second = rpc.call(
        "named", inputResponses={"who": {"action": "accept", "content": {"name": "Alice"}}}, requestState=first["requestState"]
    )["result"]
    assert second["resultType"] == "task" and "requestState" not in second and "inputRequests" not in second
    assert rpc.poll(second["taskId"], terminal)["result"]["content"][0]["text"] == "Hello, Alice"


def _ts(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_ttl_expiry_is_never_early_and_says_expired(spawn):
    rpc = server(spawn, TASK_TTL_MS="1500")
    created = rpc.call("quick")["result"]
    assert created["ttlMs"] == 1500
    end = _ts(created["createdAt"]) + 1.5
    deadline = time.monotonic() + 20
    while True:
        reply = rpc("tasks/get", {"taskId": created["taskId"]})
        seen = time.time()
        if "error" in reply:
            break
        assert reply["result"]["taskId"] == created["taskId"]
        assert time.monotonic() < deadline, "the task never expired"
    assert seen >= end, f"expired {end - seen:.3f}s early"
    assert reply["error"]["code"] == -32602 and "expired" in reply["error"]["message"]
    assert reply["error"]["data"]["reason"] == "expired"


def test_a_task_outliving_its_ttl_stops_and_expires(spawn):
    rpc = server(spawn, TASK_TTL_MS="1000")
    task_id = rpc.call("hang")["result"]["taskId"]
    deadline = time.monotonic() + 20
    while "error" not in (reply := rpc("tasks/get", {"taskId": task_id})):
        assert time.monotonic() < deadline
    assert reply["error"]["data"]["reason"] == "expired"
    assert rpc("tasks/cancel", {"taskId": task_id})["error"]["data"]["reason"] == "expired"


def test_status_notifications_over_subscriptions_listen(rpc):
    task_id = rpc.call("gate")["result"]["taskId"]
    refused = rpc("subscriptions/listen", {"notifications": {"taskIds": [task_id]}}, meta=NO_EXT)
    assert refused["error"]["code"] == -32021
    listen = rpc.send("subscriptions/listen", {"notifications": {"taskIds": [task_id, "not-a-task"]}})
    ack = rpc.peer.recv()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    rpc.poll(task_id, lambda t: t["status"] == "input_required")
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": False}}}})
    rpc.poll(task_id, terminal)
    seen = [n["params"] for n in rpc.notifications if n.get("method") == "notifications/tasks"]
    assert seen and seen[-1]["status"] == "completed" and seen[-1]["taskId"] == task_id
    assert seen[-1]["result"]["content"][0]["text"] == "confirmed=False action=accept"
    assert all(n["_meta"] == {"io.modelcontextprotocol/subscriptionId": listen} for n in seen)
    assert not [n for n in rpc.notifications if n.get("method") in ("notifications/progress", "notifications/message")]


# -- the SQLite store: tasks survive the process ---------------------------------------------------


def test_a_task_survives_a_restart_and_a_dead_worker_is_marked_failed(spawn, tmp_path):
    db = f"sqlite:{tmp_path / 'tasks.sqlite3'}"
    first = server(spawn, WIREMCP_TASK_STORE=db)
    done_id = first.call("quick", {"x": "kept"})["result"]["taskId"]
    first.poll(done_id, terminal)
    running_id = first.call("hang")["result"]["taskId"]
    first.poll(running_id, lambda t: t.get("statusMessage") == "started")
    os.kill(first.peer.proc.pid, signal.SIGKILL)  # no chance to record anything
    first.peer.proc.wait(10)

    second = server(spawn, WIREMCP_TASK_STORE=db)
    kept = second.result("tasks/get", {"taskId": done_id})
    assert kept["status"] == "completed" and kept["result"]["content"][0]["text"] == "done kept"
    dead = second.result("tasks/get", {"taskId": running_id})
    assert dead["status"] == "failed"
    assert "stopped before it finished" in dead["statusMessage"]
    assert dead["error"]["code"] == -32603
    assert second("tasks/get", {"taskId": "never-made"})["error"]["data"]["reason"] == "unknown"


def test_wiremcp_run_keeps_tasks_in_sqlite_under_the_state_dir_by_default(spawn, state_home):
    first = server(spawn)
    task_id = first.call("quick", {"x": "durable"})["result"]["taskId"]
    assert (state_home / "wiremcp" / "tasks.sqlite3").is_file()
    first.poll(task_id, terminal)
    first.peer.finish()
    second = server(spawn)
    assert second.result("tasks/get", {"taskId": task_id})["result"]["content"][0]["text"] == "done durable"
    # WIREMCP_TASK_STORE=memory: nothing kept
    third = server(spawn, WIREMCP_TASK_STORE="memory")
    assert third("tasks/get", {"taskId": task_id})["error"]["data"]["reason"] == "unknown"


def test_a_store_that_fails_is_32603_for_new_tasks(spawn, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    rpc = server(spawn, WIREMCP_TASK_STORE=f"sqlite:{blocker / 'sub' / 'tasks.sqlite3'}")
    reply = rpc.call("quick")
    assert reply["error"]["code"] == -32603
    assert "the task could not be created" in reply["error"]["message"] and "tasks.sqlite3" in reply["error"]["message"]
    # the server lives on: plain tools still answer
    assert rpc.call("plain", {"x": "ok"})["result"]["content"][0]["text"] == "plain ok"
