"""The server's request pipeline, built once when serving starts: observers, then middleware, then the handler.

Rules:

* `Stages.build` runs once per server (``Server.freeze``: the first connection or
  legacy session, the first ``Server.handle``, or an explicit call); it
  reads the middleware and the observers registered by then, and after it
  ``add_middleware`` and ``add_observer`` raise. Nothing is replaced on the
  server: the `Pipeline` holds the entry points, and ``Server.handle``,
  ``Server.handle_in_session`` and ``ServerConnection`` call them;
* with neither middleware nor observers the entries are the request
  engine's own ``dispatch`` and ``dispatch_in_session`` (`server._engine`):
  the path, and its cost, are exactly those of the handlers (a request answered at once stays answered at once);
* with either, every request a handler serves is one coroutine: the
  observers' ``request_started`` (in registration order), the middleware
  chain (the first registered outermost), the handler, then
  ``request_answered`` (reverse order) with the result or the exception,
  which propagates unchanged;
* what a 2025-11-25 session answers itself is observed by `observe_answer`
  around the session's own answer, synchronously (no coroutine: the answer
  is ready at once, as without observers); `observe_notification` does the
  same for a notification the connection acts on; `opened` and `closed` tell
  the observers about a session.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, TypeVar

from ..jsonrpc import Notification, Request
from ..protocol.meta import PROTOCOL_VERSION, RequestMeta
from ..protocol.observers import ObservedNotification, ObservedRequest, ObservedSession, Observer, around_notification
from ._context import Emit, current_headers, current_request_state, header_mapping

if TYPE_CHECKING:
    from ._legacy import LegacySession
    from ._middleware import Invocation, Middleware, Next
    from ._server import Server

__all__ = ["Pipeline", "Stages", "observe_answer", "observe_notification", "opened", "closed"]

T = TypeVar("T")
if TYPE_CHECKING:  # for type checkers only: an alias is built at import (bench/README.md, "Cold start")
    #: `Server.handle`'s shape: a request and its emit, to a result or an awaitable of one.
    Handle = Callable[[Request, "Emit | None"], "dict[str, Any] | Awaitable[dict[str, Any]]"]
    #: `Server.handle_in_session`'s shape.
    HandleInSession = Callable[[Request, dict[str, Any], RequestMeta, "Emit | None"], "dict[str, Any] | Awaitable[dict[str, Any]]"]


class Pipeline:
    """The entries `build` made: the modern ``handle``, the legacy ``handle_in_session``, and the observers."""

    __slots__ = ("handle", "handle_in_session", "observers")

    def __init__(self, handle: Handle, handle_in_session: HandleInSession, observers: tuple[Observer, ...]) -> None:
        self.handle = handle
        self.handle_in_session = handle_in_session
        #: The observers, in registration order; empty: nothing is observed.
        self.observers = observers


Item = TypeVar("Item")


class Stages:
    """What a server registers around its handlers: middleware and observers, until `build` fixes them."""

    __slots__ = ("middleware", "observers", "built")

    def __init__(self) -> None:
        self.middleware: list[Middleware] = []
        self.observers: list[Observer] = []
        #: The pipeline, once built (serving has started).
        self.built: Pipeline | None = None

    def add(self, adding: str, stage: list[Item], item: Item) -> Item:
        """Append ``item`` to ``stage``; a RuntimeError once the pipeline is built."""
        if self.built is not None:
            raise RuntimeError(
                f"{adding}({item!r}): this server already serves (its middleware chain was built when the "
                "first connection opened or the first request was handled); register middleware and "
                "observers before serving, e.g. right after Server(...)"
            )
        stage.append(item)
        return item

    def build(self, server: Server, dispatch: Handle, dispatch_in_session: HandleInSession) -> Pipeline:
        """Build the pipeline (once; `Server.freeze`)."""
        built = self.built = _build(server, tuple(self.middleware), tuple(self.observers), dispatch, dispatch_in_session)
        return built


def _build(
    server: Server,
    middleware: tuple[Middleware, ...],
    observers: tuple[Observer, ...],
    dispatch: Handle,
    dispatch_in_session: HandleInSession,
) -> Pipeline:
    """The pipeline of ``server`` around its engine's ``dispatch`` methods (see the module docs)."""
    if not middleware and not observers:
        return Pipeline(dispatch, dispatch_in_session, ())
    from ._middleware import Invocation, compose

    async def terminal(call: Invocation) -> dict[str, Any]:
        request = call.request
        if call.method is not request.method or call.params is not request.params:
            request = Request(request.id, call.method, call.params)
        made = call._context
        state = made._request_state if made is not None else None
        if state is None:  # no middleware made request state: the handler's context makes its own
            return await _dispatch(call, request)
        token = current_request_state.set(state)  # the handler's ctx.request_state is this dict
        try:
            return await _dispatch(call, request)
        finally:
            current_request_state.reset(token)

    async def _dispatch(call: Invocation, request: Request) -> dict[str, Any]:
        if call.legacy:
            out = dispatch_in_session(request, call.params, call.meta, call.emit)
        else:
            out = dispatch(request, call.emit)
        if type(out) is dict:
            return out
        result: dict[str, Any] = await out  # type: ignore[misc]  # not a dict: the awaitable of one
        return result

    chain = compose(list(middleware), terminal)
    if observers:
        chain = _observed(observers, chain)

    def handle(request: Request, emit: Emit | None = None) -> Awaitable[dict[str, Any]]:
        return chain(Invocation(request, request.params, emit, server, None))

    def handle_in_session(
        request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]]:
        return chain(Invocation(request, params, emit, server, meta))

    return Pipeline(handle, handle_in_session, observers)


def _observed(observers: tuple[Observer, ...], chain: Next) -> Next:
    """``chain`` (the middleware and the handler) between the observers' two request hooks."""

    async def observed(call: Invocation) -> dict[str, Any]:
        params = call.params
        meta = params.get("_meta")
        headers = call.headers
        if call.legacy:
            session = call.meta.session
            version: Any = call.meta.protocol_version
            session_id = getattr(session, "id", None)
        else:
            version = meta.get(PROTOCOL_VERSION) if type(meta) is dict else None
            session_id = None
        if session_id is None and headers is not None:
            session_id = headers.get("mcp-session-id")
        event = ObservedRequest(
            call.method, params, call.id, version=version if type(version) is str else None,
            session_id=session_id, headers=headers, meta=meta if type(meta) is dict else None,
        )
        states = [observer.request_started(event) for observer in observers]
        try:
            result = await chain(call)
        except BaseException as exc:
            _answered(observers, event, states, None, exc)
            raise
        _answered(observers, event, states, result, None)
        return result

    return observed


def _answered(
    observers: tuple[Observer, ...], event: ObservedRequest, states: list[Any], result: dict[str, Any] | None, error: BaseException | None
) -> None:
    for observer, state in zip(reversed(observers), reversed(states)):
        observer.request_answered(event, state, result, error)


def _headers() -> Mapping[str, str] | None:
    return header_mapping(current_headers.get())


def observe_answer(
    observers: tuple[Observer, ...], session: LegacySession, request: Request, emit: Emit | None, answer: Handle
) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """``answer(request, emit)``, what ``session`` answers itself (at once), between the observers' request hooks."""
    params = request.params if type(request.params) is dict else {}
    headers = _headers()
    session_id = session.id
    if session_id is None and headers is not None:
        session_id = headers.get("mcp-session-id")
    meta = params.get("_meta")
    event = ObservedRequest(
        request.method, params, request.id, version=session.version, session_id=session_id,
        headers=headers, internal=True, meta=meta if type(meta) is dict else None,
    )
    states = [observer.request_started(event) for observer in observers]
    try:
        result = answer(request, emit)
    except BaseException as exc:
        event.version = session.version
        _answered(observers, event, states, None, exc)
        raise
    event.version = session.version  # initialize decides it
    _answered(observers, event, states, result if type(result) is dict else None, None)
    return result


def observe_notification(
    observers: tuple[Observer, ...],
    note: Notification,
    session: LegacySession | None,
    session_id: str | None,
    act: Callable[[Notification], T],
) -> T:
    """``act(note)`` between the observers' notification hooks."""
    params = note.params if type(note.params) is dict else {}
    headers = _headers()
    meta = params.get("_meta")
    event = ObservedNotification(
        note.method, params, version=session.version if session is not None else None,
        session_id=session.id if session is not None else session_id, headers=headers,
        meta=meta if type(meta) is dict else None,
    )
    return around_notification(observers, event, lambda: act(note))


def opened(observers: tuple[Observer, ...], session: LegacySession) -> ObservedSession:
    """Tell ``observers`` that ``session`` opened; the `ObservedSession` `closed` takes."""
    event = ObservedSession(
        session.id, session.version, http=session.id is not None, opened_at=time.perf_counter(),
        subscriptions=session.subscriptions,
    )
    for observer in observers:
        observer.session_opened(event)
    return event


def closed(observers: tuple[Observer, ...], session: LegacySession, event: ObservedSession) -> None:
    """Tell ``observers`` that the session of ``event`` closed (its version as it ended)."""
    event.version = session.version
    for observer in reversed(observers):
        observer.session_closed(event)
