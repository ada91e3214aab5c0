"""A task's channel for questions to the client: where ``ctx.elicit`` / ``ctx.ask`` go while the tool runs as a task.

The task's body sees it as its request's ``questions`` (`RequestMeta.for_task`),
never in place of a session.

Rules kept here (see `_runtime` for the rest of the task's life):

* 2026-07-28 (`TaskInputs`): questions park the task in ``input_required``
  with them in ``inputRequests`` (keys unique over the task's life: a key
  asked again gets ``-2``, ``-3``...); only the new keys go to the store,
  added to what is outstanding there in one step (the store's ``ask``), so
  a key answered meanwhile on another process is never shown again; the
  task then sleeps until answers may be there (`_sweep.AnswerSweep`: woken
  by a ``tasks/update`` on this process, or by the worker's one look per
  second at the store), never reading the store on a timer of its own;
* 2025-11-25 (`LegacyTaskInputs`): the questions are real requests on the
  task's session, tagged with ``related-task``; the task is
  ``input_required`` while they are out, ``working`` again after.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ...protocol.meta import ClientQuestions
from ._store import TaskStore, add_input_requests
from ._wire import RELATED_TASK

if TYPE_CHECKING:
    from ._engine import TaskEngine

__all__ = ["TaskInputs", "LegacyTaskInputs"]


class TaskInputs:
    """A 2026-07-28 task's questions: ``ctx.ask`` parks the task until ``tasks/update`` answers."""

    def __init__(self, tasks: TaskEngine, task_id: str) -> None:
        self.tasks = tasks
        self.task_id = task_id
        self._used: set[str] = set()
        self._outstanding: dict[str, Any] = {}
        self._answers: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._asking = 0

    @property
    def waiting(self) -> bool:
        return self._asking > 0

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        self._asking += 1
        try:
            return await self._ask(requests)
        finally:
            self._asking -= 1

    async def _ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        wire: dict[str, str] = {}
        for key in requests:
            unique, n = key, 1
            while unique in self._used:  # tasks.md: a key is never reused over a task's life
                n += 1
                unique = f"{key}-{n}"
            self._used.add(unique)
            wire[unique] = key
        store = await self.tasks.ready()
        asked = {unique: requests[key] for unique, key in wire.items()}
        async with self._lock:
            await self._absorb(store)
            self._outstanding.update(asked)
            # Only the new keys go to the store, added to what is outstanding there in one step:
            # a key answered meanwhile (tasks/update on another process) is never shown again.
            record = await add_input_requests(
                store, self.task_id, asked, now=time.time(), message="Waiting for input from the client"
            )
        if record is not None:
            self.tasks.publish(record)
        while not all(unique in self._answers for unique in wire):
            await self.tasks.answers.wait(self.task_id)
            async with self._lock:
                await self._absorb(store)
        return {key: self._answers.pop(unique) for unique, key in wire.items()}

    async def _absorb(self, store: TaskStore) -> None:
        taken = await store.take_responses(self.task_id)
        for key, value in taken.items():
            if key in self._outstanding:
                del self._outstanding[key]
                self._answers[key] = value
        if taken:
            record = await store.get(self.task_id)
            if record is not None:
                self.tasks.publish(record)


class LegacyTaskInputs:
    """A 2025-11-25 task's questions: real requests on its session, the task ``input_required`` meanwhile."""

    def __init__(self, tasks: TaskEngine, task_id: str, session: ClientQuestions) -> None:
        self.tasks = tasks
        self.task_id = task_id
        self.session = session
        self.waiting = False

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        self.waiting = True
        related = {RELATED_TASK: {"taskId": self.task_id}}
        tagged = {}
        for key, request in requests.items():
            params = dict(request.get("params") or {})
            params["_meta"] = {**(params.get("_meta") or {}), **related}
            tagged[key] = {"method": request["method"], "params": params}
        try:
            await self.tasks.set_status(self.task_id, "input_required", "Waiting for input from the client", requests)
            answers: dict[str, Any] = await self.session.ask(tagged)
        finally:
            self.waiting = False
        await self.tasks.set_status(self.task_id, "working", None, {})
        return answers
