"""MCP-level middleware: functions around every request a server handles, in both eras.

A middleware is an async function ``(call, call_next) -> result``:

    async def timing(call: Invocation, call_next: Next) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            log.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1000)

Rules:

* ``server.add_middleware(fn)`` (or ``@server.middleware``, or
  ``Server(middleware=[...])``) appends; the first registered is the
  outermost. The chain is built once, when serving starts
  (``Server.freeze``, ``server/_pipeline.py``); ``add_middleware`` after
  that raises a RuntimeError: nothing registered late is silently left out;
* every request a handler serves passes through: the modern
  ``Server.handle`` and a legacy session's requests (``handle_in_session``);
  what a legacy session answers itself (``initialize``, ``ping``,
  ``logging/setLevel``, ``resources/subscribe``) does not;
* `Invocation` holds the method, the params (a middleware may replace
  ``call.params`` or ``call.method`` before ``call_next``: the request
  handled is rebuilt from them), the request id, the era (``call.legacy``),
  a `Context` (``call.context``, made on first use), the HTTP request
  headers (``call.headers``, None off HTTP), the verified token
  (``call.auth``) and ``call.state``, the request's state dict, which the
  handler's ``ctx.request_state`` is (docs/state.md);
* a middleware short-circuits by returning a result dict without calling
  ``call_next`` (a cache hit), or by raising: a `JSONRPCError` keeps its
  code, message and data; anything else is -32603 (``server/_reply.py``
  maps both, as for handlers). A result that is not a dict is a `TypeError`,
  answered -32603;
* with no middleware (and no observers) nothing changes: ``Server.handle``
  goes straight to the handlers. With middleware every request is
  asynchronous (one coroutine per request); a scope refusal raised under
  middleware is still a 403 on HTTP (``transports.http._auth.AuthGate.scoped``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping

from ..jsonrpc import Request
from ..protocol.meta import RequestMeta, parse_request_meta
from ._context import Context, Emit, current_auth, current_headers, header_mapping

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Invocation", "Middleware", "Next", "compose"]

#: The rest of the chain: the next middleware, or the handler.
Next = Callable[["Invocation"], Awaitable[dict[str, Any]]]
#: ``async def middleware(call, call_next) -> result``.
Middleware = Callable[["Invocation", Next], Awaitable[dict[str, Any]]]


class Invocation:
    """One request on its way through the middleware (see the module docs)."""

    __slots__ = ("request", "method", "params", "emit", "server", "legacy", "_meta", "_context")

    def __init__(
        self,
        request: Request,
        params: dict[str, Any],
        emit: Emit | None,
        server: Server,
        meta: RequestMeta | None,
    ) -> None:
        self.request = request
        self.method: str = request.method
        self.params: dict[str, Any] = params
        self.emit = emit
        self.server = server
        #: Whether the request belongs to a 2025-11-25 session.
        self.legacy = meta is not None
        self._meta = meta
        self._context: Context | None = None

    def __repr__(self) -> str:
        return f"<Invocation {self.method} id={self.request.id!r}>"

    @property
    def id(self) -> Any:
        """The JSON-RPC id of the request."""
        return self.request.id

    @property
    def meta(self) -> RequestMeta:
        """The request's protocol fields (a malformed modern ``_meta`` raises its -32602 here)."""
        if self._meta is None:
            self._meta = parse_request_meta(self.params, self.server.supported_versions)
        return self._meta

    @property
    def context(self) -> Context:
        """The request's `Context`, as a handler gets it (progress, logging, ``ctx.lifespan``)."""
        if self._context is None:
            self._context = Context(self.request.id, self.method, self.meta, self.server, self.emit)
        return self._context

    @property
    def state(self) -> dict[str, Any]:
        """The request's state dict: what a middleware puts in, the handler reads as ``ctx.request_state``."""
        return self.context.request_state

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request's headers (lower-case names), or None off HTTP."""
        return header_mapping(current_headers.get())

    @property
    def auth(self) -> Any:
        """The request's verified access token, or None."""
        return current_auth.get()


def compose(middleware: list[Middleware], terminal: Next) -> Next:
    """``terminal`` behind ``middleware``, the first outermost (`_pipeline.build` calls it once)."""
    chain = terminal
    for each in reversed(middleware):
        chain = _link(each, chain)
    return chain


def _link(middleware: Middleware, rest: Next) -> Next:
    async def step(call: Invocation) -> dict[str, Any]:
        out = await middleware(call, rest)
        if type(out) is not dict:
            raise TypeError(f"middleware {_name(middleware)} returned {type(out).__name__}, not a result dict")
        return out

    return step


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
