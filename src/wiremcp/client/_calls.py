"""`Calls`: the rules of a call on top of the `Driver`, before they reach the public `Client`.

Rules it keeps:

* **version**: a -32022 naming a version this client speaks switches to it
  and the request is sent again, once (`_request`;
  `ClientProtocol.version_refused`);
* **MRTR** (patterns/mrtr.mdx): each ``input_required`` round is answered
  in order by the callbacks, then the call is retried, up to
  ``max_input_rounds`` (`_call`; the rules of a round are `_mrtr`'s); a
  result that creates a task ends the call as it is;
* **the cache** (caching.mdx): a list, ``server/discover`` and
  ``completion/complete`` are read through the TTL cache unless
  ``refresh``; an MRTR retry's result is never cached;
* **pages** (server/utilities/pagination.mdx): a list is read page after
  page; a cursor seen twice is a `ProtocolViolation`; the tools/list pages
  record tool definitions (and drop tools whose ``x-mcp-header``
  annotations are invalid, `ClientProtocol.accept_tools`);
* **tools/call**: augmented with ``params.task`` against a 2025-11-25
  server when the server and the tool allow it (tasks.mdx, "Tool-Level
  Negotiation"; the definition is read first when it is not known yet); a
  -32001 HeaderMismatch over HTTP re-reads tools/list and retries once
  (streamable-http.mdx, Client Behavior);
* **tasks/list**: 2025-11-25 only; every page, each task checked.
"""

from __future__ import annotations

import logging
import time
from typing import Any, AsyncIterator

from ..protocol import Era, methods
from ..protocol.errors import HEADER_MISMATCH
from ._driver import Driver
from ._errors import ClientError, ProtocolViolation, RemoteError
from ._mrtr import check_complete
from ._options import CallOptions
from ._results import Page
from ._tasks import TASKS_LIST, TaskState, augment, legacy_task_support, parse_task

__all__ = ["Calls"]

log = logging.getLogger("wiremcp.client")

_NO_OPTIONS = CallOptions()
_PAGE_KEYS = {
    methods.TOOLS_LIST: "tools",
    methods.PROMPTS_LIST: "prompts",
    methods.RESOURCES_LIST: "resources",
    methods.RESOURCES_TEMPLATES_LIST: "resourceTemplates",
}


class Calls(Driver):
    """Requests through the version retry, MRTR rounds, the cache and pages; `Client` is the public class on top."""

    async def _request(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> dict[str, Any]:
        try:
            return await self._roundtrip(method, params, options)
        except RemoteError as exc:
            if not self._proto.version_refused(exc):
                raise
            return await self._roundtrip(method, params, options)

    async def _call(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, *, augmented: bool = False
    ) -> tuple[dict[str, Any], int]:
        """patterns/mrtr.mdx: each input round answered in order by the callbacks, then retried.

        A result that creates a task (`ClientProtocol.task_created`) ends the
        call as it is; the caller makes it a `TaskHandle`.
        """
        call = self._proto.multi_round(method, params)
        while True:
            result = await self._request(method, call.params, options)
            if augmented or result.get("resultType") == "task":
                if self._proto.task_created(method, result, augmented=augmented) is not None:
                    return result, call.rounds
            asked = call.receive(result)
            if asked is None:
                return result, call.rounds
            responses: dict[str, Any] = {}
            for ask in asked.requests:
                responses[ask.key] = await self._answer_input(ask.kind, ask.params)
            call.respond(responses)

    async def _cached(self, method: str, params: dict[str, Any], refresh: bool) -> dict[str, Any]:
        cache = self._proto.cache
        if not refresh:
            hit = cache.get(method, params, time.monotonic())
            if hit is not None:
                return hit
        result = check_complete(method, await self._request(method, params or None, _NO_OPTIONS))
        cache.put(method, params, result, time.monotonic())
        return result

    async def _page(self, method: str, cursor: str | None, refresh: bool) -> Page:
        key = _PAGE_KEYS.get(method)
        if key is None:
            raise ValueError(f"{method} is not a paginated list method")
        params = {"cursor": cursor} if cursor is not None else {}
        raw = await self._cached(method, params, refresh)
        if method == methods.TOOLS_LIST:
            raw = self._proto.accept_tools(raw, cursor is None)
        return Page(raw, key)


    async def _iter(self, method: str, refresh: bool) -> AsyncIterator[dict[str, Any]]:
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = await self._page(method, cursor, refresh)
            for item in page.items:
                yield item
            cursor = page.next_cursor
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolViolation(f"{method} returned the cursor {cursor!r} twice")
            seen.add(cursor)

    async def _all(self, method: str, refresh: bool) -> list[dict[str, Any]]:
        return [item async for item in self._iter(method, refresh)]

    async def _tool_call(
        self, name: str, params: dict[str, Any], opts: CallOptions, task: bool, task_ttl_ms: int | None
    ) -> tuple[dict[str, Any], TaskState | None]:
        """tools/call's result, and the task it created (``None`` for an ordinary result)."""
        augmented = False
        proto = self._proto
        capabilities = proto.server.capabilities if proto.server is not None else {}
        if proto.tasks and proto.era is Era.LEGACY and "tasks" in capabilities:
            if name not in proto.tool_definitions:
                await self._all(methods.TOOLS_LIST, False)
            support = legacy_task_support(capabilities, proto.tool_definitions.get(name))
            if support == "required" or (support == "optional" and task):
                params = augment(params, task_ttl_ms)
                augmented = True
        try:
            raw = (await self._call(methods.TOOLS_CALL, params, opts, augmented=augmented))[0]
        except RemoteError as exc:
            if exc.code != HEADER_MISMATCH or not self._proto.mirrors_headers:
                raise
            # streamable-http.mdx, Client Behavior: re-read tools/list for the
            # tool's current x-mcp-header annotations, then retry once.
            log.info("HeaderMismatch on tools/call %s: refreshing tools/list and retrying", name)
            await self._all(methods.TOOLS_LIST, True)
            raw = (await self._call(methods.TOOLS_CALL, params, opts, augmented=augmented))[0]
        if augmented or raw.get("resultType") == "task":
            return raw, proto.task_created(methods.TOOLS_CALL, raw, augmented=augmented)
        return raw, None

    async def _list_tasks(self, opts: CallOptions) -> list[TaskState]:
        if self._proto.era is not Era.LEGACY:
            raise ClientError("tasks/list exists only in 2025-11-25 (the tasks extension of 2026-07-28 has no list)")
        out: list[TaskState] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            raw = await self._request(TASKS_LIST, {"cursor": cursor} if cursor is not None else None, opts)
            tasks = raw.get("tasks")
            if type(tasks) is not list:
                raise ProtocolViolation("tasks/list returned no tasks array")
            out.extend(parse_task(t, legacy=True, where=TASKS_LIST) for t in tasks)
            cursor = raw.get("nextCursor")
            if cursor is None:
                return out
            if type(cursor) is not str or cursor in seen:
                raise ProtocolViolation(f"tasks/list returned the cursor {cursor!r} twice or not as a string")
            seen.add(cursor)
