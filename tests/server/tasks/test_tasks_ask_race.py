"""Two questions of one task, asked concurrently, with an answer landing in between (extensions/tasks/tasks.md,
Task Update Requests: a key is outstanding until answered, and the task leaves ``input_required`` once
every outstanding key is answered).

The window: the worker reads the answers given so far, then parks the task with its questions; a
``tasks/update`` handled by another process in between used to be overwritten (the answered key shown
again in ``inputRequests``, the task stuck in ``input_required``). The stores' ``ask`` adds the new
questions to what is outstanding in the store, in one step (SQLite: one transaction).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import wiremcp
from wiremcp.server.tasks import MemoryTaskStore, SQLiteTaskStore

TASKS = "io.modelcontextprotocol/tasks"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}}


class AnswerLandsMidAsk(MemoryTaskStore):
    """A store where a ``tasks/update`` for ``a`` lands right after the worker took the answers given so far,
    as one handled by another server process sharing the store can."""

    def __init__(self) -> None:
        super().__init__()
        self.injected = False

    async def take_responses(self, task_id: str) -> dict[str, Any]:
        taken = await super().take_responses(task_id)
        current = await self.get(task_id)
        if not self.injected and current is not None and "a" in current.input_requests:
            self.injected = True
            await self.answer(task_id, {"a": {"action": "accept", "content": {"name": "Ada"}}}, now=current.updated_at)
        return taken


def test_an_answer_landing_between_two_asks_is_not_shown_again() -> None:
    store = AnswerLandsMidAsk()
    server = wiremcp.Server("race", task_store=store, task_poll_interval_ms=10)

    @server.tool(task="always")
    async def pair(ctx: wiremcp.Context) -> str:
        first, second = await asyncio.gather(ctx.elicit("A?", NAME, key="a"), ctx.elicit("B?", NAME, key="b"))
        return f"{first['content']['name']} & {second['content']['name']}"

    async def main() -> None:
        caps = {"elicitation": {}, "extensions": {TASKS: {}}}
        async with wiremcp.Client.memory(server, capabilities=caps) as client:
            task_id = (await client.request("tools/call", {"name": "pair", "arguments": {}}))["taskId"]
            while "b" not in (task := await client.request("tasks/get", {"taskId": task_id})).get("inputRequests", {}):
                await asyncio.sleep(0.01)
            assert store.injected
            assert list(task["inputRequests"]) == ["b"]  # "a" was answered meanwhile: not asked again
            await client.request("tasks/update", {"taskId": task_id, "inputResponses": {"b": {"action": "accept", "content": {"name": "Bo"}}}})
            while (task := await client.request("tasks/get", {"taskId": task_id}))["status"] not in ("completed", "failed"):
                assert task["status"] == "working" or list(task.get("inputRequests", {})) == []
                await asyncio.sleep(0.01)
            assert task["status"] == "completed" and task["result"]["content"][0]["text"] == "Ada & Bo"

    asyncio.run(asyncio.wait_for(main(), 30))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_shipped_stores_ask_in_one_step(kind: str, tmp_path: Path) -> None:
    """Memory and SQLite implement ``ask`` themselves (no get-then-set fallback); on SQLite, an answer
    written through another connection to the same file (another process) is seen by the ask."""
    from wiremcp.server.tasks import TaskRecord

    async def main() -> None:
        one: Any = MemoryTaskStore() if kind == "memory" else SQLiteTaskStore(tmp_path / "t.sqlite3")
        other: Any = one if kind == "memory" else SQLiteTaskStore(tmp_path / "t.sqlite3")
        try:
            assert callable(getattr(one, "ask", None))
            await one.create(TaskRecord(task_id="t", status="working", created_at=1.0, updated_at=1.0, ttl_ms=None))
            q = {"method": "elicitation/create", "params": {}}
            await one.ask("t", {"a": q}, now=2.0, message="waiting")
            await other.answer("t", {"a": {"action": "accept"}}, now=3.0)
            after = await one.ask("t", {"b": q}, now=4.0, message="waiting")
            assert list(after.input_requests) == ["b"] and after.input_responses == {"a": {"action": "accept"}}
        finally:
            await one.close()
            if other is not one:
                await other.close()

    asyncio.run(main())
