"""One look at the store per worker, for all its tasks: answers to wake on, tasks to stop.

Rules kept here:

* a task waiting for input (``input_required``) never reads the store on a
  timer of its own: a ``tasks/update`` reaching this process wakes it at
  once (`AnswerSweep.wake`), and one timer per worker (`AnswerSweep`), every
  `ANSWER_SWEEP_SECONDS` while any task waits, asks the store once which of
  this worker's tasks hold answers not yet taken (the store's ``answered``,
  one query whatever the number of waiting tasks) and wakes those, for
  answers given to another process sharing the store;
* a store without ``answered`` (a third party's, written before it) gets
  the old way, each waiting task reading it once per `ANSWER_SWEEP_SECONDS`;
* the heartbeat's check of the running tasks (`overdue`) is one query too
  (the store's ``live``): a task no longer live in the store (cancelled on
  another process, expired and swept) is stopped, one whose TTL elapsed is
  expired; only those are read one by one.

So the store queries per second of an idle server do not grow with the
number of tasks waiting (tests/server/tasks/test_tasks_limits.py counts them).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable

from ._store import TaskStore, TaskStoreError

__all__ = ["ANSWER_SWEEP_SECONDS", "AnswerSweep", "overdue"]

log = logging.getLogger("wiremcp.tasks")

#: Seconds between two looks for answers given to another worker (the longest such an answer waits).
ANSWER_SWEEP_SECONDS = 1.0


class AnswerSweep:
    """The waiting tasks of one worker, and the one timer that looks for their answers."""

    def __init__(self, ready: Callable[[], Awaitable[TaskStore]], worker: str, period: float = ANSWER_SWEEP_SECONDS) -> None:
        self._ready = ready
        self._worker = worker
        self._period = period
        self._events: dict[str, asyncio.Event] = {}
        self._waiting = 0
        self._timer: asyncio.Task[None] | None = None

    def wake(self, task_id: str) -> None:
        """Answers for ``task_id`` were stored by this process: its waiter looks now."""
        event = self._events.get(task_id)
        if event is not None:
            event.set()

    def forget(self, task_id: str) -> None:
        """The task ended here: nothing waits for it any more."""
        self._events.pop(task_id, None)

    async def wait(self, task_id: str) -> None:
        """Until answers for ``task_id`` may be in the store (woken by `wake` or the sweep)."""
        event = self._events.setdefault(task_id, asyncio.Event())
        store = await self._ready()
        if getattr(store, "answered", None) is None:  # an older store: this task looks by itself
            try:
                await asyncio.wait_for(event.wait(), self._period)
            except asyncio.TimeoutError:
                pass
            event.clear()
            return
        self._waiting += 1
        if self._timer is None or self._timer.done():
            self._timer = asyncio.ensure_future(self._sweep(store))
        try:
            await event.wait()
        finally:
            self._waiting -= 1
            event.clear()

    async def _sweep(self, store: TaskStore) -> None:
        answered = getattr(store, "answered")
        while self._waiting:
            await asyncio.sleep(self._period)
            try:
                ids: list[str] = await answered(self._worker)
            except TaskStoreError as exc:
                log.error("tasks: looking for answers in the task store failed: %s", exc)
                continue
            for task_id in ids:
                self.wake(task_id)

    async def aclose(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None and not timer.done():
            timer.cancel()
            await asyncio.gather(timer, return_exceptions=True)


async def overdue(store: TaskStore, worker: str, running: list[str], now: float) -> tuple[list[str], list[str]]:
    """Of ``running`` (this worker's tasks): those to stop (gone or terminal in the store), those expired.

    One query (the store's ``live``); a store without it is read task by task.
    """
    live = getattr(store, "live", None)
    stop: list[str] = []
    expired: list[str] = []
    if live is not None:
        states: dict[str, float | None] = await live(worker)
        for task_id in running:
            if task_id not in states:
                stop.append(task_id)
            else:
                end = states[task_id]
                if end is not None and now >= end:
                    expired.append(task_id)
        return stop, expired
    for task_id in running:
        record = await store.get(task_id)
        if record is None or record.terminal:
            stop.append(task_id)
        elif record.expired(now):
            expired.append(task_id)
    return stop, expired
