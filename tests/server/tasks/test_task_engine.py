"""The task engine and its two era adapters, driven with plain messages and no event loop.

`TaskEngine` (server/_tasks/_engine.py) awaits nothing but its store, and
`MemoryTaskStore` never suspends, so each coroutine here is run to its end by
`drive` (one ``send``), and the work of a task is started by a ``spawn`` of the
test's own (`Started`): the test decides when a task's body runs, when the
heartbeat ticks and what time it is. `Tasks` (the runtime) is given a
`TaskHost` of plain functions, so no server is involved either.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, Coroutine

import pytest

from wiremcp.jsonrpc import InternalError, InvalidParams, JSONRPCError, MethodNotFound, Request
from wiremcp.protocol.meta import RequestMeta
from wiremcp.server._reply import CallerBusy, ServerBusy
from wiremcp.server._tasks._engine import EXPIRED_GRACE_SECONDS, WORKER_GONE, TaskEngine
from wiremcp.server._tasks._host import TaskHost
from wiremcp.server._tasks._limits import TaskLimits
from wiremcp.server._tasks._memory import MemoryTaskStore
from wiremcp.server._tasks._runtime import Tasks
from wiremcp.server._tasks._store import TaskStoreError

TASKS = "io.modelcontextprotocol/tasks"
VERSION = "2026-07-28"


def drive(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to its end without an event loop (it must never suspend)."""
    with pytest.raises(RuntimeError):  # no event loop runs: nothing here may need one
        asyncio.get_running_loop()
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise AssertionError("the coroutine suspended: it would need an event loop")


class Started:
    """What the test's ``spawn`` returns: the work, not started until the test drives it."""

    def __init__(self, job: Coroutine[Any, Any, Any]) -> None:
        self.job = job
        self.cancelled = False
        self.finished = False

    def cancel(self) -> bool:
        self.cancelled = True
        return True

    def done(self) -> bool:
        return self.finished

    def run(self) -> Any:
        self.finished = True
        return drive(self.job)

    def step(self) -> None:
        """Start the work, up to its first pause (`Pause`)."""
        assert self.job.send(None) is None

    def throw_cancel(self) -> None:
        """The work, paused, is cancelled where it waits (as ``asyncio`` would do it)."""
        self.finished = True
        try:
            self.job.throw(asyncio.CancelledError())
        except (StopIteration, asyncio.CancelledError):
            pass


class World:
    """A clock, a store, an engine and the work it started."""

    def __init__(self, store: Any = None, **limits: int) -> None:
        self.now = 1_000.0
        self.started: list[Started] = []
        self.store = store if store is not None else MemoryTaskStore()

        async def ready() -> Any:
            return self.store

        self.engine = TaskEngine(ready, TaskLimits.of(limits.get("max_tasks"), limits.get("per_owner"), None),
                                 spawn=self.spawn, clock=lambda: self.now)

    def spawn(self, job: Coroutine[Any, Any, Any]) -> Started:
        started = Started(job)
        self.started.append(started)
        return started

    def work(self, task_id: str) -> Started:
        return next(s for s in self.started if s.job.cr_code.co_name == "_work" and s.job.cr_frame.f_locals["task_id"] == task_id)

    def close(self) -> None:
        for started in self.started:
            if not started.finished:
                started.job.close()

    def create(self, *, owner: str | None = None, ttl_ms: int | None = 60_000, era: Any = "modern") -> Any:
        return drive(self.engine.create(name="report", era=era, owner=owner, scopes=[], ttl_ms=ttl_ms, poll_interval_ms=500))


class Pause:
    """An await that suspends once (what waiting on the client looks like to the driver)."""

    def __await__(self) -> Any:
        yield


class Idle:
    """A channel whose body never waits for answers."""

    waiting = False


@pytest.fixture
def world() -> Any:
    w = World()
    yield w
    w.close()


# -- the engine -------------------------------------------------------------------------


def test_create_is_durable_before_it_returns(world: World) -> None:
    record = world.create(owner="alice")
    stored = drive(world.store.get(record.task_id))
    assert stored is not None and stored.status == "working" and stored.owner == "alice"
    assert stored.worker == world.engine.worker_id and stored.lease_until == world.now + 30.0
    assert world.started == []  # nothing runs before `run`


def test_a_result_completes_the_task(world: World) -> None:
    record = world.create()
    world.engine.run(record, lambda: {"content": [{"type": "text", "text": "done"}]}, Idle())
    assert world.engine.running == [record.task_id]
    world.work(record.task_id).run()
    after = drive(world.store.get(record.task_id))
    assert after.status == "completed" and after.result["content"][0]["text"] == "done"
    assert world.engine.running == []


def test_an_awaited_result_completes_the_task(world: World) -> None:
    record = world.create()

    async def body() -> dict[str, Any]:
        return {"content": [], "isError": True}

    world.engine.run(record, body, Idle())
    world.work(record.task_id).run()
    assert drive(world.store.get(record.task_id)).status == "completed"  # isError included


def test_a_jsonrpc_error_fails_the_task_with_that_error(world: World) -> None:
    record = world.create()

    def body() -> dict[str, Any]:
        raise InvalidParams("Invalid params: no such quarter", {"quarter": "Q5"})

    world.engine.run(record, body, Idle())
    world.work(record.task_id).run()
    after = drive(world.store.get(record.task_id))
    assert after.status == "failed"
    assert after.error == {"code": -32602, "message": "Invalid params: no such quarter", "data": {"quarter": "Q5"}}
    assert after.status_message == "Tool execution failed: Invalid params: no such quarter"


def test_any_other_exception_fails_the_task_with_internal_error(world: World) -> None:
    record = world.create()

    def body() -> dict[str, Any]:
        raise RuntimeError("a bug")

    world.engine.run(record, body, Idle())
    world.work(record.task_id).run()
    after = drive(world.store.get(record.task_id))
    assert after.status == "failed" and after.error == {"code": -32603, "message": "Internal error"}
    assert after.status_message == "Internal error: RuntimeError"


def test_the_store_failing_under_the_body_fails_the_task(world: World) -> None:
    record = world.create()

    async def body() -> dict[str, Any]:
        raise TaskStoreError("disk full")

    world.engine.run(record, body, Idle())
    world.work(record.task_id).run()
    after = drive(world.store.get(record.task_id))
    assert after.status == "failed"
    assert after.error == {"code": -32603, "message": "The task store failed while the task ran: disk full"}


def test_the_caps_refuse_with_the_busy_errors() -> None:
    w = World(max_tasks=2, per_owner=1)
    try:
        w.create(owner="alice")
        with pytest.raises(CallerBusy) as mine:
            w.create(owner="alice")
        assert mine.value.code == -32000 and "Too many tasks" in mine.value.message
        w.create(owner="bob")
        with pytest.raises(ServerBusy) as full:
            w.create(owner="carol")
        assert not isinstance(full.value, CallerBusy) and "Server busy" in full.value.message
    finally:
        w.close()


def test_a_failing_store_refuses_the_task_naming_its_problem() -> None:
    class Broken(MemoryTaskStore):
        async def create_capped(self, record: Any, *, per_owner: Any, total: int, now: float) -> None:
            raise TaskStoreError("redis is down")

    w = World(Broken())
    try:
        with pytest.raises(InternalError) as refused:
            w.create()
        assert refused.value.message == "Internal error: the task could not be created: redis is down"
        assert len(w.store) == 0
    finally:
        w.close()


def test_lookup_says_unknown_foreign_and_expired(world: World) -> None:
    record = world.create(owner="alice", ttl_ms=1_000)
    world.engine.run(record, lambda: {"content": []}, Idle())
    with pytest.raises(InvalidParams) as unknown:
        drive(world.engine.lookup("nobody", "alice"))
    assert unknown.value.data["reason"] == "unknown"
    with pytest.raises(InvalidParams) as foreign:
        drive(world.engine.lookup(record.task_id, "bob"))
    assert foreign.value.data["reason"] == "foreign"
    world.now += 0.999
    assert drive(world.engine.lookup(record.task_id, "alice")).status == "working"  # never early
    world.now += 0.001
    with pytest.raises(InvalidParams) as expired:
        drive(world.engine.lookup(record.task_id, "alice"))
    assert expired.value.data["reason"] == "expired"
    with pytest.raises(InvalidParams, match="needs 'taskId'"):
        drive(world.engine.find({"taskId": 7}, "tasks/get", "alice"))


def test_a_task_whose_worker_is_gone_is_failed_at_the_next_look(world: World) -> None:
    record = world.create()  # made here, never run here: this worker does not run it, so its worker is gone
    looked = drive(world.engine.lookup(record.task_id, None))
    assert looked.status == "failed" and looked.error == {"code": -32603, "message": WORKER_GONE}


def test_another_workers_lapsed_lease_fails_the_task(world: World) -> None:
    record = world.create()
    drive(world.store.renew(world.engine.worker_id, world.now + 30.0))
    stored = world.store._tasks[record.task_id]  # as another host's worker, whose lease lapsed
    stored.worker, stored.lease_until = "elsewhere:1:abcd", world.now - 1
    assert drive(world.engine.lookup(record.task_id, None)).status == "failed"


def test_cancel_wins_once_and_stops_the_work(world: World) -> None:
    record = world.create()

    async def slow() -> dict[str, Any]:
        await Pause()
        return {"content": []}

    world.engine.run(record, slow, Idle())
    work = world.work(record.task_id)
    work.step()  # the body runs, and waits
    finished = drive(world.engine.cancel(record))
    assert finished.status == "cancelled" and work.cancelled
    work.throw_cancel()  # the work ends cancelled: the client's cancel, nothing more is recorded
    assert drive(world.store.get(record.task_id)).status == "cancelled"
    assert world.engine.running == []


def test_the_heartbeat_renews_leases_and_expires_overdue_tasks(world: World) -> None:
    record = world.create(ttl_ms=5_000)
    world.engine.run(record, lambda: {"content": []}, Idle())
    world.now += 4
    drive(world.engine.tick())
    assert world.store._tasks[record.task_id].lease_until == world.now + 30.0
    world.now += 1
    drive(world.engine.tick())
    after = drive(world.store.get(record.task_id))
    assert after.status == "failed" and after.error["code"] == -32603 and "TTL of 5000 ms" in after.error["message"]
    assert world.work(record.task_id).cancelled


def test_the_sweep_forgets_tasks_expired_past_the_grace(world: World) -> None:
    record = world.create(ttl_ms=1_000)
    drive(world.engine.sweep(world.now + 1 + EXPIRED_GRACE_SECONDS - 1))
    assert drive(world.store.get(record.task_id)) is not None  # still "expired", not "not found"
    drive(world.engine.sweep(world.now + 1 + EXPIRED_GRACE_SECONDS))
    assert drive(world.store.get(record.task_id)) is None


def test_progress_becomes_the_status_message_in_order(world: World) -> None:
    record = world.create()
    world.engine.run(record, lambda: {"content": []}, Idle())
    seen: list[str] = []
    world.engine.watch(lambda r: seen.append(r.status_message or ""))
    emit = world.engine.progress(record.task_id)
    emit("notifications/progress", {"progress": 1, "total": 4})
    emit("notifications/progress", {"progress": 2, "message": "half way"})
    emit("notifications/message", {"level": "info", "data": "no log for a task"})
    drain = world.started[-1]
    drain.run()
    assert seen == ["1/4", "half way"]


# -- the runtime and its two adapters ----------------------------------------------------


class Tool:
    """What the runtime reads of a tool."""

    def __init__(self, task: Any = "auto", outcome: Any = None) -> None:
        self.name = "report"
        self.task = task
        self.inputs = ()
        self.scopes = ()
        self.outcome = outcome

    def prepare(self, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        if "quarter" not in arguments:
            return None, {"content": [{"type": "text", "text": "quarter is required"}], "isError": True}
        return arguments, None


class Session:
    """A legacy session: answers questions at once, records notifications."""

    id = "session-1"

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        self.asked.append(requests)
        return {key: {"action": "accept", "content": {"publish": True}} for key in requests}

    def close_sse_stream(self, request_id: Any, retry_ms: int | None = None) -> bool:
        return False

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.sent.append((method, params))


def runtime(world: World) -> Tasks:
    """`Tasks` with plain functions for the server's side; its engine is the world's."""

    def run(tool: Any, arguments: dict[str, Any], ctx: Any) -> Any:
        return tool.outcome(arguments, ctx)

    host = TaskHost(
        decorate=lambda result: {**result, "_meta": {"server": "decorated", **(result.get("_meta") or {})}},
        negotiated=lambda meta, identifier: TASKS in meta.client_capabilities.get("extensions", {}),
        context=lambda id, method, meta, emit: SimpleNamespace(request_id=id, method=method, meta=meta, emit=emit),
        run=run,
    )
    tasks = Tasks(host, world.store, spawn=world.spawn, clock=lambda: world.now)
    world.engine = tasks.engine
    return tasks


def modern_meta(extension: bool = True) -> RequestMeta:
    return RequestMeta(VERSION, {"extensions": {TASKS: {}}} if extension else {})


def legacy_meta(session: Session, token: Any = None) -> RequestMeta:
    meta = RequestMeta("2025-11-25", {"elicitation": {}}, None, None, token, {}, "legacy")
    meta.session = session
    return meta


def call(tasks: Tasks, tool: Tool, meta: RequestMeta, **params: Any) -> Any:
    request = Request(1, "tools/call", {"name": tool.name, "arguments": {"quarter": "Q3"}, **params})
    routed = tasks.route(tool, {"quarter": "Q3"}, request, dict(request.params or {}), meta, None)
    return routed if routed is None else drive(routed)  # type: ignore[arg-type]


def test_the_modern_adapter_answers_a_flat_create_task_result_then_the_detailed_task(world: World) -> None:
    tasks = runtime(world)
    created = call(tasks, Tool(outcome=lambda arguments, ctx: {"content": [{"type": "text", "text": arguments["quarter"]}]}), modern_meta())
    assert created["resultType"] == "task" and created["status"] == "working" and created["ttlMs"] == 3_600_000
    assert created["_meta"] == {"server": "decorated"}  # the server's decoration, injected
    world.work(created["taskId"]).run()
    got = drive(tasks.get(Request(2, "tasks/get"), {"taskId": created["taskId"]}, modern_meta(), None))
    assert got["resultType"] == "complete" and got["status"] == "completed"
    assert got["result"] == {"content": [{"type": "text", "text": "Q3"}]}


def test_the_modern_adapter_decides_per_request(world: World) -> None:
    tasks = runtime(world)
    assert call(tasks, Tool("auto"), modern_meta(extension=False)) is None  # a plain result
    assert call(tasks, Tool(lambda arguments: False), modern_meta()) is None
    with pytest.raises(JSONRPCError) as missing:
        call(tasks, Tool("always"), modern_meta(extension=False))
    assert missing.value.code == -32021
    with pytest.raises(JSONRPCError) as get_without:
        drive(tasks.get(Request(2, "tasks/get"), {"taskId": "x"}, modern_meta(extension=False), None))
    assert get_without.value.code == -32021


def test_arguments_that_do_not_fit_are_the_tool_error_and_no_task(world: World) -> None:
    tasks = runtime(world)
    request = Request(1, "tools/call", {"name": "report", "arguments": {}})
    routed = tasks.route(Tool(), {}, request, {}, modern_meta(), None)
    assert routed is not None
    answer = drive(routed)  # type: ignore[arg-type]
    assert answer["isError"] is True and len(world.store) == 0


def test_the_legacy_adapter_follows_params_task(world: World) -> None:
    tasks = runtime(world)
    session = Session()
    assert call(tasks, Tool("auto"), legacy_meta(session)) is None
    with pytest.raises(MethodNotFound):
        call(tasks, Tool("always"), legacy_meta(session))
    with pytest.raises(InvalidParams, match="task.ttl"):
        call(tasks, Tool("auto"), legacy_meta(session), task={"ttl": -1})
    created = call(tasks, Tool("auto", outcome=lambda a, ctx: {"content": []}), legacy_meta(session), task={"ttl": 10 ** 12})
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 86_400_000  # clamped to the cap, and said
    assert drive(world.store.get(task["taskId"])).owner == "session:session-1"


def test_a_legacy_tasks_questions_go_to_its_session_through_its_own_channel(world: World) -> None:
    tasks = runtime(world)
    session = Session()
    seen: list[RequestMeta] = []

    async def publish(arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
        seen.append(ctx.meta)
        answers = await ctx.meta.questions.ask({"q": {"method": "elicitation/create", "params": {"message": "Publish?"}}})
        return {"content": [{"type": "text", "text": str(answers["q"]["content"]["publish"])}]}

    task_id = call(tasks, Tool("auto", outcome=publish), legacy_meta(session), task={})["task"]["taskId"]
    world.work(task_id).run()
    [meta] = seen
    assert meta.session is None and meta.era == "legacy"  # no stand-in in place of a session
    [asked] = session.asked
    assert asked["q"]["params"]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": task_id}}
    statuses = [params["status"] for method, params in session.sent if method == "notifications/tasks/status"]
    assert statuses == ["input_required", "working", "completed"]
    result = drive(tasks.result(Request(3, "tasks/result"), {"taskId": task_id}, legacy_meta(session), None))
    assert result["content"][0]["text"] == "True"
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}


def test_cancel_answers_each_era_its_own_way(world: World) -> None:
    tasks = runtime(world)
    session = Session()
    modern_id = call(tasks, Tool(outcome=lambda a, ctx: {"content": []}), modern_meta())["taskId"]
    legacy_id = call(tasks, Tool(outcome=lambda a, ctx: {"content": []}), legacy_meta(session), task={})["task"]["taskId"]
    ack = drive(tasks.cancel(Request(4, "tasks/cancel"), {"taskId": modern_id}, modern_meta(), None))
    assert ack == {"resultType": "complete", "_meta": {"server": "decorated"}}
    again = drive(tasks.cancel(Request(5, "tasks/cancel"), {"taskId": modern_id}, modern_meta(), None))
    assert again["resultType"] == "complete"  # a finished task: the same ack
    legacy = drive(tasks.cancel(Request(6, "tasks/cancel"), {"taskId": legacy_id}, legacy_meta(session), None))
    assert legacy["status"] == "cancelled"
    with pytest.raises(InvalidParams, match="terminal status 'cancelled'"):
        drive(tasks.cancel(Request(7, "tasks/cancel"), {"taskId": legacy_id}, legacy_meta(session), None))


def test_the_task_meta_carries_a_channel_not_a_session() -> None:
    channel = Session()
    meta = legacy_meta(Session(), token=5).for_task("t-1", channel)
    assert meta.session is None and meta.questions is channel
    assert meta.era == "legacy" and meta.progress_token == "t-1" and meta.log_level is None
    plain = modern_meta()
    assert plain.era == "modern" and plain.questions is None
    legacy = legacy_meta(channel)
    assert legacy.questions is channel  # a legacy request's questions go to its session
