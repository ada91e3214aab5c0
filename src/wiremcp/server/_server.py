"""The server: the registry a user writes against (tools, resources, prompts, completers, settings).

`Server` holds what a server offers and how it is configured. It does not
answer requests itself: its request engine (`_engine`, with the handlers in
`_handlers_tools`, `_handlers_content` and `_handlers_listen`) reads this
registry and answers one decoded `Request`. `Server.handle` takes one and
returns the result dict, or an awaitable of it when the work is asynchronous
(an async handler, or a plain one that runs in the worker thread pool,
`_workers`); it raises a `JSONRPCError` for protocol errors (the order of
checks is `_engine`'s). It never touches bytes or sockets: the transports
decode, call `handle`, and turn the outcome into a reply with
`wiremcp.server._reply` (the one place exceptions become wire errors).

Rules it keeps:

* a registration change is announced to listeners (``subscriptions/listen``)
  and updates the engine's method table at once (`Engine.offer`);
* settings (`_settings`): each `Server` argument left as ``None`` is read
  from its ``WIREMCP_*`` environment variable, else its default;
* registration decorators work bare and called (``@server.tool`` /
  ``@server.tool()``) and refuse misuse (a non-callable, a missing URI, a
  duplicate name) at once; each kind's options are one frozen type
  (`_options`).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Mapping, TypeVar, overload

from ..jsonrpc import JSONRPCError, Request
from ..protocol import MODERN_VERSIONS
from ..protocol.extensions import TASKS, check_identifier, client_declares
from ..protocol.meta import SERVER_INFO, RequestMeta
from ..protocol.state import StateSealer
from ..protocol.telemetry import wanted as telemetry_wanted
from ._context import Context, Emit
from ._engine import Engine
from ._options import DEFAULT_LIST_TTL_MS, CacheScope, ServerSettings, ToolOptions, task_options
from ._registry_content import ContentRegistry, check_decorated, check_name
from ..backends import Backend, ChangeBus
from ._backend import choose_backend, with_backend
from ._settings import apply_log_level
from ._tools import Tool, ToolAnnotations
from ._apps import UI_EXTENSION, Visibility, check_links
from ._workers import Workers
from ._lifespan import Lifespan, LifespanFactory
from ._pipeline import Pipeline, Stages

if TYPE_CHECKING:
    from ._tasks import TaskStore
    from ._tasks._modes import TaskMode
    from ._tasks._runtime import Tasks
    from ._legacy import LegacySession, Notify, SendRequest
    from ..protocol.observers import Observer
    from ._middleware import Middleware
    from ._mount import Mount
    from ._forward import Forwarder, Upstream
    from ._transform import Arg, Output, TransformedTool
    from ._depends import Resources
    from ._visibility import Kind, VisibilityRules
    from ._storage import KeyValueStore

# Loaded on first use, each by the method that needs it (bench/README.md, "Cold start": a server of
# tools alone imports none of them): resources, prompts and completion (`_resources`, `_prompts`,
# `_completion`, their registries and `_handlers_content`; see `_registry_content`), middleware
# (`add_middleware`), composition (`mount`, `forward`), legacy sessions (`open_session`) and
# subscriptions/listen (`_subscriptions`, from `_handlers_listen`), and visibility rules (`_visibility`:
# ``include_tags``/``exclude_tags``, the first `enable` or `disable`).

__all__ = ["Server", "DEFAULT_LIST_TTL_MS"]


#: A function being registered: the decorators hand it back unchanged, with its own type.
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound="Middleware")


class Server(ContentRegistry):
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
        include_tags: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
        storage: KeyValueStore | str | None = None,
    ) -> None:
        settings = ServerSettings.read(  # an argument wins, then a WIREMCP_* variable, then the default
            list_ttl_ms=list_ttl_ms, cache_scope=cache_scope, page_size=page_size, state_keys=state_keys,
            state_ttl=state_ttl, max_subscriptions=max_subscriptions, legacy=legacy, legacy_log_level=legacy_log_level,
            threads=threads, mask_errors=mask_errors, log_level=log_level,
            client_request_timeout=client_request_timeout, shutdown_grace=shutdown_grace,
        )
        apply_log_level(settings.log_level)
        self.name, self.version, self.instructions = name, version, instructions
        # The settings a WIREMCP_* variable may set (each documented in `ServerSettings`).
        self.list_ttl_ms, self.cache_scope, self.page_size = settings.list_ttl_ms, settings.cache_scope, settings.page_size
        self.legacy, self.legacy_log_level = settings.legacy, settings.legacy_log_level
        self.max_subscriptions, self.mask_errors = settings.max_subscriptions, settings.mask_errors
        self.client_request_timeout, self.shutdown_grace = settings.client_request_timeout, settings.shutdown_grace
        self.supported_versions: tuple[str, ...] = MODERN_VERSIONS
        info: dict[str, Any] = {"name": name, "version": version, **({"title": title} if title else {})}
        self.server_info = info
        # Shared by every result; never mutated after this point.
        self._result_meta: dict[str, Any] | None = {SERVER_INFO: info} if server_info_in_results else None
        #: The tools served now, by name (what the engine reads; `tools` is every registered one).
        self._tools: dict[str, Tool] = {}
        if include_tags is not None or exclude_tags is not None:  # serve a subset (see _visibility)
            self.__dict__["_visibility"] = _rules(self, include_tags, exclude_tags)
        #: The request engine (`_engine`): the method table, reading this registry. Resources,
        #: templates, prompts, completers (`_resources`, `_prompts`, `_completers`) are made on first use.
        self._engine = Engine(self)
        # Multi round-trip requests: sealed requestState (see _mrtr, protocol/state).
        self.state_sealer = StateSealer(settings.state_keys, ttl=settings.state_ttl)
        #: Where shared state lives (see _backend, wiremcp.backends): this process, or Redis.
        self.backend = choose_backend(backend, bus, self.state_sealer.configured)
        # subscriptions/listen: change events, fanned out through the backend's bus.
        self.bus: ChangeBus = self.backend.bus
        #: A ``wiremcp.auth.server.ResourceServer``: served over HTTP, every request then needs
        #: an access token (`MCPApp` reads it); stdio ignores it (basic/authorization/).
        self.auth = auth
        #: Worker threads for plain ``def`` handlers (see _workers); ``threads`` of them at most.
        self.workers = Workers(settings.threads)
        #: Setup around serving, entered once per process by the transports (see _lifespan);
        #: ``async with server.lifespan as value``. What it yields is ``ctx.lifespan``.
        self.lifespan = Lifespan(self, with_backend(self.backend, lifespan))
        #: Middleware (_middleware) and observers (protocol.observers), fixed by `freeze` (_pipeline).
        self._stages = Stages()
        #: Whether OpenTelemetry spans and metrics are made (the argument, else WIREMCP_OTEL / OTEL_*; _telemetry).
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
        #: Lifespan-scoped dependency values (`_depends`): made by the first tool that needs one.
        self._dependencies: Resources | None = None
        #: Extensions this server declares, identifier -> settings (extensions/overview.mdx); see `declare_extension`.
        self._extensions: dict[str, dict[str, Any]] = {}
        #: Tasks (see _tasks): None until a tool may become a task (``task=`` other than "never").
        self.tasks: Tasks | None = None
        self._task_options = task_options(
            self.backend, task_store, task_ttl_ms, task_poll_interval_ms, max_tasks, max_tasks_per_owner, task_max_ttl_ms
        )
        self._storage_spec = _storage_spec(storage)  # `storage` makes the store on first use (docs/state.md)

    @cached_property
    def storage(self) -> KeyValueStore:
        """The server's key-value store (docs/state.md), made on first use: what ``storage=`` named, else Redis on
        a Redis backend, else memory (this process only). ``ctx.session_state`` keeps its keys here."""
        from ._state import choose_storage  # the state modules load only for a server that uses them

        return choose_storage(self, self._storage_spec)

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
        tags: Iterable[str] | None = None,
        inline: bool = False,
        ui: str | None = None,
        visibility: Visibility | Iterable[Visibility] | None = None,
        task: TaskMode = "never",
    ) -> Callable[[F], F]: ...

    def tool(self, name: str | F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Decorator: register a plain or async function as a tool; returns it unchanged.

        ``@server.tool``, ``@server.tool()`` and ``@server.tool("name", ...)``
        all work. ``output_schema`` publishes an explicit ``outputSchema``;
        ``structured_output=False`` turns off the one made from the return
        annotation, ``True`` requires one (see `wiremcp.server._tools`).
        ``scopes`` are the OAuth scopes a caller's token needs (see `_context`).
        ``tags`` name groups the tool belongs to: `enable` and `disable` switch
        tools by tag, ``Server(include_tags=..., exclude_tags=...)`` serves a
        subset, and the listed tool shows them in ``_meta["io.wiremcp/tags"]``.
        A plain function runs in a worker thread; ``inline=True`` keeps a
        microsecond-scale one on the event loop (see `_workers`).
        MCP Apps (see `wiremcp.server._apps`): ``ui="ui://..."`` shows the
        tool's results in that UI resource; ``visibility="app"`` makes it a
        tool for the views only (``"model"``, ``"app"`` or both; default both).
        ``task`` says whether a call may become a task (docs/tasks.md):
        ``"never"`` (the default), ``"auto"``, ``"always"``, or a function of
        the arguments deciding per call.
        """
        if callable(name):  # used bare: the function came as `name`
            self.add_tool(name, ToolOptions(**options))
            return name
        check_name("tool", name)
        chosen = ToolOptions(name=name, **options)

        def register(fn: F) -> F:
            check_decorated("tool", fn)
            self.add_tool(fn, chosen)
            return fn

        return register

    def add_tool(self, fn: Callable[..., Any], options: ToolOptions | None = None, /, **keywords: Any) -> Tool:
        """Register ``fn`` as a tool and return it; ValueError if the name is taken.

        The options are a `ToolOptions` or the keywords of `tool`.
        """
        try:
            tool = Tool(fn, options, **keywords)
        except (TypeError, ValueError) as exc:  # told at the user's def, without our frames (`_definition`)
            from ._definition import at_def  # only for a registration that fails

            raise at_def(fn, exc) from None
        return self._register(tool)

    def add_transformed(
        self,
        source: Tool | str,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        arguments: dict[str, Arg] | None = None,
        output: Output | None = None,
        output_schema: dict[str, Any] | None = None,
        replace: bool = False,
    ) -> TransformedTool | None:
        """Register a tool ``name`` derived from ``source`` (docs/transform.md, `wiremcp.server.transform`).

        ``source`` is a `Tool` or the name of one: a tool of this server
        (mounted ones included), or, on a server that forwards
        (``wiremcp.proxy``), a tool of the upstream. ``arguments`` maps a
        source argument to its `Arg` (``rename``, ``description``,
        ``default``, ``hide``); ``title``/``description`` replace the
        source's; ``output`` receives the source's result (a `ToolResult`)
        and returns the derived tool's (``output_schema``, else its return
        annotation, publishes an ``outputSchema``). ``replace=True`` takes the
        source off this server's list. Returns the derived tool, or None for a
        forwarded source (made when the upstream's list is read).
        """
        from ._options import TransformOptions
        from ._transform import install

        chosen = TransformOptions(
            name=name, title=title, description=description, arguments=arguments, output=output,
            output_schema=output_schema, replace=replace,
        )
        return install(self, source, chosen)

    def _register(self, tool: Tool) -> Tool:
        """Add a made tool to the registry, announce it and apply what it needs (MCP Apps, tasks, dependencies)."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if tool.name in self._tools or (visibility is not None and tool.name in visibility.tools):
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if tool.depends is not None:
            tool.depends.bind(self)  # its lifespan-scoped dependencies open with this server's lifespan (_depends)
        if tool.ui_uri is not None or tool.app_only:
            self._extensions.setdefault(UI_EXTENSION, {})  # MCP Apps, opted in (see _apps)
        if visibility is None:
            self._tools[tool.name] = tool
            self._engine.tools.forget()
        else:  # registered; served if the rules let it through
            visibility.tools[tool.name] = tool
            visibility.refresh("tool")
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
            self._engine.add_tasks(tasks)
        return self.tasks

    def remove_tool(self, name: str) -> None:
        """Unregister the tool ``name`` (KeyError if there is none) and announce that the tool list changed."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        if visibility is None:
            del self._tools[name]
        else:
            del visibility.tools[name]
            visibility.forget("tool", name)
            visibility.refresh("tool")
        self._engine.tools.forget()
        self.notify_tools_changed()

    @property
    def tools(self) -> dict[str, Tool]:
        """The registered tools by name, in registration order (a copy), served now or not (see `enable`)."""
        visibility: VisibilityRules | None = self.__dict__.get("_visibility")
        return dict(self._tools if visibility is None else visibility.tools)

    def get_tool(self, name: str) -> Tool | None:
        """The tool served under ``name``, or None (no copy: for hot paths); a disabled one is None."""
        return self._tools.get(name)

    # -- visibility: tags, enable, disable (see _visibility) --------------------------

    @cached_property
    def _visibility(self) -> VisibilityRules:
        return _rules(self)  # on the first enable or disable: a server without rules never loads _visibility

    def enable(self, name: str | None = None, /, *, tags: Iterable[str] | None = None, kind: Kind | None = None) -> None:
        """Serve again the component ``name``, or every component with one of ``tags`` (see `disable`).

        ``name`` is a tool's or a prompt's name, a resource's URI or URI
        template; ``kind`` ("tool", "prompt", "resource") says which when a
        tool and a prompt share it. KeyError when nothing of that name is
        registered; ValueError for a component outside the subset the server
        serves (``include_tags``, ``exclude_tags``). The latest `enable` or
        `disable` naming a component, by name or by one of its tags, decides.
        """
        self._visibility.switch(True, name, tags, kind)

    def disable(self, name: str | None = None, /, *, tags: Iterable[str] | None = None, kind: Kind | None = None) -> None:
        """Stop serving the component ``name``, or every component with one of ``tags`` (registered later too).

        A disabled component is in no list and a request for it gets the
        error of an unknown one; the lists that changed are announced
        (``notifications/tools/list_changed``...) in both eras. `enable` undoes it.
        """
        self._visibility.switch(False, name, tags, kind)

    def capabilities(self) -> dict[str, Any]:
        """The capabilities the server declares: each feature while anything of it is registered, and its extensions."""
        return self._engine.capabilities()

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
        return self._stages.built or self._stages.build(self, self._engine.dispatch, self._engine.dispatch_in_session)

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
        self._engine.offer()
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
                self._engine.offer()
                return
        raise KeyError(namespace)

    # -- handling -----------------------------------------------------------

    def handle(self, request: Request, emit: Emit | None = None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The result of one request, or an awaitable of it; raises `JSONRPCError`. Through the pipeline (`freeze`)."""
        return (self._stages.built or self.freeze()).handle(request, emit)

    # -- legacy sessions (2025-11-25; see _legacy) -----------------------------

    def open_session(self, send_request: SendRequest, notify: Notify, *, session_id: str | None = None) -> LegacySession:
        """A new legacy session for a transport that received ``initialize``."""
        return self._engine.open_session(send_request, notify, session_id)

    def legacy_capabilities(self) -> dict[str, Any]:
        """Capabilities as a 2025-11-25 ``initialize`` result states them."""
        return self._engine.legacy_capabilities()

    def handle_in_session(
        self, request: Request, params: dict[str, Any], meta: RequestMeta, emit: Emit | None
    ) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """A request of a legacy session: same handlers, fields from the session; through the pipeline."""
        return (self._stages.built or self.freeze()).handle_in_session(request, params, meta, emit)

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with the server's shared ``_meta`` (`Engine.complete`)."""
        return self._engine.complete(result)


def _rules(server: Server, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None) -> VisibilityRules:
    """The server's visibility rules (`_visibility`, imported now: only a server that has rules needs it)."""
    from ._visibility import VisibilityRules

    return VisibilityRules(server, include, exclude)


def _storage_spec(storage: Any) -> Any:
    """``storage=`` when it may name a store (checked now; the store is made on first use), TypeError otherwise."""
    if not (storage is None or isinstance(storage, str) or callable(getattr(storage, "get", None))):
        raise TypeError(f"storage= is a KeyValueStore or a name (memory, sqlite[:PATH], redis[://...]), not {storage!r}")
    return storage


def _sqlite_store() -> TaskStore:
    """The embedded durable store (`_tasks._sqlite`); sqlite3 is imported when the first task needs it."""
    from ._tasks._sqlite import SQLiteTaskStore

    return SQLiteTaskStore()
