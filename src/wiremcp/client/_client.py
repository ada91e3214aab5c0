"""`Client`: the asyncio face of `ClientProtocol`, one per server connection, any transport.

Everything MCP decides is the protocol object's (`_protocol`: correlation,
``_meta``, the era, MRTR steps, caching, routing, replies to the server).
What is left here is what needs an event loop:

* a future per request, settled from the protocol's events; cancelling the
  awaiting task cancels the request on the wire;
* one timer per connection, at the earliest deadline in flight (not a timer
  per call), which feeds `ClientProtocol.expire`;
* calling user callbacks (``elicitation``, ``sampling``, ``roots`` for input;
  ``on_progress``, ``on_log``, ``on_notification`` for notifications); an
  async callback for a notification becomes a task, and a failing one is
  logged, never raised into the reader;
* the era probe's I/O (`_settle`): ``server/discover`` with ``probe_timeout``
  (on stdio counted from the server's first output, and a late answer still
  taken), then ``initialize`` when the protocol says legacy (a probe timeout
  is legacy on stdio and a `RequestTimeout` over HTTP);
* the transport's callbacks, which go to a private `_Receiver`, so that the
  object users hold has only the MCP surface.
* faults: a request that never left this process (`NotSent`: the
  connection could not be made) is sent once more after
  ``connect_retry_delay``, with the same deadline; nothing else is ever
  sent again (it may have run). `restart` (or `connect` after close) opens
  a fresh transport from ``transport_factory`` with a fresh protocol
  object, keeping the `EraCache`.

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
import inspect
import logging
import sys
import time
from typing import Any, AsyncIterator, Callable, Literal, Mapping, Unpack, overload

from ..protocol import MODERN_VERSIONS, Era, methods
from ..protocol.errors import HEADER_MISMATCH
from .events import (
    Abandon,
    Acknowledged,
    Event,
    Failed,
    Id,
    LogMessage,
    Notified,
    Progress,
    Send,
    ServerRequest,
    Settled,
    SubscriptionEnded,
    SubscriptionNote,
    TaskUpdate,
)
from ._eras import EraCache, EraChoice
from ._errors import ClientError, ConnectionClosed, NotSent, ProtocolViolation, RemoteError
from ._mrtr import check_complete
from ._options import CallKeywords, CallOptions
from ._protocol import DEFAULT_MAX_INPUT_ROUNDS, ClientProtocol, Outgoing
from ._settle import settle_era
from ._results import CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, Page, ReadResourceResult
from ._subscription import Subscription
from ._task_handle import TaskHandle
from ._tasks import TASKS_LIST, TaskState, augment, legacy_task_support, parse_task
from ._transport import ClientTransport
from ._telemetry import wanted as telemetry_wanted
from ._observing import clock, observe_request, observe_write, session_closed, session_opened
from ..protocol.observers import ObservedRequest, ObservedSession, Observer, check_observer

__all__ = ["Client", "DEFAULT_TIMEOUT", "DEFAULT_PROBE_TIMEOUT", "DEFAULT_MAX_INPUT_ROUNDS", "DEFAULT_CONNECT_RETRY_DELAY"]

log = logging.getLogger("wiremcp.client")

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

Callback = Callable[..., Any]

_NO_OPTIONS = CallOptions()
_PAGE_KEYS = {
    methods.TOOLS_LIST: "tools",
    methods.PROMPTS_LIST: "prompts",
    methods.RESOURCES_LIST: "resources",
    methods.RESOURCES_TEMPLATES_LIST: "resourceTemplates",
}


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def _call_back(fn: Callback, *args: Any) -> None:
    """Run a notification callback; an async one becomes a task. Its errors are logged, never raised here."""
    try:
        out = fn(*args)
        if inspect.isawaitable(out):
            asyncio.ensure_future(out).add_done_callback(_log_task_error)
    except Exception:  # noqa: BLE001 - a user callback must not break the reader
        log.exception("a notification callback failed")


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a notification callback failed", exc_info=task.exception())


class _Waiter:
    """The tag of one request: its future, its options, and its subscription if it is a listen."""

    __slots__ = ("future", "options", "subscription")

    def __init__(self, future: asyncio.Future[dict[str, Any]], options: CallOptions, subscription: Subscription | None = None) -> None:
        self.future = future
        self.options = options
        self.subscription = subscription


class _Receiver:
    """What the transport calls (the `Receiver` interface), kept off the `Client` users hold."""

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def message(self, data: bytes, origin: Any = None, status: int | None = None) -> None:
        client = self._client
        if client.on_wire is not None:
            client.on_wire("recv", data)
        client._dispatch(client._proto.receive(data, origin, status))

    def request_failed(self, id: Any, exc: BaseException) -> None:
        client = self._client
        client._dispatch(client._proto.request_failed(id, exc))

    def closed(self, exc: BaseException | None) -> None:
        self._client._lost(exc)


class Client:
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
        if client_info is None:
            if version is None:
                version = getattr(sys.modules.get("wiremcp"), "__version__", "0")
            client_info = {"name": name, "version": version}
        self._inputs: dict[str, Callback] = {}
        caps: dict[str, Any] = {}
        if elicitation is not None:
            caps["elicitation"] = {"form": {}}
            self._inputs["elicitation"] = elicitation
        if sampling is not None:
            caps["sampling"] = {}
            self._inputs["sampling"] = sampling
        if roots is not None:
            caps["roots"] = {}
            if callable(roots):
                self._inputs["roots"] = roots
            else:
                fixed = {"roots": list(roots)}
                self._inputs["roots"] = lambda params: fixed
        if capabilities:
            caps.update(capabilities)
        self._settings: dict[str, Any] = {
            "client_info": client_info,
            "capabilities": caps,
            "answers": self._inputs,
            "era": era,
            "protocol_version": protocol_version,
            "cache": cache,
            "max_input_rounds": max_input_rounds,
            "tasks": tasks,
        }
        self._proto: ClientProtocol[_Waiter] = self._new_protocol(transport, eras)
        self._transport_factory = transport_factory
        #: Seconds before the one retry of a request that was never sent (`NotSent`); ``None``: no retry.
        self.connect_retry_delay = connect_retry_delay
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.on_log = on_log
        self.on_notification = on_notification
        self.on_wire = on_wire
        self._receiver = _Receiver(self)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opened = False
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0
        self._tasks: set[asyncio.Future[None]] = set()
        #: Task handles following each task id (they get its status notifications).
        self._followers: dict[str, set[TaskHandle]] = {}
        #: Observers (protocol.observers; see _observing), and the 2025-11-25 session they were told of.
        self._observers: list[Observer] = []
        self._session: ObservedSession | None = None
        # OpenTelemetry (see _telemetry): decided once, here; off, nothing is imported.
        if telemetry_wanted(telemetry):
            from ._telemetry import ClientTelemetry, providers

            self.add_observer(ClientTelemetry(self, **providers(telemetry)))

    def add_observer(self, observer: Observer) -> Observer:
        """Tell ``observer`` about every request, notification and 2025-11-25 session from now on."""
        self._observers.append(check_observer(observer))
        return observer

    def _new_protocol(self, transport: ClientTransport, eras: EraCache | None) -> ClientProtocol[_Waiter]:
        return ClientProtocol(
            **self._settings,
            eras=eras,
            server_key=transport.cache_key,
            cancel_by_notification=transport.cancel_by_notification,
            mirrors_headers=bool(getattr(transport, "mirrors_headers", False)),
            silence_means_legacy=bool(getattr(transport, "silence_means_legacy", transport.cancel_by_notification)),
        )

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
        """Open the transport and settle the era (probe, or ``initialize`` for legacy).

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
            await self._settle_era()
        except BaseException:
            await self.aclose()
            raise
        if self._observers and self._proto.era is Era.LEGACY:  # a 2025-11-25 session is open
            self._session = session_opened(self, self._observers, opened_at)

    async def _settle_era(self) -> None:
        """stdio.mdx and streamable-http.mdx, Backward Compatibility: the I/O of `Negotiation` (`_settle`)."""
        await settle_era(self)

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

    def _renew(self) -> None:
        if self._transport_factory is None:
            raise ClientError(
                "this client is closed and cannot reconnect: it has no transport_factory "
                "(Client.stdio, Client.http and Client.memory set one)"
            )
        self.transport = self._transport_factory()
        self._proto = self._new_protocol(self.transport, self._proto.eras)
        self._opened = False
        self._deadline_timer = None

    async def aclose(self) -> None:
        """Fail what is in flight with `ConnectionClosed` and close the transport."""
        self._lost(ConnectionClosed("the client was closed"))
        try:
            await self.transport.aclose()
        finally:
            session, self._session = self._session, None
            if session is not None:  # a 2025-11-25 session ends (once)
                session_closed(self._observers, session)

    def _lost(self, exc: BaseException | None) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        self._dispatch(self._proto.connection_lost(exc))

    # -- sending --------------------------------------------------------------

    def _connected(self) -> asyncio.AbstractEventLoop:
        if self._proto.closed is not None:
            raise ConnectionClosed(str(self._proto.closed))
        if self._loop is None:
            raise ClientError("the client is not connected; use 'async with client' or 'await client.connect()'")
        return self._loop

    def _transmit(self, out: Outgoing, deadline: float | None) -> Id:
        if self.on_wire is not None:
            self.on_wire("send", out.data)
        try:
            self.transport.send(out.data, id=out.id, method=out.method, params=out.params, headers=out.headers)
        except BaseException:
            self._proto.forget(out.id)
            raise
        if deadline is not None:
            self._arm(deadline)
        return out.id

    async def _roundtrip(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, *,
        cancel_on_timeout: bool = True, event: ObservedRequest | None = None,
    ) -> dict[str, Any]:
        """One request and its reply; a request that was never sent (`NotSent`) is sent once more."""
        if self._observers and event is None:  # observed: `observe_request` comes back here with its event
            return await observe_request(self, self._observers, method, params, options, cancel_on_timeout)
        deadline = options.deadline_after(self._connected().time(), self.timeout)
        try:
            return await self._attempt(method, params, options, deadline, cancel_on_timeout, event)
        except NotSent as exc:
            delay = self.connect_retry_delay
            if delay is None:
                raise
            log.warning("%s was not sent (%s); retrying once in %g s", method, exc, delay)
            await asyncio.sleep(delay)
            try:
                return await self._attempt(method, params, options, deadline, cancel_on_timeout, event)
            except NotSent as again:
                raise NotSent(f"{again} (tried twice, {delay:g} s apart)") from exc

    async def _attempt(
        self, method: str, params: dict[str, Any] | None, options: CallOptions, deadline: float | None,
        cancel_on_timeout: bool, event: ObservedRequest | None,
    ) -> dict[str, Any]:
        loop = self._connected()
        waiter = _Waiter(loop.create_future(), options)
        out = self._proto.request(method, params, waiter, options, deadline, cancel_on_timeout=cancel_on_timeout)
        if event is not None:
            event.id = out.id
        id = self._transmit(out, deadline)
        try:
            return await waiter.future
        except asyncio.CancelledError:
            self._cancel(id, "the caller cancelled the request")
            raise

    def _listen(self, subscription: Subscription) -> asyncio.Future[dict[str, Any]]:
        waiter = _Waiter(self._connected().create_future(), _NO_OPTIONS, subscription)
        subscription.id = self._transmit(self._proto.listen(subscription.filter, waiter), None)
        return waiter.future

    def _cancel(self, id: Id, reason: str) -> None:
        self._dispatch(self._proto.cancel(id, reason))

    def _write(self, data: bytes) -> None:
        if self._observers:  # a notification is observed around its write (see _observing)
            observe_write(self, self._observers, data, self._send_bytes)
        else:
            self._send_bytes(data)

    def _send_bytes(self, data: bytes) -> None:
        if self.on_wire is not None:
            self.on_wire("send", data)
        self.transport.send(data)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        self._write(self._proto.notification(method, params))

    # Timeouts: one timer for the whole connection, at the earliest deadline the
    # pending map holds (not a timer per call, created and cancelled each time).

    def _arm(self, deadline: float) -> None:
        timer = self._deadline_timer
        if timer is None or deadline < self._deadline_at:
            if timer is not None:
                timer.cancel()
            self._deadline_at = deadline
            assert self._loop is not None
            self._deadline_timer = self._loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        self._deadline_timer = None
        assert self._loop is not None
        # A timer may fire a hair early (the loop's clock resolution): allow 1 ms.
        self._dispatch(self._proto.expire(self._loop.time() + 1e-3))
        following = self._proto.next_deadline()
        if following is not None and self._proto.closed is None:
            self._arm(following)

    # -- acting on the protocol's events ----------------------------------------------

    def _dispatch(self, events: list[Event[_Waiter]]) -> None:
        for event in events:
            if type(event) is Settled:
                future = event.tag.future
                if not future.done():
                    future.set_result(event.result)
            elif type(event) is Failed:
                future = event.tag.future
                if not future.done():
                    future.set_exception(event.error)
            elif type(event) is Send:
                try:
                    self._write(event.data)
                except ClientError as exc:
                    log.debug("could not send %r: %s", event.data[:80], exc)
            elif type(event) is Abandon:
                self.transport.abandon(event.id)
            elif type(event) is Progress:
                on_progress = event.tag.options.on_progress
                if on_progress is not None:
                    _call_back(on_progress, event.progress, event.total, event.message)
            elif type(event) is LogMessage:
                target = event.tag.options.on_log if event.tag is not None else None
                if target is None:
                    target = self.on_log
                if target is not None:
                    _call_back(target, event.params)
                else:
                    log.debug("server log message: %r", event.params)
            elif type(event) is Notified:
                if self.on_notification is not None:
                    _call_back(self.on_notification, event.notification)
                else:
                    log.debug("notification %s received", event.notification.method)
            elif type(event) is Acknowledged:
                if event.tag.subscription is not None:
                    event.tag.subscription._acknowledge(event.notifications)
            elif type(event) is SubscriptionNote:
                if event.tag.subscription is not None:
                    event.tag.subscription._deliver(event.method, event.params)
            elif type(event) is SubscriptionEnded:
                if event.tag.subscription is not None:
                    event.tag.subscription._end(event.error)
            elif type(event) is TaskUpdate:
                for handle in tuple(self._followers.get(event.task.id, ())):
                    handle._notified(event.task)
            elif type(event) is ServerRequest:
                task = asyncio.ensure_future(self._answer_server(event))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _answer_server(self, request: ServerRequest) -> None:
        """Legacy era: answer a server-initiated request with the configured callback."""
        try:
            data = self._proto.answer(request.id, await self._answer_input(request.kind, request.params))
        except Exception as exc:  # noqa: BLE001 - the server is owed a reply
            log.exception("answering the server's %s failed", request.method)
            data = self._proto.answer_error(request.id, exc)
        if data is not None:
            self._dispatch([Send(data)])

    async def _answer_input(self, kind: str, params: dict[str, Any]) -> Any:
        return await _maybe_await(self._inputs[kind](params))

    # -- requests -------------------------------------------------------------------

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

    async def _request(self, method: str, params: dict[str, Any] | None, options: CallOptions) -> dict[str, Any]:
        try:
            return await self._roundtrip(method, params, options)
        except RemoteError as exc:
            if not self._proto.version_refused(exc):
                raise
            return await self._roundtrip(method, params, options)

    async def call(
        self, method: str, params: dict[str, Any] | None = None, options: CallOptions | None = None, **keywords: Unpack[CallKeywords]
    ) -> dict[str, Any]:
        """A request through to its complete result: `request` plus the ``resultType`` rules and MRTR."""
        return (await self._call(method, params, CallOptions.build(options, keywords)))[0]

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

    def invalidate(self, *methods_: str) -> None:
        """Drop cached results of these methods (all cached results when none are named)."""
        self._proto.cache.invalidate(*methods_)

    async def _cached(self, method: str, params: dict[str, Any], refresh: bool) -> dict[str, Any]:
        cache = self._proto.cache
        if not refresh:
            hit = cache.get(method, params, time.monotonic())
            if hit is not None:
                return hit
        result = check_complete(method, await self._request(method, params or None, _NO_OPTIONS))
        cache.put(method, params, result, time.monotonic())
        return result

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
            page = await self.list_page(method, cursor, refresh=refresh)
            for item in page.items:
                yield item
            cursor = page.next_cursor
            if cursor is None:
                return
            if cursor in seen:
                raise ProtocolViolation(f"{method} returned the cursor {cursor!r} twice")
            seen.add(cursor)

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
        augmented = False
        proto = self._proto
        if proto.tasks and proto.era is Era.LEGACY and "tasks" in self.server_capabilities:
            if name not in proto.tool_definitions:
                await self.list_tools()
            support = legacy_task_support(self.server_capabilities, proto.tool_definitions.get(name))
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
            await self.list_tools(refresh=True)
            raw = (await self._call(methods.TOOLS_CALL, params, opts, augmented=augmented))[0]
        created = None
        if augmented or raw.get("resultType") == "task":
            created = proto.task_created(methods.TOOLS_CALL, raw, augmented=augmented)
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
        if self._proto.era is not Era.LEGACY:
            raise ClientError("tasks/list exists only in 2025-11-25 (the tasks extension of 2026-07-28 has no list)")
        opts = CallOptions.build(options, keywords)
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

    def _follow(self, handle: TaskHandle) -> None:
        self._followers.setdefault(handle.id, set()).add(handle)

    def _unfollow(self, handle: TaskHandle) -> None:
        followers = self._followers.get(handle.id)
        if followers is not None:
            followers.discard(handle)
            if not followers:
                del self._followers[handle.id]

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

