"""A server with an observer and a middleware (tests/observability/test_observers.py).

The observer (`wiremcp.protocol.observers.Observer`) records every hook the
server calls, in order, as plain lists; the ``observed`` tool hands them
back (its own call is in flight, so it is not in them). The ``late`` tool
tries to add a middleware while serving, and answers with what that raised.
"""

from __future__ import annotations

from typing import Any

import wiremcp
from wiremcp.jsonrpc import JSONRPCError
from wiremcp.protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer

server = wiremcp.Server("observed", version="1.0.0")
events: list[list[Any]] = []


class Recorder(Observer):
    def request_started(self, request: ObservedRequest) -> Any:
        if request.method == "tools/call" and request.params.get("name") == "observed":
            return None
        events.append(["started", request.method, request.id, request.internal, request.session_id, request.version])
        return len(events)  # comes back to request_answered

    def request_answered(
        self, request: ObservedRequest, started: Any, result: dict[str, Any] | None, error: BaseException | None
    ) -> None:
        if started is None:
            return
        outcome = "ok" if error is None else getattr(error, "code", type(error).__name__)
        if result is not None and result.get("isError") is True:
            outcome = "tool_error"
        events.append(["answered", request.method, request.id, started, outcome, request.version])

    def notification_started(self, note: ObservedNotification) -> Any:
        events.append(["notification", note.method, note.session_id])
        return note.method

    def notification_ended(self, note: ObservedNotification, started: Any, error: BaseException | None) -> None:
        events.append(["notified", started, error is None])

    def session_opened(self, session: ObservedSession) -> None:
        events.append(["opened", session.id, session.http])

    def session_closed(self, session: ObservedSession) -> None:
        events.append(["closed", session.id, session.version])


server.add_observer(Recorder())


@server.middleware
async def tagging(call: Any, call_next: Any) -> dict[str, Any]:
    events.append(["middleware", call.method])
    return await call_next(call)


@server.tool(inline=True)
def echo(text: str) -> str:
    return text


@server.tool(inline=True)
def broken() -> str:
    raise RuntimeError("it broke")


@server.tool(inline=True)
def limited() -> str:
    raise JSONRPCError("Rate limited", code=-32029)


@server.tool(inline=True)
def late() -> str:
    async def never(call: Any, call_next: Any) -> dict[str, Any]:
        return await call_next(call)

    try:
        server.add_middleware(never)
    except RuntimeError as exc:
        return f"RuntimeError: {exc}"
    return "added"


@server.tool
def observed() -> dict[str, Any]:
    return {"events": list(events)}
