"""`Client`: the asyncio face of `ClientProtocol`, one per server connection, any transport.

Everything MCP decides is the protocol object's (`_protocol`: correlation,
``_meta``, the era, MRTR steps, caching, routing, replies to the server).
The asyncio side is split by what it holds:

* `Client` (here): the public surface: the constructors, the state the
  protocol negotiated, the lifecycle, and one method per MCP request; nothing
  else is public, and the transport never sees this object;
* `_calls`: the rules of a call (version retry, MRTR rounds, the cache,
  pages, tools/call and tasks);
* `_driver`: the machinery (a future per request, one deadline timer per
  connection, the one retry of a request never sent, the protocol's events
  acted on, the answers to a legacy server's requests, observers);
* `_receiver`: what the transport calls, and the tag each request carries;
* `_negotiate`: the I/O of the era probe (``server/discover`` with
  ``probe_timeout``, then ``initialize`` when the protocol says legacy);
* `_settings`: what the constructor's callbacks declare.

`restart` (or `connect` after close) opens a fresh transport from
``transport_factory`` with a fresh protocol object, keeping the `EraCache`.

Tasks (`_tasks`, `_task_handle`): with ``tasks=True`` (default ``False``:
nothing on the wire changes) the client declares the tasks extension to
2026-07-28 servers and augments 2025-11-25 ``tools/call`` requests where the
server and the tool allow it; ``call_tool`` then follows a task the server
makes to its end, or hands back its `TaskHandle` with ``task=True``; task
status notifications go to the handles following that task.

Per-call options travel as one `CallOptions`; every call method also takes
its fields as keywords (``timeout=``, ``on_progress=``, ``on_log=``,
``log_level=``, ``meta=``), folded into one object where the call starts.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Callable, Literal, Mapping, Unpack, overload

from ..protocol import MODERN_VERSIONS, Era, methods
from ..protocol.observers import Observer, check_observer
from ._calls import Calls
from ._eras import EraCache, EraChoice
from ._errors import ConnectionClosed
from ._mrtr import check_complete
from ._observing import clock, session_closed, session_opened
from ._options import CallKeywords, CallOptions
from ._protocol import DEFAULT_MAX_INPUT_ROUNDS, ClientProtocol
from ._receiver import Callback
from ._results import CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, Page, ReadResourceResult
from ._settings import client_settings
from ._negotiate import negotiate_era
from ._subscription import Subscription
from ._task_handle import TaskHandle
from ._tasks import TaskState
from ._telemetry import wanted as telemetry_wanted
from ._transport import ClientTransport

__all__ = ["Client", "DEFAULT_TIMEOUT", "DEFAULT_PROBE_TIMEOUT", "DEFAULT_MAX_INPUT_ROUNDS", "DEFAULT_CONNECT_RETRY_DELAY"]

#: Seconds a request may take before it is cancelled, unless the call says otherwise.
DEFAULT_TIMEOUT = 60.0
#: Seconds to wait for the ``server/discover`` probe before deciding the server
#: is legacy (stdio.mdx: "does not respond within a reasonable timeout").
#: Long enough for a slow interpreter to start, short enough not to stall a
#: silent legacy server's user for long.
DEFAULT_PROBE_TIMEOUT = 10.0

#: Seconds before a request that was never sent (`NotSent`: no connection
#: could be made) is sent once more: a server restarting has a moment to listen.
DEFAULT_CONNECT_RETRY_DELAY = 0.5


class Client(Calls):
    """An MCP client over one transport; use it as an async context manager.

        async with Client.stdio("python", ["server.py"]) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"text": "hi"})
            print(result.text)

    Callbacks: ``elicitation``, ``sampling`` and ``roots`` answer the server's
    requests for input (``async def fn(params) -> result``; ``roots`` may also
    be a plain list of Root objects); configuring one declares the matching
    client capability. ``on_log(params)`` receives log messages no single
    call claims, ``on_notification(notification)`` every other notification
    that no subscription claims, and ``on_wire(direction, data)`` each raw
    envelope sent (``"send"``) or received (``"recv"``). ``eras`` is where
    era decisions are remembered (default: a fresh `EraCache` for this
    client; pass one to several clients to share them). ``tasks``: take part
    in tasks (default ``False``): declare the ``io.modelcontextprotocol/tasks``
    extension to 2026-07-28 servers, augment 2025-11-25 tool calls the server
    allows (see `call_tool`).
    """

    def __init__(
        self,
        transport: ClientTransport,
        *,
        name: str = "wiremcp",
        version: str | None = None,
        client_info: dict[str, Any] | None = None,
        elicitation: Callback | None = None,
        sampling: Callback | None = None,
        roots: Callback | list[dict[str, Any]] | None = None,
        capabilities: dict[str, Any] | None = None,
        era: EraChoice = "auto",
        protocol_version: str = MODERN_VERSIONS[0],
        eras: EraCache | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        cache: bool = True,
        on_log: Callback | None = None,
        on_notification: Callback | None = None,
        on_wire: Callable[[str, bytes], None] | None = None,
        connect_retry_delay: float | None = DEFAULT_CONNECT_RETRY_DELAY,
        transport_factory: Callable[[], ClientTransport] | None = None,
        tasks: bool = False,
        telemetry: bool | Mapping[str, Any] | None = None,
    ) -> None:
        self.transport = transport
        inputs, settings = client_settings(
            name=name, version=version, client_info=client_info, elicitation=elicitation, sampling=sampling,
            roots=roots, capabilities=capabilities, era=era, protocol_version=protocol_version, cache=cache,
            max_input_rounds=max_input_rounds, tasks=tasks,
        )
        super().__init__(settings, inputs, eras, transport_factory)
        #: Seconds before the one retry of a request that was never sent (`NotSent`); ``None``: no retry.
        self.connect_retry_delay = connect_retry_delay
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.on_log = on_log
        self.on_notification = on_notification
        self.on_wire = on_wire
        # OpenTelemetry (see _telemetry): decided once, here; off, nothing is imported.
        if telemetry_wanted(telemetry):
            from ._telemetry import ClientTelemetry, providers

            self.add_observer(ClientTelemetry(self, **providers(telemetry)))

    def add_observer(self, observer: Observer) -> Observer:
        """Tell ``observer`` about every request, notification and 2025-11-25 session from now on."""
        self._observers.append(check_observer(observer))
        return observer

    # -- constructors ---------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: list[str] | tuple[str, ...] = (),
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        **options: Any,
    ) -> Client:
        """A client for a server launched as a subprocess speaking stdio (transports/stdio.mdx)."""
        from ..transports.stdio.client import StdioTransport

        def factory() -> ClientTransport:
            return StdioTransport(command, list(args), env=env, cwd=cwd, on_stderr=on_stderr)

        return cls(factory(), transport_factory=factory, **options)

    @classmethod
    def memory(cls, server: Any, **options: Any) -> Client:
        """A client for a `wiremcp.Server` in this process, over the real newline framing."""
        from ..transports.memory import MemoryTransport

        def factory() -> ClientTransport:
            return MemoryTransport(server)

        return cls(factory(), transport_factory=factory, **options)

    @classmethod
    def http(cls, url: str, *, headers: dict[str, str] | None = None, auth: Any = None, **options: Any) -> Client:
        """A client for a Streamable HTTP endpoint (transports/streamable-http.mdx).

        ``auth``: an object with ``headers(method, url)`` and ``on_response(status, headers, url)``,
        e.g. `wiremcp.auth.OAuthClient` (basic/authorization/). The authorization a 401 starts runs
        inside the request that got it, so with ``auth`` the era probe waits as long as any request
        (``probe_timeout`` defaults to ``timeout``) instead of taking a login for a silent server.
        """
        from ..transports.http.client import HTTPTransport

        if auth is not None and "probe_timeout" not in options:
            options["probe_timeout"] = options.get("timeout", DEFAULT_TIMEOUT)

        def factory() -> ClientTransport:
            return HTTPTransport(url, headers=headers, auth=auth)

        return cls(factory(), transport_factory=factory, **options)

    # -- state ----------------------------------------------------------------

    @property
    def protocol(self) -> ClientProtocol[Any]:
        """The sans-I/O state of this connection."""
        return self._proto

    @property
    def era(self) -> Era | None:
        """The era in use: ``"modern"`` (2026-07-28) or ``"legacy"`` (2025-11-25); None before it is known."""
        return self._proto.era

    @property
    def protocol_version(self) -> str | None:
        """The protocol version in use (``"2026-07-28"`` or ``"2025-11-25"``), or None before it is known."""
        return self._proto.protocol_version

    @property
    def eras(self) -> EraCache:
        """The `EraCache` remembering each server's era; pass the same one to several clients to probe a server once."""
        return self._proto.eras

    @property
    def client_info(self) -> dict[str, Any]:
        """The ``clientInfo`` this client sends (``name``, ``version``, ...)."""
        return self._proto.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities this client declares (``elicitation``, ``sampling``, ``roots``, extensions), as sent."""
        return self._proto.client_capabilities

    @property
    def max_input_rounds(self) -> int:
        """How many MRTR rounds (``input_required`` results) one call may take before it fails."""
        return self._proto.max_input_rounds

    @property
    def tool_definitions(self) -> dict[str, dict[str, Any]]:
        """Tool definitions from the latest tools/list pages, by name."""
        return self._proto.tool_definitions

    @property
    def server(self) -> DiscoverResult | None:
        """What the server said about itself: the DiscoverResult (or legacy InitializeResult)."""
        return self._proto.server

    @property
    def server_info(self) -> dict[str, Any] | None:
        """The server's ``serverInfo`` (``name``, ``version``, ...), or None before the server described itself."""
        server = self._proto.server
        return server.server_info if server is not None else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        """The capabilities the server declared (``tools``, ``prompts``, ...); ``{}`` before it said."""
        server = self._proto.server
        return server.capabilities if server is not None else {}

    @property
    def in_flight(self) -> int:
        """How many requests of this client await their response."""
        return self._proto.in_flight

    # -- lifecycle ------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Open the transport and decide the era (probe, or ``initialize`` for legacy).

        On a client that was closed (or whose server went away), connect again
        over a fresh transport: see `restart`.
        """
        if self._opened:
            if self._proto.closed is None:
                return
            self._renew()
        self._loop = asyncio.get_running_loop()
        self._opened = True
        opened_at = clock()
        await self.transport.open(self._receiver)
        try:
            await self._negotiate_era()
        except BaseException:
            await self.aclose()
            raise
        if self._observers and self._proto.era is Era.LEGACY:  # a 2025-11-25 session is open
            self._session = session_opened(self, self._observers, opened_at)

    async def _negotiate_era(self) -> None:
        """stdio.mdx and streamable-http.mdx, Backward Compatibility: the I/O of `Negotiation` (`_negotiate`)."""
        await negotiate_era(self)

    async def restart(self) -> None:
        """Close this connection and open a new one made the same way (stdio: a new server process).

        What was in flight fails with `ConnectionClosed`; open subscriptions
        end. The new connection starts from scratch (new ids, an empty result
        cache, tool definitions read again) except for the `EraCache`, which
        is kept (versioning.mdx allows reusing the era across restarts of the
        same server configuration). ``await client.aclose(); await
        client.connect()`` does the same. Needs a transport factory: the
        ``stdio``, ``http`` and ``memory`` constructors set one;
        ``Client(transport, transport_factory=...)`` otherwise.
        """
        await self.aclose()
        await self.connect()

    async def aclose(self) -> None:
        """Fail what is in flight with `ConnectionClosed` and close the transport."""
        self._lost(ConnectionClosed("the client was closed"))
        try:
            await self.transport.aclose()
        finally:
            session, self._session = self._session, None
            if session is not None:  # a 2025-11-25 session ends (once)
                session_closed(self._observers, session)

    # -- requests -------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        self._write(self._proto.notification(method, params))

    async def request(
        self, method: str, params: dict[str, Any] | None = None, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]
    ) -> dict[str, Any]:
        """One request, its raw result dict. Adds ``_meta``; raises `RemoteError` for an error reply.

        ``on_progress(progress, total, message)`` receives the request's
        progress notifications; ``on_log(params)`` its log messages (the
        request asks for them at ``log_level``, default ``"debug"``). ``meta``
        adds keys to ``_meta`` (e.g. ``traceparent``).
        """
        return await self._request(method, params, CallOptions.build(options, keywords))

    async def call(
        self, method: str, params: dict[str, Any] | None = None, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]
    ) -> dict[str, Any]:
        """A request through to its complete result: `request` plus the ``resultType`` rules and MRTR."""
        return (await self._call(method, params, CallOptions.build(options, keywords)))[0]

    def invalidate(self, *methods_: str) -> None:
        """Drop cached results of these methods (all cached results when none are named)."""
        self._proto.cache.invalidate(*methods_)

    # -- the MCP surface ----------------------------------------------------------

    async def discover(self, *, refresh: bool = False) -> DiscoverResult:
        """server/discover (server/discover.mdx); in the legacy era, the initialize result."""
        proto = self._proto
        if proto.era is Era.LEGACY:
            assert proto.server is not None
            return proto.server
        result = DiscoverResult(await self._cached(methods.DISCOVER, {}, refresh))
        proto.server = result
        return result

    async def ping(self, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]) -> None:
        """Check the server answers: ``ping`` (legacy) or an uncached ``server/discover`` (modern, where ping was removed)."""
        method = "ping" if self._proto.era is Era.LEGACY else methods.DISCOVER
        await self._request(method, None, CallOptions.build(options, keywords))

    async def list_page(self, method: str, cursor: str | None = None, *, refresh: bool = False) -> Page:
        """One page of ``tools/list``, ``prompts/list``, ``resources/list`` or ``resources/templates/list``."""
        return await self._page(method, cursor, refresh)

    def iter_tools(self, *, refresh: bool = False) -> AsyncIterator[dict[str, Any]]:
        """Every tool definition, page after page (server/utilities/pagination.mdx)."""
        return self._iter(methods.TOOLS_LIST, refresh)

    async def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """Every tool of ``tools/list``, all pages; ``refresh=True`` skips the cached list (server/tools.mdx)."""
        return [t async for t in self._iter(methods.TOOLS_LIST, refresh)]

    def iter_resources(self, *, refresh: bool = False) -> AsyncIterator[dict[str, Any]]:
        """Every resource of ``resources/list``, page after page (server/utilities/pagination.mdx)."""
        return self._iter(methods.RESOURCES_LIST, refresh)

    async def list_resources(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """Every resource of ``resources/list``, all pages; ``refresh=True`` skips the cached list."""
        return [r async for r in self._iter(methods.RESOURCES_LIST, refresh)]

    async def list_resource_templates(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """Every template of ``resources/templates/list``, all pages; ``refresh=True`` skips the cached list."""
        return [r async for r in self._iter(methods.RESOURCES_TEMPLATES_LIST, refresh)]

    def iter_prompts(self, *, refresh: bool = False) -> AsyncIterator[dict[str, Any]]:
        """Every prompt of ``prompts/list``, page after page (server/prompts.mdx, server/utilities/pagination.mdx)."""
        return self._iter(methods.PROMPTS_LIST, refresh)

    async def list_prompts(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """Every prompt of ``prompts/list``, all pages; ``refresh=True`` skips the cached list (server/prompts.mdx)."""
        return [p async for p in self._iter(methods.PROMPTS_LIST, refresh)]

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        options: CallOptions | None = None,
        *,
        task: Literal[False] = False,
        task_ttl_ms: int | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        options: CallOptions | None = None,
        *,
        task: Literal[True],
        task_ttl_ms: int | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> CallToolResult | TaskHandle: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        options: CallOptions | None = None,
        *,
        task: bool = False,
        task_ttl_ms: int | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> CallToolResult | TaskHandle:
        """tools/call (server/tools.mdx). A tool execution error is a result with ``is_error``, not an exception.

        On a client made with ``tasks=True`` the server may run the call as a
        task. By default ``call_tool`` then follows the task to its end
        (`TaskHandle.result`) and returns the tool's result as usual; with
        ``task=True`` it returns the `TaskHandle` as soon as the server
        created the task (or the `CallToolResult`, if the server answered at
        once). Against a 2025-11-25 server the call is augmented with
        ``params.task`` (``ttl``: ``task_ttl_ms``) when the server declares
        ``tasks.requests.tools.call`` and the tool's ``execution.taskSupport``
        is ``required``, or ``optional`` and ``task=True`` (tasks.mdx,
        "Tool-Level Negotiation").
        """
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        opts = CallOptions.build(options, keywords)
        raw, created = await self._tool_call(name, params, opts, task, task_ttl_ms)
        if created is None:
            return CallToolResult(raw)
        handle = TaskHandle(self, created.id, created, methods.TOOLS_CALL)
        if task:
            return handle
        return await handle.result(options=opts)


    def task(self, task_id: str, method: str = methods.TOOLS_CALL) -> TaskHandle:
        """A handle on a task known by its id alone, e.g. one stored before a restart; nothing is sent yet."""
        return TaskHandle(self, task_id, None, method)

    async def list_tasks(self, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]) -> list[TaskState]:
        """``tasks/list``, every page (2025-11-25 servers only: the tasks extension has no list)."""
        return await self._list_tasks(CallOptions.build(options, keywords))

    async def read_resource(
        self, uri: str, options: CallOptions | None = None, *, refresh: bool = False, **keywords: Unpack[CallKeywords]
    ) -> ReadResourceResult:
        """resources/read (server/resources.mdx); cached for the result's ``ttlMs``."""
        params = {"uri": uri}
        cache = self._proto.cache
        if not refresh:
            hit = cache.get(methods.RESOURCES_READ, params, time.monotonic())
            if hit is not None:
                return ReadResourceResult(hit)
        result, rounds = await self._call(methods.RESOURCES_READ, params, CallOptions.build(options, keywords))
        if rounds == 0:  # an MRTR retry's result is never cached (caching.mdx, Cache Key)
            cache.put(methods.RESOURCES_READ, params, result, time.monotonic())
        return ReadResourceResult(result)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]
    ) -> GetPromptResult:
        """prompts/get (server/prompts.mdx)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return GetPromptResult((await self._call(methods.PROMPTS_GET, params, CallOptions.build(options, keywords)))[0])

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        options: CallOptions | None = None,
        *,
        context: dict[str, str] | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> CompleteResult:
        """completion/complete (server/utilities/completion.mdx); ``ref`` is a prompt or template reference."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        result = await self._request(methods.COMPLETION_COMPLETE, params, CallOptions.build(options, keywords))
        return CompleteResult(check_complete(methods.COMPLETION_COMPLETE, result))

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources_list: bool = False,
        resources: list[str] | None = None,
        tasks: list[str] | None = None,
    ) -> Subscription:
        """subscriptions/listen (patterns/subscriptions.mdx), as an async context manager and iterator.

            async with client.listen(tools=True) as sub:
                async for note in sub:           # (method, params) pairs
                    ...
        """
        filter_: dict[str, Any] = {}
        if tools:
            filter_["toolsListChanged"] = True
        if prompts:
            filter_["promptsListChanged"] = True
        if resources_list:
            filter_["resourcesListChanged"] = True
        if resources:
            filter_["resourceSubscriptions"] = list(resources)
        if tasks:
            filter_["taskIds"] = list(tasks)  # tasks.md, "Task Status Notifications"
        return Subscription(self, filter_)
