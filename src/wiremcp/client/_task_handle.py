"""`TaskHandle`: one server-side task as the asyncio `Client` follows it, on either wire.

What to do next is `_tasks.TaskFollower`'s decision; this module does the
waiting and the requests. Rules it keeps:

* ``await handle.result()`` follows the task to its end and returns the
  request's result (`CallToolResult` for ``tools/call``); a ``failed`` task
  raises `RemoteError` with the task's JSON-RPC error, a ``cancelled`` one
  `TaskCancelled`. ``async for state in handle.watch()`` yields each new
  `TaskState` on the way. Both answer the task's input requests with the
  client's ``elicitation``/``sampling``/``roots`` callbacks: modern, each
  key once through ``tasks/update``; legacy, as the server's own requests
  while ``tasks/result`` is open.
* Between polls it waits the follower's interval, and wakes early when a
  status notification for the task arrives (which then counts as the
  observation: no poll is sent for it). With ``listen=True`` (modern) it
  opens ``subscriptions/listen`` with ``taskIds``; while the server's
  acknowledgment lists the task it polls only every `LISTEN_SAFETY_POLL`
  seconds (a subscription may end without a word), and it goes back to
  polling when the subscription ends or cannot be opened. A 2025-11-25 server's
  notifications are never relied on (tasks.mdx): polling goes on.
* Legacy: when the task needs input or ends, ``tasks/result`` is sent (with
  no timeout: it blocks until the task ends) and ``tasks/get`` polling goes
  on beside it, so status changes are still seen.
* ``refresh()`` is one ``tasks/get`` (no input answered); ``cancel()`` one
  ``tasks/cancel``. Cancellation is cooperative: after it the task may still
  complete, and `result` reports whichever end the server reached.
* ``client.task(id)`` makes a handle from an id alone, e.g. one stored
  before a restart (tasks.md: clients SHOULD persist task ids).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, AsyncIterator, Unpack

from ..protocol import Era, methods
from ._errors import ClientError, ProtocolViolation, RemoteError
from ._mrtr import check_complete
from ._options import CallKeywords, CallOptions
from ._results import CallToolResult
from ._tasks import (
    TASKS_CANCEL,
    TASKS_GET,
    TASKS_RESULT,
    TASKS_UPDATE,
    Answer,
    Fetch,
    Finished,
    TaskCancelled,
    TaskState,
    parse_task,
)

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["TaskHandle", "LISTEN_SAFETY_POLL"]

log = logging.getLogger("wiremcp.client")

#: Seconds between polls while a subscription delivers the task's notifications:
#: a safety net for a subscription that ends without a word.
LISTEN_SAFETY_POLL = 30.0


class TaskHandle:
    """A task the server runs for this client: ``id``, the latest ``state``, and the calls to follow it.

        handle = await client.call_tool("report", {"year": 2026}, task=True)
        if isinstance(handle, wiremcp.TaskHandle):
            async for state in handle.watch():
                print(state.status, state.status_message)
            result = await handle.result()
    """

    def __init__(self, client: Client, task_id: str, state: TaskState | None = None, method: str = methods.TOOLS_CALL) -> None:
        self.client = client
        self.id = task_id
        #: The request the task stands for (its result's shape).
        self.method = method
        #: The latest observation, ``None`` until the first (`refresh`).
        self.state = state
        self._outcome: dict[str, Any] | BaseException | None = None
        self._note = asyncio.Event()
        self._noted: TaskState | None = None

    def __repr__(self) -> str:
        return f"<TaskHandle {self.id} {self.status or 'unknown'}>"

    @property
    def status(self) -> str | None:
        """The status last seen (``working``, ``input_required``, ``completed``, ``failed``, ``cancelled``)."""
        return self.state.status if self.state is not None else None

    @property
    def status_message(self) -> str | None:
        return self.state.status_message if self.state is not None else None

    @property
    def _legacy(self) -> bool:
        return self.client.era is Era.LEGACY

    # -- one request each --------------------------------------------------------

    async def refresh(self, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]) -> TaskState:
        """``tasks/get``: the task as the server sees it now."""
        opts = CallOptions.build(options, keywords)
        raw = await self.client._request(TASKS_GET, {"taskId": self.id}, opts)
        legacy = self._legacy
        if not legacy:
            check_complete(TASKS_GET, raw)
        state = parse_task(raw, legacy=legacy, where=TASKS_GET)
        if state.id != self.id:
            raise ProtocolViolation(f"tasks/get for {self.id} described task {state.id}")
        self.state = state
        return state

    async def cancel(self, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]) -> None:
        """``tasks/cancel``: ask the server to stop. It may finish the task anyway (cancellation is cooperative)."""
        opts = CallOptions.build(options, keywords)
        raw = await self.client._request(TASKS_CANCEL, {"taskId": self.id}, opts)
        if self._legacy:
            # 2025-11-25: the reply is the task, already cancelled (tasks.mdx, "Cancelling Tasks").
            self.state = parse_task(raw, legacy=True, where=TASKS_CANCEL)
        else:
            check_complete(TASKS_CANCEL, raw)

    # -- following it to the end -------------------------------------------------

    def _notified(self, state: TaskState) -> None:
        """A status notification for this task (called by the `Client`)."""
        self._noted = state
        self._note.set()

    async def _pause(self, seconds: float | None, fetch: asyncio.Future[dict[str, Any]] | None) -> TaskState | None:
        """Wait ``seconds`` (``None``: until told), a notification, or the end of ``fetch``; the noted state, if any."""
        if self._noted is None:
            self._note.clear()
            waiter = asyncio.ensure_future(self._note.wait())
            waiting: set[asyncio.Future[Any]] = {waiter}
            if fetch is not None:
                waiting.add(fetch)
            try:
                await asyncio.wait(waiting, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        noted, self._noted = self._noted, None
        return noted

    async def watch(self, *, listen: bool = False, options: CallOptions | None = None) -> AsyncIterator[TaskState]:
        """Each new state of the task up to its terminal one, answering its input requests on the way.

        ``listen``: (modern) open a ``subscriptions/listen`` for this task and
        wait for its notifications instead of polling, while the server agrees.
        """
        client = self.client
        opts = options if options is not None else CallOptions()
        follower = client._proto.follow_task(self.id)
        client._follow(self)
        subscription = None
        fetch: asyncio.Future[dict[str, Any]] | None = None
        try:
            state = self.state if self.state is not None else await self.refresh(opts)
            if follower.observe(state):
                yield state
            subscribed = False
            if listen and not self._legacy and not state.terminal:
                subscription = client.listen(tasks=[self.id])
                try:
                    await subscription.open()
                except ClientError as exc:  # the server would not listen: poll instead
                    log.info("task %s: subscriptions/listen failed (%s); polling", self.id, exc)
                    subscription = None
                else:
                    agreed = (subscription.acknowledged or {}).get("taskIds")
                    subscribed = type(agreed) is list and self.id in agreed
            while True:
                step = follower.next_step()
                if type(step) is Finished:
                    client._proto.task_ended(self.id)  # its progress (2025-11-25) has ended with it
                    self.state = step.task
                    if self._outcome is None:
                        self._outcome = self._end_of(step.task)
                    return
                if type(step) is Answer:
                    responses = {}
                    for ask in step.requests:
                        responses[ask.key] = await client._answer_input(ask.kind, ask.params)
                    check_complete(TASKS_UPDATE, await client._request(TASKS_UPDATE, follower.update_params(responses), opts))
                    continue
                if type(step) is Fetch and fetch is None:
                    # Blocks until the task ends; the server sends its input requests meanwhile.
                    fetch = asyncio.ensure_future(
                        client._request(TASKS_RESULT, {"taskId": self.id}, CallOptions(timeout=None, meta=opts.meta))
                    )
                if fetch is not None and fetch.done():
                    try:
                        self._outcome = follower.fetched(fetch.result())
                    except RemoteError as exc:
                        self._outcome = exc
                    fetch = None
                    # The result came, so the task has ended: one last look at its status.
                    state = await self.refresh(opts)
                    if follower.observe(state):
                        yield state
                    return
                live = subscribed and subscription is not None and not subscription.closed
                noted = await self._pause(LISTEN_SAFETY_POLL if live else follower.interval(), fetch)
                if fetch is not None and fetch.done():
                    continue
                if noted is None:
                    noted = await self.refresh(opts)
                if follower.observe(noted):
                    self.state = noted
                    yield noted
        finally:
            client._unfollow(self)
            if fetch is not None and not fetch.done():
                fetch.cancel()
            if subscription is not None:
                await subscription.aclose()

    def _end_of(self, state: TaskState) -> dict[str, Any] | BaseException:
        if state.status == "cancelled":
            return TaskCancelled(state)
        if state.status == "failed":
            assert state.error is not None
            return RemoteError(state.error, self.method)
        assert state.result is not None
        return state.result

    async def raw_result(self, *, listen: bool = False, options: CallOptions | None = None) -> dict[str, Any]:
        """The request's result as a dict, following the task to its end (see `result`)."""
        if self._outcome is None:
            async for _ in self.watch(listen=listen, options=options):
                pass
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None
        return outcome

    async def result(self, *, listen: bool = False, options: CallOptions | None = None) -> CallToolResult:
        """The tool's result once the task ends; `RemoteError` if it failed, `TaskCancelled` if cancelled."""
        return CallToolResult(await self.raw_result(listen=listen, options=options))
