"""The request engine: a server's method table, and how one decoded request reaches its handler.

`Server` is the registry a user writes against; the `Engine` answers
requests by reading it. The engine is sans-I/O: it takes a decoded `Request`
(in a 2025-11-25 session also the params and the `RequestMeta` the session
made) and returns the result dict, or an awaitable of it when the handler's
work is asynchronous. It never touches bytes or sockets, and it never awaits
anything itself, so a test drives it with plain messages and no event loop
(tests/server/test_engine.py). The transports reach it through
``Server.handle`` and ``Server.handle_in_session`` (the pipeline, `_pipeline`,
puts the observers and middleware in front of `dispatch` and
`dispatch_in_session`), and turn its outcome into a reply with `_reply`, the
one place exceptions become wire errors.

Rules:

* the method table (`methods`) holds a handler exactly while the server
  offers the method: ``server/discover``, ``tools/*`` and
  ``subscriptions/listen`` always; ``resources/*``, ``prompts/*`` and
  ``completion/complete`` while something of their kind is registered
  (`offer`, after every registration change); the forwarded methods while the
  server forwards (`_forward`); ``tasks/*`` once tasks are on (`add_tasks`).
  `legacy_methods` holds what only a 2025-11-25 session may call
  (``tasks/result``, ``tasks/list``). Any other method is -32601, and one that
  2026-07-28 removed (``initialize``...) names the versions we support;
* the order of checks of a modern request (the first that fails decides): the
  method is known; ``params._meta`` carries the per-request protocol fields
  (-32602, or -32022 for an unsupported version; `protocol.meta`);
  authorization (`_authorization.authorize`, the one door); then the handler,
  which checks its own params (-32602) and runs;
* a multi round-trip method (`_mrtr`) verifies a retry's sealed
  ``requestState`` before its handler runs; `InputRequired` from the handler,
  raised now or later, becomes the ``input_required`` result;
* results leave through `complete` (the server's shared ``_meta``:
  serverInfo), lists and discovery through `cacheable` (``ttlMs``,
  ``cacheScope``: private when the list depends on the caller's token);
* the engine reads the registry and never changes what is registered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from ..jsonrpc import MethodNotFound, Request
from ..protocol import methods
from ..protocol.extensions import EXTENSIONS
from ..protocol.meta import RequestMeta, parse_request_meta
from ._apps import UI_EXTENSION
from ._authorization import authorize, hide
from ._context import Emit
from ._handlers_tools import ToolHandlers
from ._mrtr import MRTR_METHODS, InputRequired, begin, input_required_result
from ._pagination import paginate

if TYPE_CHECKING:
    from ._handlers_listen import Listening
    from ._legacy import LegacySession, Notify, SendRequest
    from ._server import Server
    from ._tasks._runtime import Tasks

    # (for type checkers only: an alias is built at import, bench/README.md, "Cold start")
    #: A method's handler: the request, its params, its `RequestMeta` and its event sink.
    Handler = Callable[[Request, dict[str, Any], RequestMeta, "Emit | None"], "dict[str, Any] | Awaitable[dict[str, Any]]"]

__all__ = ["Engine"]

#: The methods served while resources, prompts or completers are registered (`offer`).
_CONTENT_METHODS = (
    methods.RESOURCES_LIST,
    methods.RESOURCES_TEMPLATES_LIST,
    methods.RESOURCES_READ,
    methods.PROMPTS_LIST,
    methods.PROMPTS_GET,
    methods.COMPLETION_COMPLETE,
)


class Engine:
    """The method table of one `Server` and the dispatch of one request through it (see the module docs)."""

    __slots__ = ("server", "methods", "legacy_methods", "tools", "_listening")

    def __init__(self, server: Server) -> None:
        self.server = server
        #: Discovery and the tools' handlers, with the tool lists they cache.
        self.tools = ToolHandlers(self)
        #: Method -> handler, for both eras: what the server offers now.
        self.methods: dict[str, Handler] = {
            methods.DISCOVER: self.tools.discover,
            methods.TOOLS_LIST: self.tools.tools_list,
            methods.TOOLS_CALL: self.tools.tools_call,
            methods.SUBSCRIPTIONS_LISTEN: self.listen,
        }
        self._listening: Listening | None = None  # made with the first stream (`listen`)
        #: Methods only a 2025-11-25 session may call.
        self.legacy_methods: dict[str, Handler] = {}

    def listen(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> Awaitable[dict[str, Any]]:
        """``subscriptions/listen``: `_handlers_listen.Listening`, loaded (and made) with the first stream."""
        listening = self._listening
        if listening is None:
            from ._handlers_listen import Listening

            listening = self._listening = Listening(self.server)
        return listening.listen(request, params, meta, emit)

    # -- the method table ----------------------------------------------------

    def offer(self) -> None:
        """Serve each method exactly while its capability is declared; otherwise it is -32601."""
        server = self.server
        made = server.__dict__  # a registry not made yet holds nothing: asking does not make it
        visibility = made.get("_visibility")
        if visibility is None:
            wanted = bool(made.get("_resources")), bool(made.get("_prompts")), bool(made.get("_completers"))
        else:  # what is registered, served now or not (see _visibility)
            wanted = bool(visibility.static or visibility.templates), bool(visibility.prompts), bool(made.get("_completers"))
        table = self.methods
        if any(wanted):
            from ._handlers_content import content_handlers  # only for a server with resources, prompts or completers

            offered = content_handlers(self, *wanted)
        else:
            offered = {}
        for method in _CONTENT_METHODS:
            handler = offered.get(method)
            if handler is not None:
                table[method] = handler
            else:
                table.pop(method, None)
        if server.forwarder is not None:
            table.update(server.forwarder.handlers)

    def capabilities(self) -> dict[str, Any]:
        """The capabilities the server declares: each feature while anything of it is registered, and its extensions."""
        server = self.server
        if server.forwarder is not None:  # a proxy: what the upstream offers (see _forward)
            return server.forwarder.capabilities()
        caps: dict[str, Any] = {}
        made = server.__dict__  # (a registry not made yet holds nothing: asking does not make it)
        visibility = made.get("_visibility")  # with rules: what is registered, served now or not (see _visibility)
        if server._tools or (visibility is not None and visibility.tools):
            caps["tools"] = {"listChanged": True}
        # resources / prompts / completions: declared while any is registered.
        if made.get("_resources") or (visibility is not None and (visibility.static or visibility.templates)):
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if made.get("_prompts") or (visibility is not None and visibility.prompts):
            caps["prompts"] = {"listChanged": True}
        if made.get("_completers"):
            caps["completions"] = {}
        if server._extensions:
            caps[EXTENSIONS] = {name: dict(settings) for name, settings in server._extensions.items()}
        return caps

    def add_tasks(self, tasks: Tasks) -> None:
        """Serve ``tasks/*`` with ``tasks`` (the server turned tasks on)."""
        self.methods.update({"tasks/get": tasks.get, "tasks/update": tasks.update, "tasks/cancel": tasks.cancel})
        self.legacy_methods.update({"tasks/result": tasks.result, "tasks/list": tasks.list_tasks})

    def method_not_found(self, method: str) -> MethodNotFound:
        """The -32601 for ``method``: one 2026-07-28 removed names the versions we support."""
        if method in methods.REMOVED_IN_MODERN:
            supported = list(self.server.supported_versions)
            return MethodNotFound(
                f"Method not found: {method!r} is not part of MCP {', '.join(supported)}, "
                "which carries the protocol version and capabilities in every request's _meta",
                {"supported": supported},
            )
        return MethodNotFound(f"Method not found: {method!r}")

    # -- dispatch ------------------------------------------------------------

    def dispatch(self, request: Request, emit: Emit | None = None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A modern request's result, or an awaitable of it; raises `JSONRPCError` (checks in the module docs' order)."""
        method = request.method
        handler = self.methods.get(method)
        if handler is None:
            raise self.method_not_found(method)
        params = request.params
        server = self.server
        meta = parse_request_meta(params, server.supported_versions)
        authorize(server, method, params)  # the one door (see _authorization)
        if method not in MRTR_METHODS:
            return handler(request, params, meta, emit)
        # `begin` only for a retry: a first round (no requestState, no inputResponses) has nothing to verify.
        if params.get("requestState") is not None or params.get("inputResponses") is not None:
            begin(server.state_sealer, method, params, meta)
        try:
            out = handler(request, params, meta, emit)
        except InputRequired as exc:
            if exc.visible:
                _rerun_warning(server, method, params, exc)
            return self.complete(input_required_result(server.state_sealer, method, params, exc))
        if type(out) is dict:
            return out
        return self._rounds(out, method, params)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    def dispatch_in_session(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A 2025-11-25 session's request: the same handlers, with the params and `RequestMeta` the session made."""
        handler = self.methods.get(request.method) or self.legacy_methods.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method!r}")
        authorize(self.server, request.method, params)  # the one door (see _authorization)
        return handler(request, params, meta, emit)

    async def _rounds(self, pending: Awaitable[dict[str, Any]], method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await pending
        except InputRequired as exc:
            if exc.visible:
                _rerun_warning(self.server, method, params, exc)
            return self.complete(input_required_result(self.server.state_sealer, method, params, exc))

    # -- results -------------------------------------------------------------

    def complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with the server's shared ``_meta`` (serverInfo) under its own keys."""
        shared = self.server._result_meta
        if shared is not None:
            own = result.get("_meta")
            result["_meta"] = shared if own is None else {**shared, **own}
        return result

    async def after(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """`complete` of a result that comes later."""
        return self.complete(await pending)

    def cacheable(self, result: dict[str, Any], private: bool = False) -> dict[str, Any]:
        """`complete`, with the caching hints of a list or discovery result."""
        server = self.server
        result["ttlMs"] = server.list_ttl_ms
        result["cacheScope"] = "private" if private else server.cache_scope  # private: the list depends on the token
        return self.complete(result)

    def listing(self, key: str, defs: list[dict[str, Any]], params: dict[str, Any], registry: Any, field: str) -> dict[str, Any]:
        """One page of a list result: the definitions the caller may see, under ``key``."""
        visible = hide(defs, registry, field)
        page, next_cursor = paginate(visible, params.get("cursor"), self.server.page_size)
        result: dict[str, Any] = {"resultType": "complete", key: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return self.cacheable(result, visible is not defs)

    # -- 2025-11-25 sessions (see _legacy) --------------------------------------

    def open_session(self, send_request: SendRequest, notify: Notify, session_id: str | None) -> LegacySession:
        """A new legacy session for a transport that received ``initialize``."""
        server = self.server
        if not server.legacy:
            raise self.method_not_found("initialize")
        from ._legacy import LegacySession

        return LegacySession(
            server, send_request, notify, session_id=session_id, request_timeout=server.client_request_timeout,
            observers=server.freeze().observers,
        )

    def legacy_capabilities(self) -> dict[str, Any]:
        """Capabilities as a 2025-11-25 ``initialize`` result states them."""
        server = self.server
        caps = {k: dict(v) for k, v in server.capabilities().items() if k != EXTENSIONS}
        extensions = server._extensions
        if UI_EXTENSION in extensions:  # MCP Apps is negotiated in initialize too (extensions/apps; see _apps)
            caps[EXTENSIONS] = {UI_EXTENSION: dict(extensions[UI_EXTENSION])}
        caps["logging"] = {}
        if server.tasks is not None:  # 2025-11-25 basic/utilities/tasks.mdx, Server Capabilities
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps


def _rerun_warning(server: Server, method: str, params: dict[str, Any], exc: InputRequired) -> None:
    """``wiremcp dev``: the handler did visible work, then asked; with the answer it runs again from the top."""
    from ._definition import warn_rerun

    kind = {methods.TOOLS_CALL: "tool", methods.PROMPTS_GET: "prompt", methods.RESOURCES_READ: "resource"}[method]
    name = params.get("uri") if method == methods.RESOURCES_READ else params.get("name")
    tool = server._tools.get(name) if method == methods.TOOLS_CALL and type(name) is str else None
    asked = ", ".join(sorted({str(r.get("method")) for r in exc.input_requests.values()}))
    work = " and ".join(exc.visible)
    again = f"{work} {'are' if len(exc.visible) > 1 else 'is'} sent again"
    warn_rerun(
        tool.fn if tool is not None else None,
        f"{kind} {name!r} sent {work}, then asked the client ({asked}): with a 2026-07-28 client it runs again "
        f"from the top once the answer comes, so {again}, and anything else done before the "
        "question (a write, a payment) is done again. Ask first, or declare the input as a parameter "
        "(Annotated[T, wiremcp.Elicit(...)]) so the body runs once: docs/server.md, \"Declared inputs\"",
    )
