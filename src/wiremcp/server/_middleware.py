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
  outermost. Register before serving: a connection binds the server's
  ``handle`` when it opens;
* every request a handler serves passes through: the modern
  ``Server.handle`` and a legacy session's requests (``handle_in_session``);
  what a legacy session answers itself (``initialize``, ``ping``,
  ``logging/setLevel``, ``resources/subscribe``) does not;
* `Invocation` holds the method, the params (a middleware may replace
  ``call.params`` or ``call.method`` before ``call_next``: the request
  handled is rebuilt from them), the request id, the era (``call.legacy``),
  a `Context` (``call.context``, made on first use), the HTTP request
  headers (``call.headers``, None off HTTP) and the verified token
  (``call.auth``);
* a middleware short-circuits by returning a result dict without calling
  ``call_next`` (a cache hit), or by raising: a `JSONRPCError` keeps its
  code, message and data; anything else is -32603 (``server/_reply.py``
  maps both, as for handlers). A result that is not a dict is a `TypeError`,
  answered -32603;
* with no middleware nothing changes: ``Server.handle`` is the class's own
  method. The first ``add_middleware`` installs a wrapped ``handle`` (and
  ``handle_in_session``) on the instance; with middleware every request is
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

__all__ = ["Invocation", "Middleware", "Next", "install"]

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
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request's headers (lower-case names), or None off HTTP."""
        return header_mapping(current_headers.get())

    @property
    def auth(self) -> Any:
        """The request's verified access token, or None."""
        return current_auth.get()


def _compose(middleware: list[Middleware], terminal: Next) -> Next:
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


def install(server: Server) -> None:
    """Put the wrapped ``handle`` and ``handle_in_session`` on ``server`` (its middleware list is read now)."""
    cls = type(server)
    modern = cls.handle.__get__(server)
    in_session = cls.handle_in_session.__get__(server)

    async def terminal(call: Invocation) -> dict[str, Any]:
        request = call.request
        if call.method is not request.method or call.params is not request.params:
            request = Request(request.id, call.method, call.params)
        if call.legacy:
            out = in_session(request, call.params, call.meta, call.emit)
        else:
            out = modern(request, call.emit)
        if type(out) is dict:
            return out
        result: dict[str, Any] = await out  # not a dict: the awaitable of one
        return result

    chain = _compose(list(server.middlewares), terminal)

    def handle(request: Request, emit: Emit | None = None) -> Awaitable[dict[str, Any]]:
        return chain(Invocation(request, request.params, emit, server, None))

    def handle_in_session(
        request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]]:
        return chain(Invocation(request, params, emit, server, meta))

    server.handle = handle  # type: ignore[method-assign]  # the instance's own handle, with the chain
    server.handle_in_session = handle_in_session  # type: ignore[method-assign]  # likewise, for legacy sessions
