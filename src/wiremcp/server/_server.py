"""The server: what it offers (tools, ...) and how one request is handled.

`Server.handle` takes one decoded `Request` and returns the result dict, or
an awaitable of it when the work is asynchronous (an async handler, or a
plain one that runs in the worker thread pool, `_workers`). It raises
a `JSONRPCError` for protocol errors. It never touches bytes or sockets: the
transports decode, call `handle`, and turn the outcome into a reply with
`wiremcp.server._reply` (the one place exceptions become wire errors).

Order of checks for a request (the first that fails decides):

1. the method is known (else -32601; the legacy methods 2026-07-28 removed,
   such as ``initialize``, get -32601 naming the versions we support);
2. ``params._meta`` carries the per-request protocol fields (-32602, or
   -32022 for an unsupported version; see `wiremcp.protocol.meta`);
3. the method's own params (-32602), then the method runs.

Settings (`_settings`): each `Server` argument left as ``None`` is read from
its ``WIREMCP_*`` environment variable, else its default. Registration
decorators work bare and called (``@server.tool`` / ``@server.tool()``) and
refuse misuse (a non-callable, a missing URI, a duplicate name) at once.
"""

from __future__ import annotations

import os
from functools import cached_property
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Literal, Mapping, TypeVar, overload

import orjson

from ..jsonrpc import Decoder, InvalidParams, JSONRPCError, MethodNotFound, Request
from ..protocol import MODERN_VERSIONS, methods
from ..protocol.extensions import EXTENSIONS, TASKS, check_identifier, client_declares
from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION, SERVER_INFO, RequestMeta, parse_request_meta
from ..protocol.state import DEFAULT_STATE_TTL, StateSealer
from ..protocol.telemetry import wanted as telemetry_wanted
from ._authorization import authorize, hide
from ._context import Context, Emit
from ._mrtr import MRTR_METHODS, InputRequired, begin, input_required_result
from ..backends import Backend, ChangeBus
from ._backend import choose_backend, default_task_store, with_backend
from ._settings import (
    DEFAULT_CLIENT_REQUEST_TIMEOUT,
    DEFAULT_MAX_SUBSCRIPTIONS,
    DEFAULT_THREADS,
    apply_log_level,
    parse_bool,
    parse_keys,
    legacy_log_level_setting,
    parse_level,
    setting,
)
from ._tools import Tool, ToolAnnotations
from ._apps import UI_EXTENSION, UI_MIME_TYPE, ModelTools, UiCsp, Visibility, check_links, supports_apps, ui_resource_parts
from ._workers import Workers
from ._reply import Reply, reply_failed, reply_ok
from ._lifespan import DEFAULT_SHUTDOWN_GRACE, Lifespan, LifespanFactory
from ._pagination import paginate
from ._pipeline import Pipeline, Stages

if TYPE_CHECKING:
    from ._fused_call import FusedCall, FusedEnvelope
    from ._tasks import TaskStore
    from ._tasks._modes import TaskMode
    from ._tasks._runtime import Tasks
    from ._legacy import LegacySession, Notify, SendRequest
    from ..protocol.observers import Observer
    from ._middleware import Middleware
    from ._mount import Mount
    from ._forward import Forwarder, Upstream

    # Resources, templates, prompts, completion (the section "resources, prompts, completion" below).
    from ._completion import Completer, Completers
    from ._prompts import Prompt, Prompts
    from ._resources import Resource, Resources

# Loaded on first use, each by the method that needs it (bench/README.md, "Cold start": a server of
# tools alone imports none of them): resources, prompts and completion (`_resources`, `_prompts`,
# `_completion` and their registries, the `cached_property`s of `Server`), middleware
# (`add_middleware`), composition (`mount`, `forward`), legacy sessions (`open_session`) and
# subscriptions/listen (`_listen`).

__all__ = ["Server", "DEFAULT_LIST_TTL_MS"]

#: How long clients may cache list results and discovery, unless configured.
DEFAULT_LIST_TTL_MS = 60_000

_dumps = orjson.dumps
_LINE = orjson.OPT_APPEND_NEWLINE

Handler = Callable[[Request, dict[str, Any], RequestMeta, "Emit | None"], "dict[str, Any] | Awaitable[dict[str, Any]]"]
CacheScope = Literal["public", "private"]
#: A function being registered: the decorators hand it back unchanged, with its own type.
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound="Middleware")


class Server:
    """An MCP server: register tools with `tool`, serve it with `wiremcp.run`.

    >>> server = Server("demo", version="1.0.0")
    >>> @server.tool()
    ... def add(a: int, b: int) -> str:
    ...     '''Add two integers.'''
    ...     return str(a + b)
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        list_ttl_ms: int | None = None,
        cache_scope: CacheScope = "public",
        page_size: int | None = None,
        server_info_in_results: bool = True,
        state_keys: Iterable[str | bytes] | None = None,
        state_ttl: float | None = None,
        bus: ChangeBus | None = None,
        backend: Backend | None = None,
        max_subscriptions: int | None = None,
        legacy: bool | None = None,
        legacy_log_level: str | None = None,
        auth: Any = None,
        threads: int | None = None,
        mask_errors: bool | None = None,
        log_level: str | int | None = None,
        client_request_timeout: float | None = None,
        lifespan: LifespanFactory | None = None,
        shutdown_grace: float | None = None,
        middleware: Iterable[Middleware] = (),
        task_store: TaskStore | Callable[[], TaskStore] | None = None,
        task_ttl_ms: int | None = None,
        task_poll_interval_ms: int | None = None,
        max_tasks: int | None = None,
        max_tasks_per_owner: int | None = None,
        task_max_ttl_ms: int | None = None,
        telemetry: bool | Mapping[str, Any] | None = None,
    ) -> None:
        # Settings: an argument wins, then a WIREMCP_* variable, then the default (see _settings).
        list_ttl_ms = setting("list_ttl_ms", list_ttl_ms, DEFAULT_LIST_TTL_MS, int)
        page_size = setting("page_size", page_size, None, int)
        state_ttl = setting("state_ttl", state_ttl, float(DEFAULT_STATE_TTL), float)
        state_keys = setting("state_keys", state_keys, None, parse_keys)
        max_subscriptions = setting("max_subscriptions", max_subscriptions, DEFAULT_MAX_SUBSCRIPTIONS, int)
        legacy = setting("legacy", legacy, True, parse_bool)
        #: What a legacy session logs before ``logging/setLevel`` (None: nothing); see _legacy.
        self.legacy_log_level = legacy_log_level_setting(legacy_log_level)
        threads = setting("threads", threads, DEFAULT_THREADS, int)
        mask_errors = setting("mask_errors", mask_errors, True, parse_bool)
        log_level = setting("log_level", log_level, None, parse_level)
        client_request_timeout = setting(
            "client_request_timeout", client_request_timeout, DEFAULT_CLIENT_REQUEST_TIMEOUT, float
        )
        shutdown_grace = setting("shutdown_grace", shutdown_grace, DEFAULT_SHUTDOWN_GRACE, float)
        if shutdown_grace < 0:
            raise ValueError("shutdown_grace must be >= 0 (seconds)")
        if list_ttl_ms < 0:
            raise ValueError("list_ttl_ms must be >= 0 (server/utilities/caching.mdx)")
        if cache_scope not in ("public", "private"):
            raise ValueError("cache_scope must be 'public' or 'private'")
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be positive")
        if client_request_timeout <= 0:
            raise ValueError("client_request_timeout must be positive (seconds)")
        apply_log_level(log_level)
        self.name = name
        self.version = version
        self.instructions = instructions
        self.list_ttl_ms = list_ttl_ms
        self.cache_scope: CacheScope = cache_scope
        self.page_size = page_size
        self.supported_versions: tuple[str, ...] = MODERN_VERSIONS
        info: dict[str, Any] = {"name": name, "version": version}
        if title:
            info["title"] = title
        self.server_info = info
        # Shared by every result; never mutated after this point.
        self._result_meta: dict[str, Any] | None = {SERVER_INFO: info} if server_info_in_results else None
        self._tools: dict[str, Tool] = {}
        # The fused-call decoder and its refusal (`_fused_call`), loaded on the first `fused_call`.
        self._decode_fused: Callable[[bytes], FusedEnvelope] | None = None
        self._fused_refused: type[Exception] = Exception
        self._fused_depth = 0
        self._tool_defs: list[dict[str, Any]] | None = None
        #: tools/list for clients without MCP Apps: without app-only tools (see _apps).
        self._model_tools = ModelTools()
        # Resources, templates, prompts, completers (`_resources`, `_prompts`, `_completers`, made
        # on first use); their methods are in `_handlers` exactly while something of their kind is
        # registered (`_offer`).
        self._handlers: dict[str, Handler] = {
            methods.DISCOVER: self._discover,
            methods.TOOLS_LIST: self._tools_list,
            methods.TOOLS_CALL: self._tools_call,
            methods.SUBSCRIPTIONS_LISTEN: self._listen,
        }
        # Multi round-trip requests: sealed requestState (see _mrtr, protocol/state).
        self.state_sealer = StateSealer(state_keys, ttl=state_ttl)
        #: Where shared state lives (see _backend, wiremcp.backends): this process, or Redis.
        self.backend = choose_backend(backend, bus, self.state_sealer.configured)
        # subscriptions/listen: change events, fanned out through the backend's bus.
        self.bus: ChangeBus = self.backend.bus
        self.max_subscriptions = max_subscriptions
        #: Serve 2025-11-25 clients (initialize handshake) too; see _legacy.
        self.legacy = legacy
        #: A ``wiremcp.auth.server.ResourceServer``: served over HTTP, every request then needs
        #: an access token (`MCPApp` reads it); stdio ignores it (basic/authorization/).
        self.auth = auth
        self._open_subscriptions = [0]
        #: Worker threads for plain ``def`` handlers (see _workers); ``threads`` of them at most.
        self.workers = Workers(threads)
        #: Hide unexpected exceptions' text from clients (see _failures); False for development.
        self.mask_errors = mask_errors
        #: Seconds a legacy (2025-11-25) client has to answer our elicitation, sampling or roots request.
        self.client_request_timeout = client_request_timeout
        #: Setup around serving, entered once per process by the transports (see _lifespan);
        #: ``async with server.lifespan as value``. What it yields is ``ctx.lifespan``.
        self.lifespan = Lifespan(self, with_backend(self.backend, lifespan))
        #: Seconds requests in flight get to finish on shutdown before they are cancelled.
        self.shutdown_grace = shutdown_grace
        #: Middleware (_middleware) and observers (protocol.observers), fixed by `freeze` (_pipeline).
        self._stages = Stages()
        # OpenTelemetry (see _telemetry): decided once, here; when on, the first observer.
        #: Whether OpenTelemetry spans and metrics are made (the argument, else WIREMCP_OTEL / OTEL_*).
        self.telemetry = telemetry_wanted(telemetry)
        if self.telemetry:
            from ._telemetry import instrument, providers

            instrument(self, **providers(telemetry))
        for each in middleware:
            self.add_middleware(each)
        #: Servers mounted into this one under a namespace (see _mount).
        self.mounts: list[Mount] = []
        #: Set by `forward`: tools, resources, prompts and completions answered by another server.
        self.forwarder: Forwarder | None = None
        #: Extensions this server declares, identifier -> settings (extensions/overview.mdx); see `declare_extension`.
        self._extensions: dict[str, dict[str, Any]] = {}
        #: Tasks (see _tasks): None until a tool may become a task (``task=`` other than "never").
        self.tasks: Tasks | None = None
        self._task_options: dict[str, Any] = {
            "store": task_store if task_store is not None else default_task_store(self.backend),
            # None: the default (`_tasks._modes`, `_tasks._limits`), when `enable_tasks` imports them.
            "ttl_ms": task_ttl_ms,
            "poll_interval_ms": task_poll_interval_ms,
            "max_tasks": setting("max_tasks", max_tasks, None, int),
            "max_tasks_per_owner": setting("max_tasks_per_owner", max_tasks_per_owner, None, int),
            "max_ttl_ms": setting("task_max_ttl_ms", task_max_ttl_ms, None, int),
        }
        self._legacy_handlers: dict[str, Handler] = {}
        self._legacy_tool_defs: list[dict[str, Any]] | None = None

    # -- registration -------------------------------------------------------

    @overload
    def tool(self, name: F, /) -> F: ...

    @overload
    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        inline: bool = False,
        ui: str | None = None,
        visibility: Visibility | Iterable[Visibility] | None = None,
        task: TaskMode = "never",
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        inline: bool = False,
        ui: str | None = None,
        visibility: Visibility | Iterable[Visibility] | None = None,
        task: TaskMode = "never",
    ) -> F | Callable[[F], F]:
        """Decorator: register a plain or async function as a tool; returns it unchanged.

        ``@server.tool``, ``@server.tool()`` and ``@server.tool("name", ...)``
        all work. ``output_schema`` publishes an explicit ``outputSchema``;
        ``structured_output=False`` turns off the one made from the return
        annotation, ``True`` requires one (see `wiremcp.server._tools`).
        ``scopes`` are the OAuth scopes a caller's token needs (see `_context`).
        A plain function runs in a worker thread; ``inline=True`` keeps a
        microsecond-scale one on the event loop (see `_workers`).
        MCP Apps (see `wiremcp.server._apps`): ``ui="ui://..."`` shows the
        tool's results in that UI resource; ``visibility="app"`` makes it a
        tool for the views only (``"model"``, ``"app"`` or both; default both).
        ``task`` says whether a call may become a task (docs/tasks.md):
        ``"never"`` (the default), ``"auto"``, ``"always"``, or a function of
        the arguments deciding per call.
        """
        options: dict[str, Any] = dict(
            title=title,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            structured_output=structured_output,
            annotations=annotations,
            icons=icons,
            meta=meta,
            scopes=scopes,
            inline=inline,
            ui=ui,
            visibility=visibility,
            task=task,
        )
        if callable(name):  # used bare: the function came as `name`
            self.add_tool(name, **options)
            return name
        _check_name("tool", name)

        def register(fn: F) -> F:
            _check_decorated("tool", fn)
            self.add_tool(fn, name=name, **options)
            return fn

        return register

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> Tool:
        """Register ``fn`` as a tool (options as `Server.tool`'s) and return it; ValueError if the name is taken."""
        tool = Tool(fn, **options)
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if tool.ui_uri is not None or tool.app_only:
            self._extensions.setdefault(UI_EXTENSION, {})  # MCP Apps, opted in (see _apps)
        self._tools[tool.name] = tool
        self._tool_defs = None
        self._legacy_tool_defs = None
        if tool.task is not None:
            self.enable_tasks()
        self.notify_tools_changed()
        return tool

    def check_ready(self) -> None:
        """The checks made before serving, raising ValueError: every tool's ``ui://`` resource exists (`_apps`).

        Entering the lifespan makes them; a transport that answers before it
        enters the lifespan (stdio's start before the event loop) calls this first.
        """
        check_links(self)

    def prefer_durable_tasks(self) -> None:
        """Keep tasks in the embedded SQLite file (`default_task_db_path`) unless a store was chosen.

        ``wiremcp run`` calls it: a server it serves keeps its tasks across
        restarts by default. ``task_store=`` or ``WIREMCP_TASK_STORE`` win.
        """
        if self._task_options["store"] is None:
            self._task_options["store"] = _sqlite_store
        if self.tasks is not None:
            self.tasks.prefer(_sqlite_store)

    def enable_tasks(self) -> Tasks:
        """Serve tasks (docs/tasks.md): declare ``io.modelcontextprotocol/tasks``, answer ``tasks/*``.

        Called by the first tool registered with ``task=`` other than
        ``"never"``; the store and its settings are the ``task_*`` arguments.
        """
        if self.tasks is None:
            from ._tasks._runtime import TaskHost, Tasks  # the runtime (and asyncio) only for a server with tasks

            host = TaskHost(
                self._complete, self.negotiated, lambda id, method, meta, emit: Context(id, method, meta, self, emit),
                lambda tool, arguments, ctx: tool.run_body(arguments, ctx, self.workers, self.mask_errors),
            )
            # An option left None takes the runtime's default (_tasks._modes, _tasks._limits).
            tasks = self.tasks = Tasks(host, **{k: v for k, v in self._task_options.items() if v is not None})
            self.declare_extension(TASKS)
            self._handlers.update({"tasks/get": tasks.get, "tasks/update": tasks.update, "tasks/cancel": tasks.cancel})
            self._legacy_handlers.update({"tasks/result": tasks.result, "tasks/list": tasks.list_tasks})
        return self.tasks

    def remove_tool(self, name: str) -> None:
        """Unregister the tool ``name`` (KeyError if there is none) and announce that the tool list changed."""
        del self._tools[name]
        self._tool_defs = None
        self._legacy_tool_defs = None
        self.notify_tools_changed()

    @property
    def tools(self) -> dict[str, Tool]:
        """The registered tools by name, in registration order (a copy)."""
        return dict(self._tools)

    def get_tool(self, name: str) -> Tool | None:
        """The tool registered under ``name``, or None (no copy: for hot paths)."""
        return self._tools.get(name)

    def capabilities(self) -> dict[str, Any]:
        """The capabilities the server declares: each feature while anything of it is registered, and its extensions."""
        if self.forwarder is not None:  # a proxy: what the upstream offers (see _forward)
            return self.forwarder.capabilities()
        caps: dict[str, Any] = {}
        if self._tools:
            caps["tools"] = {"listChanged": True}
        # resources / prompts / completions: declared while any is registered.
        made = self.__dict__  # (a registry not made yet holds nothing: asking does not make it)
        if made.get("_resources"):
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if made.get("_prompts"):
            caps["prompts"] = {"listChanged": True}
        if made.get("_completers"):
            caps["completions"] = {}
        if self._extensions:
            caps[EXTENSIONS] = {name: dict(settings) for name, settings in self._extensions.items()}
        return caps

    # -- the registries of resources, prompts and completers, made (and their modules imported) on first use --

    @cached_property
    def _resources(self) -> Resources:
        from ._resources import Resources

        return Resources()

    @cached_property
    def _prompts(self) -> Prompts:
        from ._prompts import Prompts

        return Prompts()

    @cached_property
    def _completers(self) -> Completers:
        from ._completion import Completers

        return Completers()

    # -- extensions (extensions/overview.mdx, "Negotiation") ---------------------

    def declare_extension(self, identifier: str, settings: dict[str, Any] | None = None) -> None:
        """Declare the extension ``identifier`` (``vendor-prefix/name``) under ``capabilities.extensions``.

        ``settings`` is its settings object (default ``{}``: no settings). An
        extension applies to a request only when the request's client
        capabilities declare it too: ask `negotiated`.
        """
        check_identifier(identifier)
        if settings is not None and type(settings) is not dict:
            raise TypeError(f"an extension's settings are an object (dict), not {settings!r}")
        self._extensions[identifier] = dict(settings or {})

    def remove_extension(self, identifier: str) -> None:
        """Stop declaring ``identifier`` (KeyError if it is not declared)."""
        del self._extensions[identifier]

    @property
    def extensions(self) -> dict[str, dict[str, Any]]:
        """The declared extensions and their settings (a copy)."""
        return {name: dict(settings) for name, settings in self._extensions.items()}

    def negotiated(self, meta: RequestMeta, identifier: str) -> bool:
        """Whether ``identifier`` applies to this request: declared here and in its client capabilities.

        Per request: a declaration on an earlier request counts for nothing.
        """
        return identifier in self._extensions and client_declares(meta.client_capabilities, identifier)

    # -- change notifications (basic/patterns/subscriptions.mdx) --------------

    def notify_tools_changed(self) -> None:
        """Tell ``subscriptions/listen`` streams that asked for it that the tool list changed."""
        self.bus.publish(("tools", None))

    def notify_prompts_changed(self) -> None:
        """Tell ``subscriptions/listen`` streams that asked for it that the prompt list changed."""
        self.bus.publish(("prompts", None))

    def notify_resources_changed(self) -> None:
        """Tell ``subscriptions/listen`` streams that asked for it that the resource list changed."""
        self.bus.publish(("resources", None))

    def notify_resource_updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` to streams subscribed to ``uri``."""
        self.bus.publish(("updated", uri))

    def close_subscriptions(self) -> None:
        """End every open subscription gracefully (each gets its ``complete`` result)."""
        self.bus.publish(None)

    # -- middleware, composition (see _middleware, _mount) ----------------------

    def add_middleware(self, middleware: Middleware) -> Middleware:
        """Append ``middleware`` (``async def mw(call, call_next) -> result``); the first added is outermost.

        Before serving starts: after `freeze`, a RuntimeError (see _middleware, _pipeline).
        """
        if not callable(middleware):
            raise TypeError(f"middleware is an async function (call, call_next) -> result, not {middleware!r}")
        return self._stages.add("add_middleware", self._stages.middleware, middleware)

    def add_observer(self, observer: Observer) -> Observer:
        """Register an observer (`wiremcp.protocol.observers`), before serving starts as `add_middleware`."""
        from ..protocol.observers import check_observer

        return self._stages.add("add_observer", self._stages.observers, check_observer(observer))

    def freeze(self) -> Pipeline:
        """Build the pipeline (observers, middleware, handlers) once: serving starts it; see _pipeline."""
        return self._stages.built or self._stages.build(self, self._dispatch, self._dispatch_in_session)

    def middleware(self, middleware: M) -> M:
        """Decorator: ``@server.middleware`` over an ``async def mw(call, call_next)``; see `add_middleware`."""
        self.add_middleware(middleware)
        return middleware

    @property
    def middlewares(self) -> tuple[Middleware, ...]:
        """The registered middleware, outermost first."""
        return tuple(self._stages.middleware)

    @property
    def observers(self) -> tuple[Observer, ...]:
        """The registered observers, in registration order."""
        return tuple(self._stages.observers)

    def mount(self, server: Server, namespace: str) -> Mount:
        """Serve ``server``'s tools, resources and prompts here, names prefixed ``namespace_``.

        Resource URIs stay as they are; changes to ``server``'s lists follow
        and are announced to this server's listeners; its lifespan runs inside
        this one's (see `wiremcp.server._mount`).
        """
        from ._mount import Mount, check_mountable

        check_mountable(self, server)
        mounted = Mount(self, server, namespace)
        if any(m.namespace == namespace for m in self.mounts):
            raise ValueError(f"the namespace {namespace!r} is already mounted")
        mounted.attach()
        self.mounts.append(mounted)
        if UI_EXTENSION in server._extensions:  # its MCP Apps tools and views are served here now (see _apps)
            self._extensions.setdefault(UI_EXTENSION, dict(server._extensions[UI_EXTENSION]))
        self.lifespan.include(server.lifespan)
        return mounted

    def forward(self, upstream: Upstream) -> Forwarder:
        """Answer tools, resources, prompts and completion with ``upstream`` (see `wiremcp.server._forward`).

        The building block of ``wiremcp.proxy``; local registrations are not served alongside.
        """
        if self.forwarder is not None:
            raise ValueError("this server already forwards to an upstream server")
        from ._forward import Forwarder

        self.forwarder = Forwarder(self, upstream)
        self._offer()
        return self.forwarder

    def unmount(self, namespace: str) -> None:
        """Stop serving the server mounted as ``namespace`` (KeyError if none)."""
        for mounted in self.mounts:
            if mounted.namespace == namespace:
                mounted.detach()
                self.mounts.remove(mounted)
                self.lifespan.exclude(mounted.server.lifespan)
                self.notify_tools_changed()
                self.notify_prompts_changed()
                self.notify_resources_changed()
                self._offer()
                return
        raise KeyError(namespace)

    def _listen(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> Awaitable[dict[str, Any]]:
        from ._subscriptions import listen, parse_filter

        wanted = parse_filter(params)
        honoured = {"tools", "prompts", "resources", "updated"}
        if self.tasks is not None:
            task_ids = self.tasks.listen_filter(wanted, meta)
            if task_ids is not None:
                return self._listen_tasks(request, wanted, honoured, task_ids, meta, emit or _drop)
        return listen(
            request.id, wanted, honoured, self.bus, emit or _drop, self._open_subscriptions, self.max_subscriptions
        )

    async def _listen_tasks(
        self, request: Request, wanted: dict[str, Any], honoured: set[str], task_ids: list[str], meta: RequestMeta, emit: Emit
    ) -> dict[str, Any]:
        """``subscriptions/listen`` with ``taskIds``: the acknowledgement names the ids agreed (tasks.md)."""
        from ._subscriptions import listen

        assert self.tasks is not None
        agreed = await self.tasks.agreed_ids(task_ids, meta)

        def acknowledging(method: str, params: dict[str, Any]) -> None:
            if method == "notifications/subscriptions/acknowledged":
                params = {**params, "notifications": {**params.get("notifications", {}), "taskIds": agreed}}
            emit(method, params)

        stop = self.tasks.task_emitter(agreed, request.id, emit)
        try:
            return await listen(
                request.id, wanted, honoured, self.bus, acknowledging, self._open_subscriptions, self.max_subscriptions
            )
        finally:
            stop()

    # -- handling -----------------------------------------------------------

    def handle(self, request: Request, emit: Emit | None = None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The result of one request, or an awaitable of it; raises `JSONRPCError`. Through the pipeline (`freeze`)."""
        return (self._stages.built or self.freeze()).handle(request, emit)

    def _dispatch(self, request: Request, emit: Emit | None = None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """`handle` after the middleware: the handler's result, or an awaitable of it."""
        method = request.method
        handler = self._handlers.get(method)
        if handler is None:
            raise self._method_not_found(method)
        params = request.params
        meta = parse_request_meta(params, self.supported_versions)
        authorize(self, method, params)  # the one door (see _authorization)
        if method not in MRTR_METHODS:
            return handler(request, params, meta, emit)
        # `begin` only for a retry: a first round (no requestState, no inputResponses) has nothing to verify.
        if params.get("requestState") is not None or params.get("inputResponses") is not None:
            begin(self.state_sealer, method, params, meta)
        try:
            out = handler(request, params, meta, emit)
        except InputRequired as exc:
            return self._complete(input_required_result(self.state_sealer, method, params, exc))
        if type(out) is dict:
            return out
        return self._rounds(out, method, params)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    def fused_call(self, data: bytes, decoder: Decoder) -> FusedCall | None:
        """The fused call in ``data`` (a ``tools/call`` the fused path answers), checked; or None: the general path decides.

        The fused path's first half (`answer_fused_call` is the second). A
        fused call (`server._fused_call`: ``name``, scalar ``arguments`` and
        the usual ``_meta``, and nothing else) is decoded and type-checked in
        one msgspec pass; then the protocol version, the tool (an inline synchronous
        function, `Tool.fused_arguments`), each argument's exact type, the required
        names and ``decoder``'s size limit are checked here (a fused call cannot
        nest deeper than `_fused_call.MAX_FUSED_DEPTH`; under a lower limit, it
        declines). Every
        rule `handle` keeps holds for what it returns; anything else, every
        problem included, is None, never an exception, so that the general
        path gives the exact error. Nothing has run yet: the transport may
        still check what is its own (an id in flight, the HTTP headers).
        """
        stages = self._stages
        if stages.middleware or stages.observers or self.forwarder is not None:
            return None
        if len(data) > decoder.max_size:
            return None
        decode = self._decode_fused
        if decode is None:
            decode = self._fused_decoder()
        if decoder.max_depth < self._fused_depth:
            return None  # a fused call nests at most this deep (`_fused_call`): no walk or count needed
        try:
            envelope = decode(data)
        except self._fused_refused:
            return None
        params = envelope.params
        meta = params.meta
        version = meta.version
        if version not in self.supported_versions:
            return None
        tool = self._tools.get(params.name)
        if tool is None:
            return None
        fused = tool.fused_arguments
        if fused is None:
            return None
        arguments = params.arguments
        if arguments is None:
            arguments = {}
        types, required, _ = fused
        for key, value in arguments.items():
            allowed = types.get(key)
            if allowed is None or type(value) not in allowed:
                return None
        if required and len(arguments) != len(types) and not arguments.keys() >= required:
            return None  # (every key is a property: holding them all, it holds the required ones)
        return envelope.id, tool, arguments, version, data

    def _fused_decoder(self) -> Callable[[bytes], FusedEnvelope]:
        """`_fused_call.decode_fused_call`, imported (with msgspec) on the first fused call."""
        from ._fused_call import MAX_FUSED_DEPTH, DecodeError, decode_fused_call

        self._decode_fused = decode_fused_call
        self._fused_refused = DecodeError
        self._fused_depth = MAX_FUSED_DEPTH
        return decode_fused_call

    def answer_fused_call(self, call: FusedCall) -> Reply | None:
        """The fused path's second half: run the tool of a `fused_call` and encode its reply.

        The reply is byte for byte the one `handle` makes. None (and the
        tool has not run) when converting the arguments to the function's
        types fails: the general path then decides.
        """
        id, tool, arguments, _, _ = call
        convert = tool._convert
        if convert is not None:  # e.g. an int parameter: pure, so a problem still leaves the call to `handle`
            try:
                arguments = convert(arguments)
            except Exception:
                return None
        try:
            try:
                value = tool.fn(**arguments)
            except JSONRPCError:
                raise  # a deliberate protocol error stays one (as in `Tool._run`)
            except Exception as exc:
                out = tool._failed(exc, self.mask_errors)
            else:
                fused = tool.fused_arguments
                if type(value) is str and fused is not None and fused[2]:  # `Tool._unstructured`, inline
                    out = {"resultType": "complete", "content": [{"type": "text", "text": value}]}
                else:
                    out = tool._result(value)
        except BaseException as exc:  # noqa: BLE001 - answered as `handle` and `Call.start` answer it
            return self._call_raised(id, orjson.loads(call[4])["params"], exc)
        shared = self._result_meta
        if shared is not None:
            own = out.get("_meta")
            out["_meta"] = shared if own is None else {**shared, **own}
        try:  # `reply_ok`, inline
            return _dumps({"jsonrpc": "2.0", "id": id, "result": out}, option=_LINE), None
        except TypeError:
            return reply_ok(id, out)

    def _call_raised(self, id: Any, params: dict[str, Any], exc: BaseException) -> Reply:
        """A fused call's tool raised a BaseException: `InputRequired` as `handle`, the rest as `Call.start`."""
        if isinstance(exc, InputRequired):
            return reply_ok(id, self._complete(input_required_result(self.state_sealer, methods.TOOLS_CALL, params, exc)))
        return reply_failed(id, exc)

    async def _rounds(self, pending: Awaitable[dict[str, Any]], method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await pending
        except InputRequired as exc:
            return self._complete(input_required_result(self.state_sealer, method, params, exc))

    def _method_not_found(self, method: str) -> MethodNotFound:
        if method in methods.REMOVED_IN_MODERN:
            supported = list(self.supported_versions)
            return MethodNotFound(
                f"Method not found: {method!r} is not part of MCP {', '.join(supported)}, "
                "which carries the protocol version and capabilities in every request's _meta",
                {"supported": supported},
            )
        return MethodNotFound(f"Method not found: {method!r}")

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        if self._result_meta is not None:
            own = result.get("_meta")
            result["_meta"] = self._result_meta if own is None else {**self._result_meta, **own}
        return result

    def _cacheable(self, result: dict[str, Any], private: bool = False) -> dict[str, Any]:
        result["ttlMs"] = self.list_ttl_ms
        result["cacheScope"] = "private" if private else self.cache_scope  # private: the list depends on the token
        return self._complete(result)

    def _discover(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities(),
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return self._cacheable(result)

    def _tools_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        if meta.era == "legacy" and self.tasks is not None:  # 2025-11-25: execution.taskSupport
            defs = self._legacy_tool_defs
            if defs is None:
                defs = self._legacy_tool_defs = [_legacy_definition(t) for t in self._tools.values()]
        else:
            defs = self._tool_defs
            if defs is None:
                defs = self._tool_defs = [t.definition for t in self._tools.values()]
        shown = self._model_tools.view(defs)
        if shown is not defs and not supports_apps(self, meta):
            defs = shown  # app-only tools are for the views of an MCP Apps host (see _apps)
        visible = hide(defs, self._tools, "name")
        page, next_cursor = paginate(visible, params.get("cursor"), self.page_size)
        result: dict[str, Any] = {"resultType": "complete", "tools": page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return self._cacheable(result, visible is not defs)

    def _tools_call(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        name = params.get("name")
        if type(name) is not str:
            raise InvalidParams("Invalid params: tools/call needs 'name', the tool's name as a string")
        tool = self._tools.get(name)
        if tool is None:
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})
        if tool.app_only and not supports_apps(self, meta):
            raise InvalidParams(f"Unknown tool: {name}", {"name": name})  # never listed to this client (_apps)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise InvalidParams("Invalid params: tools/call 'arguments' must be an object")
        if tool.task is not None and self.tasks is not None:  # may become a task: the general path (see _tasks)
            routed = self.tasks.route(tool, arguments, request, params, meta, emit)
            if routed is not None:
                return routed
        ctx = Context(request.id, request.method, meta, self, emit) if tool.wants_context else None
        out = tool.call(arguments, ctx, self.workers, self.mask_errors)
        if type(out) is dict:
            # `_complete`, inline: the serverInfo `_meta` is one dict built at start, shared.
            shared = self._result_meta
            if shared is not None:
                own = out.get("_meta")
                out["_meta"] = shared if own is None else {**shared, **own}
            return out
        return self._after(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    async def _after(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        return self._complete(await pending)

    # -- resources, prompts, completion --------------------------------------
    # server/resources.mdx, server/prompts.mdx, server/utilities/completion.mdx;
    # the rules live in _resources, _prompts, _completion and _uri_template.

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: CacheScope | None = None,
        scopes: Iterable[str] | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register a function as the resource at ``uri``; returns it unchanged.

        A ``uri`` with ``{...}`` (RFC 6570) registers a resource template
        whose variables are the function's parameters. ``ttl_ms`` and
        ``cache_scope`` set the caching hints of its ``resources/read``
        results (default: the server's). A plain function runs in a worker
        thread unless ``inline=True``.
        """
        if callable(uri):
            raise TypeError(
                "@server.resource needs the resource's URI: write @server.resource(\"file:///...\"), "
                "not a bare @server.resource"
            )
        if type(uri) is not str or not uri:
            raise TypeError(f"@server.resource needs the resource's URI as a non-empty string, not {uri!r}")

        def register(fn: F) -> F:
            _check_decorated("resource", fn)
            self.add_resource(
                fn,
                uri,
                name=name,
                title=title,
                description=description,
                mime_type=mime_type,
                size=size,
                annotations=annotations,
                icons=icons,
                meta=meta,
                ttl_ms=ttl_ms,
                cache_scope=cache_scope,
                scopes=scopes,
                inline=inline,
            )
            return fn

        return register

    def add_resource(self, fn: Callable[..., Any], uri: str, **options: Any) -> Resource:
        """Register ``fn`` as the resource (or template) ``uri`` and return it; ValueError if ``uri`` is taken."""
        from ._resources import Resource

        resource = Resource(fn, uri, **options)
        self._resources.add(resource)
        self._offer()
        self.notify_resources_changed()
        return resource

    def ui_resource(
        self,
        uri: str,
        *,
        html: str | None = None,
        file: str | os.PathLike[str] | None = None,
        package: tuple[str, str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        csp: UiCsp | None = None,
        permissions: Iterable[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        ttl_ms: int | None = None,
        cache_scope: CacheScope | None = None,
        scopes: Iterable[str] | None = None,
    ) -> Resource:
        """Register an MCP Apps view: an HTML document at a ``ui://`` URI (see `wiremcp.server._apps`).

        The HTML is ``html=`` (a string), ``file=`` (a path) or ``package=``
        (``("my_pkg.views", "view.html")``), read once, now. ``csp`` lists the
        origins the view may reach (``connectDomains``, ``resourceDomains``,
        ``frameDomains``, ``baseUriDomains``); ``permissions`` names browser
        features it asks for (``camera``, ``microphone``, ``geolocation``,
        ``clipboardWrite``); ``domain`` asks the host for a dedicated origin;
        ``prefers_border`` asks for a border. Link a tool to it with
        ``@server.tool(ui=uri)``.
        """
        read, ui_meta, size = ui_resource_parts(
            uri, html=html, file=file, package=package, csp=csp, permissions=permissions,
            domain=domain, prefers_border=prefers_border, meta=meta,
        )
        self._extensions.setdefault(UI_EXTENSION, {})  # MCP Apps, opted in
        return self.add_resource(
            read, uri, name=name or uri, title=title, description=description, mime_type=UI_MIME_TYPE,
            size=size, icons=icons, meta=ui_meta, ttl_ms=ttl_ms, cache_scope=cache_scope, scopes=scopes, inline=True,
        )

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource or template registered as ``uri`` (KeyError if none)."""
        self._resources.remove(uri)
        self._offer()
        self.notify_resources_changed()

    @property
    def resources(self) -> dict[str, Resource]:
        """The static resources by URI, in registration order (a copy)."""
        return dict(self._resources.static)

    @property
    def resource_templates(self) -> dict[str, Resource]:
        """The resource templates by URI template, in registration order (a copy)."""
        return dict(self._resources.templates)

    @overload
    def prompt(self, name: F, /) -> F: ...

    @overload
    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: str | F | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        inline: bool = False,
    ) -> F | Callable[[F], F]:
        """Decorator: register a function as a prompt; its parameters are the prompt's arguments.

        ``@server.prompt()`` and bare ``@server.prompt`` both work. A plain
        function runs in a worker thread unless ``inline=True``.
        """
        options: dict[str, Any] = dict(title=title, description=description, icons=icons, meta=meta, scopes=scopes, inline=inline)
        if callable(name):  # used bare: the function came as `name`
            self.add_prompt(name, **options)
            return name
        _check_name("prompt", name)

        def register(fn: F) -> F:
            _check_decorated("prompt", fn)
            self.add_prompt(fn, name=name, **options)
            return fn

        return register

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> Prompt:
        """Register ``fn`` as a prompt (options as `Server.prompt`'s) and return it; ValueError if the name is taken."""
        from ._prompts import Prompt

        prompt = Prompt(fn, **options)
        self._prompts.add(prompt)
        self._offer()
        self.notify_prompts_changed()
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Unregister the prompt ``name`` (KeyError if there is none) and announce that the prompt list changed."""
        self._prompts.remove(name)
        self._offer()
        self.notify_prompts_changed()

    @property
    def prompts(self) -> dict[str, Prompt]:
        """The registered prompts by name, in registration order (a copy)."""
        return dict(self._prompts.by_name)

    def complete(
        self,
        fn: Any = None,
        /,
        *,
        argument: str | None = None,
        prompt: str | None = None,
        template: str | None = None,
        inline: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register a completer for one argument of a prompt or a template variable.

        It needs to know what it completes, so it is always called:
        ``@server.complete(prompt="review", argument="language")``. A plain
        function runs in a worker thread unless ``inline=True``.

        >>> server = Server("demo")
        >>> @server.complete(prompt="review", argument="language")
        ... def languages(value: str) -> list[str]:
        ...     return [x for x in ("python", "rust") if x.startswith(value)]
        """
        if fn is not None or argument is None:
            raise TypeError(
                "@server.complete needs to know what it completes: "
                "@server.complete(prompt=..., argument=...) or @server.complete(template=..., argument=...)"
            )
        what = argument

        def register(fn: F) -> F:
            _check_decorated("completer", fn)
            self.add_completer(fn, argument=what, prompt=prompt, template=template, inline=inline)
            return fn

        return register

    def add_completer(
        self,
        fn: Callable[..., Any],
        *,
        argument: str,
        prompt: str | None = None,
        template: str | None = None,
        inline: bool = False,
    ) -> Completer:
        """Register ``fn`` to complete ``argument`` of ``prompt`` or ``template``; ValueError if one does."""
        from ._completion import Completer

        completer = Completer(fn, argument=argument, prompt=prompt, template=template, inline=inline)
        self._completers.add(completer)
        self._offer()
        return completer

    def remove_completer(self, *, argument: str, prompt: str | None = None, template: str | None = None) -> None:
        """Unregister the completer of ``argument`` of ``prompt`` or ``template``; KeyError if there is none."""
        ref = "ref/prompt" if prompt is not None else "ref/resource"
        self._completers.remove((ref, prompt if prompt is not None else template, argument))
        self._offer()

    def _offer(self) -> None:
        """Serve each method exactly while its capability is declared; otherwise it is -32601."""
        table = self._handlers
        for on, entries in (
            (
                bool(self._resources),
                {
                    methods.RESOURCES_LIST: self._resources_list,
                    methods.RESOURCES_TEMPLATES_LIST: self._resource_templates_list,
                    methods.RESOURCES_READ: self._resources_read,
                },
            ),
            (bool(self._prompts), {methods.PROMPTS_LIST: self._prompts_list, methods.PROMPTS_GET: self._prompts_get}),
            (bool(self._completers), {methods.COMPLETION_COMPLETE: self._completion_complete}),
        ):
            for method, handler in entries.items():
                if on:
                    table[method] = handler
                else:
                    table.pop(method, None)
        if self.forwarder is not None:
            table.update(self.forwarder.handlers)

    def _context_for(self, request: Request, meta: RequestMeta, emit: Emit | None) -> Context:
        return Context(request.id, request.method, meta, self, emit)

    def _listing(self, key: str, defs: list[dict[str, Any]], params: dict[str, Any], registry: Any, field: str) -> dict[str, Any]:
        visible = hide(defs, registry, field)
        page, next_cursor = paginate(visible, params.get("cursor"), self.page_size)
        result: dict[str, Any] = {"resultType": "complete", key: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return self._cacheable(result, visible is not defs)

    def _resources_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        return self._listing("resources", self._resources.definitions(), params, self._resources.static, "uri")

    def _resource_templates_list(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any]:
        templates = self._resources.templates
        return self._listing("resourceTemplates", self._resources.template_definitions(), params, templates, "uriTemplate")

    def _prompts_list(self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None) -> dict[str, Any]:
        return self._listing("prompts", self._prompts.definitions(), params, self._prompts.by_name, "name")

    def _resources_read(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        uri = params.get("uri")
        if type(uri) is not str:
            raise InvalidParams("Invalid params: resources/read needs 'uri', the resource's URI as a string")
        resource, arguments = self._resources.find(uri)
        ctx = self._context_for(request, meta, emit) if resource.sig.context is not None else None
        out = resource.read(uri, arguments, ctx, self.workers, self.mask_errors)
        if type(out) is list:
            return self._read_result(resource, out)
        return self._read_later(resource, out)  # type: ignore[arg-type]  # the awaitable: `type() is list` narrows one branch only

    def _read_result(self, resource: Resource, contents: list[dict[str, Any]]) -> dict[str, Any]:
        return self._complete(
            {
                "resultType": "complete",
                "contents": contents,
                "ttlMs": self.list_ttl_ms if resource.ttl_ms is None else resource.ttl_ms,
                "cacheScope": resource.cache_scope or ("private" if resource.scopes else self.cache_scope),
            }
        )

    async def _read_later(self, resource: Resource, pending: Awaitable[list[dict[str, Any]]]) -> dict[str, Any]:
        return self._read_result(resource, await pending)

    def _prompts_get(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        prompt = self._prompts.find(params.get("name"))
        arguments = prompt.arguments(params.get("arguments"))
        ctx = self._context_for(request, meta, emit) if prompt.sig.context is not None else None
        out = prompt.get(arguments, ctx, self.workers, self.mask_errors)
        if type(out) is dict:
            return self._complete(out)
        return self._after(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    def _completion_complete(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        completer, value, context_arguments = self._completers.resolve(params, self._prompts, self._resources)
        if completer is None:
            return self._complete({"resultType": "complete", "completion": {"values": []}})
        ctx = self._context_for(request, meta, emit) if completer.sig.context is not None else None
        out = completer.complete(value, context_arguments, ctx, self.workers, self.mask_errors)
        if type(out) is dict:
            return self._complete({"resultType": "complete", "completion": out})
        return self._completion_later(out)  # type: ignore[arg-type]  # the awaitable: `type() is dict` narrows one branch only

    async def _completion_later(self, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        return self._complete({"resultType": "complete", "completion": await pending})

    # -- legacy sessions (2025-11-25; see _legacy) -----------------------------

    def open_session(self, send_request: SendRequest, notify: Notify, *, session_id: str | None = None) -> LegacySession:
        """A new legacy session for a transport that received ``initialize``."""
        if not self.legacy:
            raise self._method_not_found("initialize")
        from ._legacy import LegacySession

        return LegacySession(
            self, send_request, notify, session_id=session_id, request_timeout=self.client_request_timeout,
            observers=self.freeze().observers,
        )

    def legacy_capabilities(self) -> dict[str, Any]:
        """Capabilities as a 2025-11-25 ``initialize`` result states them."""
        caps = {k: dict(v) for k, v in self.capabilities().items() if k != EXTENSIONS}
        if UI_EXTENSION in self._extensions:  # MCP Apps is negotiated in initialize too (extensions/apps; see _apps)
            caps[EXTENSIONS] = {UI_EXTENSION: dict(self._extensions[UI_EXTENSION])}
        caps["logging"] = {}
        if self.tasks is not None:  # 2025-11-25 basic/utilities/tasks.mdx, Server Capabilities
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    def handle_in_session(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A request of a legacy session: same handlers, fields from the session; through the pipeline."""
        return (self._stages.built or self.freeze()).handle_in_session(request, params, meta, emit)

    def _dispatch_in_session(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        handler = self._handlers.get(request.method) or self._legacy_handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(f"Method not found: {request.method!r}")
        authorize(self, request.method, params)  # the one door (see _authorization)
        return handler(request, params, meta, emit)


def _drop(method: str, params: dict[str, Any]) -> None:
    return None


def _sqlite_store() -> TaskStore:
    """The embedded durable store (`_tasks._sqlite`); sqlite3 is imported when the first task needs it."""
    from ._tasks._sqlite import SQLiteTaskStore

    return SQLiteTaskStore()


def _legacy_definition(tool: Tool) -> dict[str, Any]:
    """A tool's 2025-11-25 definition: ``execution.taskSupport`` from its ``task`` mode."""
    if tool.task is None:
        return tool.definition
    support = "required" if tool.task == "always" else "optional"
    return {**tool.definition, "execution": {"taskSupport": support}}


def _check_name(kind: str, name: Any) -> None:
    """A decorator's first argument, when not the function: a name (str) or nothing."""
    if name is not None and type(name) is not str:
        raise TypeError(f"@server.{kind}(...) takes the {kind}'s name as a string first, not {name!r}")


def _check_decorated(kind: str, fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"@server.{kind} decorates a function (plain or async), not {fn!r}")
