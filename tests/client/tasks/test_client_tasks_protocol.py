"""Tasks in the sans-I/O client core, with plain messages only: no event loop, no transport, no clock.

Spec: extensions/tasks (tasks.md, SEP-2663: Capability Negotiation,
Polymorphic Results, Task Polling, Task Update Requests, Task Cancellation,
Task Status Notifications, Streamable HTTP: Routing Headers) and
2025-11-25 basic/utilities/tasks.mdx (Creating Tasks, Tool-Level
Negotiation, Task Status Notification, Input Required Status).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from wiremcp.client import ClientProtocol, ProtocolViolation, TaskFollower, TaskState, events
from wiremcp.client._eras import EraChoice, Initialize
from wiremcp.client._tasks import (
    BACKOFF,
    DEFAULT_MAX_POLL_INTERVAL,
    DEFAULT_POLL_INTERVAL,
    TASKS_EXTENSION,
    Answer,
    Fetch,
    Finished,
    Wait,
    augment,
    created_task,
    legacy_task_support,
    parse_task,
)

CAPS = "io.modelcontextprotocol/clientCapabilities"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
TID = "786512e2-9e0d-44bd-8f29-789f320fe840"


def make(era: EraChoice = "modern", **options: Any) -> ClientProtocol[str]:
    options.setdefault("client_info", {"name": "t", "version": "1"})
    proto: ClientProtocol[str] = ClientProtocol(era=era, **options)
    step = proto.start()
    if type(step) is Initialize:
        proto.initialized({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})
    return proto


def modern_task(status: str = "working", **extra: Any) -> dict[str, Any]:
    """A task object as tasks.md shows it (the example message flow's values)."""
    task: dict[str, Any] = {
        "taskId": TID,
        "status": status,
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 3600000,
        "pollIntervalMs": 5000,
    }
    task.update(extra)
    return task


def legacy_task(status: str = "working", **extra: Any) -> dict[str, Any]:
    """A task object as 2025-11-25 tasks.mdx shows it."""
    task: dict[str, Any] = {
        "taskId": TID,
        "status": status,
        "statusMessage": "The operation is now in progress.",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttl": 60000,
        "pollInterval": 5000,
    }
    task.update(extra)
    return task


ELICIT = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Please enter your name.",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}


def note(method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})


# -- capability negotiation ---------------------------------------------------------


def test_tasks_true_declares_the_extension_in_every_modern_request() -> None:
    proto = make(tasks=True, capabilities={"elicitation": {"form": {}}})
    out = proto.request("tools/call", {"name": "get_weather"}, "t")
    caps = out.params["_meta"][CAPS]
    assert caps == {"elicitation": {"form": {}}, "extensions": {TASKS_EXTENSION: {}}}
    # other extensions the caller declared are kept beside it
    proto = make(tasks=True, capabilities={"extensions": {"x.example/other": {"a": 1}}})
    caps = proto.request("tools/list", None, "t").params["_meta"][CAPS]
    assert caps == {"extensions": {"x.example/other": {"a": 1}, TASKS_EXTENSION: {}}}


def test_without_tasks_nothing_is_declared() -> None:
    proto = make()
    assert proto.request("tools/call", {"name": "x"}, "t").params["_meta"][CAPS] == {}


def test_legacy_initialize_does_not_carry_the_extension() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="legacy", tasks=True, client_info={"name": "t", "version": "1"})
    step = proto.start()
    assert type(step) is Initialize
    assert proto.initialize_params(step)["capabilities"] == {}


# -- polymorphic results --------------------------------------------------------------


def test_a_create_task_result_is_recognised_for_tools_call() -> None:
    proto = make(tasks=True)
    task = proto.task_created("tools/call", {"resultType": "task", **modern_task()})
    assert task == TaskState(TID, "working", "2025-11-25T10:30:00Z", "2025-11-25T10:50:00Z", 3600000, 5000)
    assert not task.terminal
    assert proto.task_created("tools/call", {"resultType": "complete", "content": []}) is None
    assert proto.task_created("tools/call", {"content": []}) is None


def test_a_task_to_a_client_that_did_not_declare_the_extension_is_a_violation() -> None:
    proto = make()
    with pytest.raises(ProtocolViolation, match="did not declare io.modelcontextprotocol/tasks"):
        proto.task_created("tools/call", {"resultType": "task", **modern_task()})


def test_a_task_for_an_unsupported_request_is_an_invalid_response() -> None:
    proto = make(tasks=True)
    with pytest.raises(ProtocolViolation, match="only tools/call may"):
        proto.task_created("prompts/get", {"resultType": "task", **modern_task()})


@pytest.mark.parametrize(
    "change, message",
    [
        ({"taskId": ""}, "taskId must be a non-empty string"),
        ({"taskId": 7}, "taskId must be a non-empty string"),
        ({"status": "running"}, "status 'running' is not one of"),
        ({"createdAt": None}, "createdAt and lastUpdatedAt"),
        ({"ttlMs": 1.5}, "ttlMs must be a non-negative integer or null"),
        ({"pollIntervalMs": 0}, "pollIntervalMs must be a positive integer"),
        ({"statusMessage": 3}, "statusMessage must be a string"),
        ({"status": "completed"}, "a completed task must carry result"),
        ({"status": "failed", "error": {"message": "no code"}}, "a failed task must carry error"),
        ({"status": "input_required"}, "an input_required task must carry inputRequests"),
        ({"status": "input_required", "inputRequests": {"a": {"params": {}}}}, r"inputRequests\['a'\] is not a request object"),
    ],
)
def test_malformed_tasks_are_refused_with_the_reason(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ProtocolViolation, match=message):
        parse_task(modern_task(**change), legacy=False)


def test_ttl_may_be_null_and_poll_interval_absent() -> None:
    raw = modern_task(ttlMs=None)
    del raw["pollIntervalMs"]
    task = parse_task(raw, legacy=False)
    assert task.ttl_ms is None and task.poll_interval_ms is None


def test_the_detailed_task_inlines_result_error_and_input_requests() -> None:
    done = parse_task(modern_task("completed", result={"content": [], "isError": True}), legacy=False)
    assert done.result == {"content": [], "isError": True} and done.terminal
    failed = parse_task(modern_task("failed", error={"code": -32603, "message": "API rate limit exceeded"}), legacy=False)
    assert failed.error == {"code": -32603, "message": "API rate limit exceeded"}
    asking = parse_task(modern_task("input_required", inputRequests={"name": ELICIT}), legacy=False)
    assert asking.input_requests == {"name": ELICIT}


def test_legacy_create_task_result_only_for_an_augmented_request() -> None:
    proto = make("legacy", tasks=True)
    result = {"task": legacy_task()}
    task = proto.task_created("tools/call", result, augmented=True)
    assert task is not None
    assert (task.id, task.ttl_ms, task.poll_interval_ms, task.status_message) == (TID, 60000, 5000, "The operation is now in progress.")
    # not augmented: an ordinary result whatever it holds
    assert proto.task_created("tools/call", result, augmented=False) is None
    # augmented, but the server ran it as an ordinary request
    assert proto.task_created("tools/call", {"content": []}, augmented=True) is None
    with pytest.raises(ProtocolViolation, match="ttl must be"):
        created_task("tools/call", {"task": legacy_task(ttl="1m")}, legacy=True, declared=False, augmented=True)


def test_tool_level_negotiation() -> None:
    caps = {"tasks": {"requests": {"tools": {"call": {}}}}}
    assert legacy_task_support(caps, {"name": "a", "execution": {"taskSupport": "required"}}) == "required"
    assert legacy_task_support(caps, {"name": "a", "execution": {"taskSupport": "optional"}}) == "optional"
    assert legacy_task_support(caps, {"name": "a", "execution": {"taskSupport": "forbidden"}}) == "forbidden"
    assert legacy_task_support(caps, {"name": "a"}) == "forbidden"
    assert legacy_task_support(caps, None) == "forbidden"
    # without tasks.requests.tools.call, never, whatever the tool says
    assert legacy_task_support({"tasks": {"list": {}}}, {"execution": {"taskSupport": "required"}}) == "forbidden"
    assert legacy_task_support({}, {"execution": {"taskSupport": "required"}}) == "forbidden"


def test_augment_adds_params_task() -> None:
    assert augment({"name": "a", "arguments": {}}, 60000) == {"name": "a", "arguments": {}, "task": {"ttl": 60000}}
    assert augment({"name": "a"}, None) == {"name": "a", "task": {}}


# -- routing headers ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_task_requests_carry_mcp_name_over_http(method: str) -> None:
    proto = make(tasks=True, mirrors_headers=True)
    out = proto.request(method, {"taskId": TID}, "t")
    assert out.headers is not None
    assert out.headers["Mcp-Name"] == TID
    assert out.headers["Mcp-Method"] == method


# -- following a task -------------------------------------------------------------------


def follower(legacy: bool = False, declared: frozenset[str] = frozenset({"elicitation"})) -> TaskFollower:
    return TaskFollower(TID, legacy=legacy, declared=declared)


def test_polling_follows_the_servers_interval_and_backs_off_while_nothing_changes() -> None:
    f = follower()
    assert f.next_step() == Wait(0.0)  # nothing seen yet: look now
    assert f.observe(parse_task(modern_task(pollIntervalMs=200), legacy=False))
    assert f.next_step() == Wait(0.2)
    assert not f.observe(parse_task(modern_task(pollIntervalMs=200), legacy=False))
    assert f.next_step() == Wait(pytest.approx(0.2 * BACKOFF))
    for _ in range(20):
        f.observe(parse_task(modern_task(pollIntervalMs=200), legacy=False))
    assert f.next_step() == Wait(DEFAULT_MAX_POLL_INTERVAL)  # capped
    # a change resets the wait to the server's interval
    assert f.observe(parse_task(modern_task(pollIntervalMs=200, statusMessage="50%"), legacy=False))
    assert f.next_step() == Wait(0.2)


def test_a_longer_server_interval_is_never_shortened_or_exceeded() -> None:
    f = follower()
    f.observe(parse_task(modern_task(pollIntervalMs=30000), legacy=False))
    f.observe(parse_task(modern_task(pollIntervalMs=30000), legacy=False))
    assert f.next_step() == Wait(30.0)


def test_no_interval_from_the_server_means_the_default() -> None:
    raw = modern_task()
    del raw["pollIntervalMs"]
    f = follower()
    f.observe(parse_task(raw, legacy=False))
    assert f.next_step() == Wait(DEFAULT_POLL_INTERVAL)


def test_input_required_is_answered_once_per_key_through_tasks_update() -> None:
    f = follower()
    f.observe(parse_task(modern_task("input_required", inputRequests={"name": ELICIT}), legacy=False))
    step = f.next_step()
    assert type(step) is Answer
    (ask,) = step.requests
    assert (ask.key, ask.method, ask.kind, ask.params["message"]) == ("name", "elicitation/create", "elicitation", "Please enter your name.")
    params = f.update_params({"name": {"action": "accept", "content": {"name": "Luca"}}})
    assert params == {"taskId": TID, "inputResponses": {"name": {"action": "accept", "content": {"name": "Luca"}}}}
    # the same snapshot polled again before the server moved on: nothing new to answer (deduplicated)
    f.observe(parse_task(modern_task("input_required", inputRequests={"name": ELICIT}), legacy=False))
    assert type(f.next_step()) is Wait
    # a second question under a new key is asked, the answered one is not
    f.observe(parse_task(modern_task("input_required", inputRequests={"name": ELICIT, "age": ELICIT}, statusMessage="more"), legacy=False))
    step = f.next_step()
    assert type(step) is Answer and [r.key for r in step.requests] == ["age"]


def test_an_input_request_the_client_did_not_declare_is_refused_before_any_callback() -> None:
    f = follower(declared=frozenset())
    f.observe(parse_task(modern_task("input_required", inputRequests={"name": ELICIT}), legacy=False))
    with pytest.raises(ProtocolViolation, match="did not declare"):
        f.next_step()


@pytest.mark.parametrize(
    "raw",
    [
        modern_task("completed", result={"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": False}),
        modern_task("failed", error={"code": -32603, "message": "API rate limit exceeded"}),
        modern_task("cancelled"),
    ],
)
def test_a_terminal_status_finishes_and_stays(raw: dict[str, Any]) -> None:
    f = follower()
    task = parse_task(raw, legacy=False)
    assert f.observe(task)
    assert f.next_step() == Finished(task)
    # a late, out-of-order notification does not bring it back
    assert not f.observe(parse_task(modern_task("working"), legacy=False))
    assert f.next_step() == Finished(task)


def test_an_observation_of_another_task_is_a_violation() -> None:
    f = follower()
    with pytest.raises(ProtocolViolation, match="expected task"):
        f.observe(parse_task(modern_task(taskId="other"), legacy=False))


def test_legacy_fetches_the_result_when_input_is_required_or_the_task_ended() -> None:
    f = follower(legacy=True)
    f.observe(parse_task(legacy_task(), legacy=True))
    assert f.next_step() == Wait(5.0)
    f.observe(parse_task(legacy_task("input_required"), legacy=True))
    assert f.next_step() == Fetch()
    f.observe(parse_task(legacy_task("completed"), legacy=True))
    assert f.next_step() == Fetch()
    g = follower(legacy=True)
    cancelled = parse_task(legacy_task("cancelled"), legacy=True)
    g.observe(cancelled)
    assert g.next_step() == Finished(cancelled)
    with pytest.raises(ProtocolViolation, match="returned a task"):
        g.fetched({"task": legacy_task()})
    assert g.fetched({"content": [], "isError": False}) == {"content": [], "isError": False}


# -- status notifications ----------------------------------------------------------------


def test_a_modern_status_notification_on_a_subscription_reaches_followers_and_the_subscription() -> None:
    proto = make(tasks=True)
    out = proto.listen({"taskIds": [TID]}, "sub")
    ack = note("notifications/subscriptions/acknowledged", {"notifications": {"taskIds": [TID]}, "_meta": {SUB_ID: out.id}})
    (acked,) = proto.receive(ack)
    assert acked == events.Acknowledged("sub", {"taskIds": [TID]})
    params = {**modern_task("completed", result={"content": [], "isError": False}), "_meta": {SUB_ID: out.id}}
    update, delivered = proto.receive(note("notifications/tasks", params))
    assert type(update) is events.TaskUpdate
    assert update.task.status == "completed" and update.task.result == {"content": [], "isError": False}
    assert delivered == events.SubscriptionNote("sub", "notifications/tasks", params)


def test_a_legacy_status_notification_reaches_followers_and_on_notification() -> None:
    proto = make("legacy", tasks=True)
    update, notified = proto.receive(note("notifications/tasks/status", legacy_task("completed")))
    assert type(update) is events.TaskUpdate and update.task.status == "completed" and update.task.ttl_ms == 60000
    assert type(notified) is events.Notified and notified.notification.method == "notifications/tasks/status"


def test_a_malformed_status_notification_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    proto = make(tasks=True)
    assert proto.receive(note("notifications/tasks", {"taskId": TID, "status": "bogus"})) == []
    assert "ignored a malformed task status notification" in caplog.text


def test_follow_task_binds_the_era_and_the_declared_inputs() -> None:
    modern = make(tasks=True, answers=("elicitation",)).follow_task(TID)
    assert (modern.legacy, modern.declared) == (False, frozenset({"elicitation"}))
    assert make("legacy", tasks=True).follow_task(TID).legacy


# -- 2025-11-25: a task's progress goes to the call that made it (tasks.mdx, Task Progress Notifications) ----


def test_a_legacy_tasks_progress_token_outlives_the_call_until_the_task_ends() -> None:
    from wiremcp.client import CallOptions

    proto = make("legacy", tasks=True)
    out = proto.request("tools/call", {"name": "slow", "task": {}}, "call", CallOptions(on_progress=lambda *a: None))
    token = out.params["_meta"]["progressToken"]
    (settled,) = proto.receive(orjson.dumps({"jsonrpc": "2.0", "id": out.id, "result": {"task": legacy_task()}}))
    assert type(settled) is events.Settled
    progress = {"progressToken": token, "progress": 1, "total": 3, "message": "one"}
    (first,) = proto.receive(note("notifications/progress", progress))
    assert type(first) is events.Progress and (first.tag, first.progress, first.total, first.message) == ("call", 1, 3, "one")
    proto.task_ended(TID)
    assert proto.receive(note("notifications/progress", {**progress, "progress": 2})) == []


def test_a_terminal_status_notification_ends_a_legacy_tasks_progress() -> None:
    from wiremcp.client import CallOptions

    proto = make("legacy", tasks=True)
    out = proto.request("tools/call", {"name": "slow", "task": {}}, "call", CallOptions(on_progress=lambda *a: None))
    token = out.params["_meta"]["progressToken"]
    proto.receive(orjson.dumps({"jsonrpc": "2.0", "id": out.id, "result": {"task": legacy_task()}}))
    proto.receive(note("notifications/tasks/status", legacy_task("completed")))
    assert proto.receive(note("notifications/progress", {"progressToken": token, "progress": 3})) == []


def test_a_plain_legacy_result_keeps_no_progress_route() -> None:
    from wiremcp.client import CallOptions

    proto = make("legacy", tasks=True)
    out = proto.request("tools/call", {"name": "quick"}, "call", CallOptions(on_progress=lambda *a: None))
    proto.receive(orjson.dumps({"jsonrpc": "2.0", "id": out.id, "result": {"content": []}}))
    assert proto.receive(note("notifications/progress", {"progressToken": out.params["_meta"]["progressToken"], "progress": 1})) == []
