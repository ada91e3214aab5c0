"""The host side of MCP: one `Client` per server connection, any transport.

Rules it keeps:

* **Correlation** (basic/index.mdx, "Requests"): every request gets a fresh
  integer id from `PendingRequests`; any number may be in flight, and replies
  are matched by id in whatever order they come. A reply to a request that
  was cancelled or timed out is recognised and dropped; a reply to an id
  never sent is logged and dropped.
* **Per-request metadata** (basic/index.mdx, "_meta"): in the modern era
  every request carries ``io.modelcontextprotocol/protocolVersion``,
  ``clientCapabilities`` (derived from the callbacks configured: elicitation,
  sampling, roots) and ``clientInfo``. A ``-32022`` reply whose
  ``data.supported`` names a version this client speaks makes it retry the
  request once with that version, even when it is the one just sent (the
  server refused the request, perhaps not the version) (versioning.mdx,
  "Protocol Version Negotiation").
* **Era detection** (versioning.mdx, "Backward Compatibility"; stdio.mdx,
  "Backward Compatibility"): ``era="auto"`` probes with ``server/discover``.
  A `DiscoverResult` or a recognised modern error code means modern; any
  other error, or silence for ``probe_timeout`` seconds, means legacy: the
  2025-11-25 ``initialize`` handshake follows. The outcome is cached per
  server (command line, or HTTP origin) for the life of the process.
* **Timeouts and cancellation** (patterns/cancellation.mdx): every request
  has a timeout (``timeout=None`` waits for ever). A request that times out,
  or whose awaiting task is cancelled, is cancelled on the wire:
  ``notifications/cancelled`` on a shared stream, closing its response
  stream on HTTP. A late reply is ignored.
* **Results** (basic/index.mdx, "ResultType"): an absent ``resultType`` is
  ``complete``; ``input_required`` starts the MRTR loop on the methods that
  allow it (tools/call, resources/read, prompts/get); anything else is a
  `ProtocolViolation`.
* **MRTR** (patterns/mrtr.mdx): each entry of ``inputRequests`` is answered by
  the matching callback, one after another; the same method and params are
  sent again under a new id with ``inputResponses`` and, when one came, the
  ``requestState`` string exactly as received (never one otherwise). At most
  ``max_input_rounds`` retries, then `ProtocolViolation`. A retry's result is
  never cached.
* **Request-scoped notifications**: ``notifications/progress`` goes to the
  ``on_progress`` of the request whose ``progressToken`` it names (the token
  is the request's id). ``notifications/message`` goes to the ``on_log`` of
  the request whose response stream carried it (HTTP); on a shared stream,
  where nothing names the request, to the one request in flight that asked
  for log messages, or to the client's ``on_log`` when that is ambiguous.
* **Caching** (server/utilities/caching.mdx): complete results of the
  cacheable methods are kept for ``ttlMs`` (absent or negative: not kept),
  keyed by method and params; ``list_changed`` and ``resources/updated``
  notifications invalidate the matching entries.
* **Server-to-client requests**: the modern stdio binding has none (stdio.mdx,
  "Receiving Messages"; the client must not write responses), so one that
  arrives is logged and ignored. In the legacy era the same callbacks answer
  ``elicitation/create``, ``sampling/createMessage`` and ``roots/list``, and
  ``ping`` gets ``{}``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
from collections import deque
from typing import Any, AsyncIterator, Callable, Hashable, Literal

import orjson

from ..jsonrpc import (
    MCP,
    Decoder,
    ErrorResponse,
    InvalidResponse,
    JSONRPCError,
    Notification,
    PendingRequests,
    RemoteProtocolError,
    Request,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from ..protocol import LEGACY_VERSIONS, MODERN_VERSIONS, Era, methods
from ..protocol.errors import HEADER_MISMATCH, MODERN_ERROR_CODES, UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, LOG_LEVELS, PROTOCOL_VERSION, SUBSCRIPTION_ID
from ._errors import (
    ClientError,
    ConnectionClosed,
    HTTPError,
    IncompatibleServer,
    ProtocolViolation,
    RemoteError,
    RequestTimeout,
)
from ._headers import Annotation, InvalidToolHeaders, header_annotations, request_headers
from ._results import CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, Page, ReadResourceResult
from ._transport import ClientTransport

__all__ = [
    "Client",
    "Subscription",
    "DEFAULT_TIMEOUT",
    "DEFAULT_PROBE_TIMEOUT",
    "DEFAULT_MAX_INPUT_ROUNDS",
    "forget_eras",
]

log = logging.getLogger("wiremcp.client")

#: Seconds a request may take before it is cancelled, unless the call says otherwise.
DEFAULT_TIMEOUT = 60.0
#: Seconds to wait for the ``server/discover`` probe before deciding the server
#: is legacy (stdio.mdx: "does not respond within a reasonable timeout").
#: Long enough for a slow interpreter to start, short enough not to stall a
#: silent legacy server's user for long.
DEFAULT_PROBE_TIMEOUT = 10.0
#: MRTR retries allowed for one call before giving up (patterns/mrtr.mdx lets
#: a server ask again; a bound stops a server that never completes).
DEFAULT_MAX_INPUT_ROUNDS = 8
#: Notifications a subscription holds while nobody reads them; past this the
#: oldest are dropped and counted in `Subscription.dropped`.
DEFAULT_SUBSCRIPTION_BUFFER = 1024

#: The legacy revision offered in ``initialize`` (2025-11-25 lifecycle.mdx).
LEGACY_VERSION = LEGACY_VERSIONS[0]

EraChoice = Literal["auto", "modern", "legacy"]
Callback = Callable[..., Any]

_DEFAULT: Any = object()

#: Era decided per server for the life of the process (versioning.mdx:
#: "Clients SHOULD cache the result for the lifetime of the server process
#: (stdio) or origin (HTTP)").
_ERAS: dict[Hashable, tuple[Era, str]] = {}

_MRTR_METHODS = frozenset({methods.TOOLS_CALL, methods.RESOURCES_READ, methods.PROMPTS_GET})
_LIST_CHANGED = {
    "notifications/tools/list_changed": (methods.TOOLS_LIST,),
    "notifications/prompts/list_changed": (methods.PROMPTS_LIST,),
    "notifications/resources/list_changed": (methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST),
}
_RESOURCES_UPDATED = "notifications/resources/updated"
_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_INPUT_METHODS = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def forget_eras() -> None:
    """Forget every cached era decision (the next client to each server probes again)."""
    _ERAS.clear()


def _sort_keys(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def _call_back(fn: Callback, *args: Any) -> None:
    """Run a notification callback; an async one becomes a task. Its errors are logged, never raised here."""
    try:
        out = fn(*args)
        if inspect.isawaitable(out):
            task = asyncio.ensure_future(out)
            task.add_done_callback(_log_task_error)
    except Exception:  # noqa: BLE001 - a user callback must not break the reader
        log.exception("a notification callback failed")


def _log_task_error(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a notification callback failed", exc_info=task.exception())


class _Call:
    """One request in flight: what to settle and where its notifications go."""

    __slots__ = ("future", "method", "on_progress", "on_log", "cancel_on_timeout", "raw", "subscription")

    def __init__(
        self,
        future: asyncio.Future[Any],
        method: str,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        cancel_on_timeout: bool = True,
        raw: bool = False,
    ) -> None:
        self.future = future
        self.method = method
        self.on_progress = on_progress
        self.on_log = on_log
        self.cancel_on_timeout = cancel_on_timeout
        self.raw = raw
        self.subscription: Subscription | None = None

    def settle(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def fail(self, exc: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(exc)


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
    envelope sent (``"send"``) or received (``"recv"``).
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
        timeout: float | None = DEFAULT_TIMEOUT,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        cache: bool = True,
        on_log: Callback | None = None,
        on_notification: Callback | None = None,
        on_wire: Callable[[str, bytes], None] | None = None,
    ) -> None:
        if era not in ("auto", "modern", "legacy"):
            raise ValueError("era must be 'auto', 'modern' or 'legacy'")
        if protocol_version not in MODERN_VERSIONS:
            raise ValueError(f"protocol_version must be one of {', '.join(MODERN_VERSIONS)}")
        if max_input_rounds < 0:
            raise ValueError("max_input_rounds must not be negative")
        self.transport = transport
        if client_info is None:
            if version is None:
                version = getattr(sys.modules.get("wiremcp"), "__version__", "0")
            client_info = {"name": name, "version": version}
        self.client_info = client_info
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
        self.client_capabilities = caps
        self._era_choice = era
        self._preferred = protocol_version
        self.timeout = timeout
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self.on_log = on_log
        self.on_notification = on_notification
        self.on_wire = on_wire
        self._cache_enabled = cache
        self._cache: dict[tuple[str, bytes], tuple[float, dict[str, Any]]] = {}
        self._pending: PendingRequests[_Call] = PendingRequests()
        self._decoder = Decoder(MCP)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._meta: dict[str, Any] | None = None
        self.era: Era | None = None
        self.protocol_version: str | None = None
        self._server: DiscoverResult | None = None
        self._log_calls: set[Any] = set()
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = 0.0
        self._subscriptions: dict[Any, Subscription] = {}
        self._unmatched: deque[asyncio.Future[Any]] = deque()
        self._closed: BaseException | None = None
        self._opened = False
        #: Tool definitions from the latest tools/list pages, by name (HTTP
        #: transports read x-mcp-header annotations from them).
        self.tool_definitions: dict[str, dict[str, Any]] = {}
        self._annotations: dict[str, list[Annotation]] = {}
        self._mirrors = bool(getattr(transport, "mirrors_headers", False))

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

        return cls(StdioTransport(command, list(args), env=env, cwd=cwd, on_stderr=on_stderr), **options)

    @classmethod
    def memory(cls, server: Any, **options: Any) -> Client:
        """A client for a `wiremcp.Server` in this process, over the real newline framing."""
        from ..transports.memory import MemoryTransport

        return cls(MemoryTransport(server), **options)

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

        return cls(HTTPTransport(url, headers=headers, auth=auth), **options)

    # -- lifecycle ------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Open the transport and settle the era (probe, or ``initialize`` for legacy)."""
        if self._opened:
            return
        self._loop = asyncio.get_running_loop()
        self._opened = True
        await self.transport.open(self)
        try:
            choice = self._era_choice
            if choice == "legacy":
                await self._initialize()
            elif choice == "modern":
                self._use_modern(self._preferred)
            else:
                cached = _ERAS.get(self.transport.cache_key)
                if cached is None:
                    await self._probe()
                elif cached[0] is Era.LEGACY:
                    await self._initialize()
                else:
                    self._use_modern(cached[1])
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Fail what is in flight with `ConnectionClosed` and close the transport."""
        if self._closed is None:
            self._closed = ConnectionClosed("the client was closed")
        self._fail_all(self._closed)
        await self.transport.aclose()

    @property
    def server(self) -> DiscoverResult | None:
        """What the server said about itself: the DiscoverResult (or legacy InitializeResult)."""
        return self._server

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self._server.server_info if self._server is not None else None

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self._server.capabilities if self._server is not None else {}

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    # -- era ------------------------------------------------------------------

    def _use_modern(self, version: str) -> None:
        self.era = Era.MODERN
        self.protocol_version = version
        self._meta = {
            PROTOCOL_VERSION: version,
            CLIENT_CAPABILITIES: self.client_capabilities,
            CLIENT_INFO: self.client_info,
        }

    def _remember_era(self) -> None:
        assert self.era is not None and self.protocol_version is not None
        _ERAS[self.transport.cache_key] = (self.era, self.protocol_version)

    async def _probe(self) -> None:
        """stdio.mdx, Backward Compatibility: discover, then modern or legacy."""
        self._use_modern(self._preferred)
        for attempt in range(2):
            try:
                result = await self._roundtrip(
                    methods.DISCOVER, {}, timeout=self.probe_timeout, cancel_on_timeout=False
                )
            except RequestTimeout:
                log.info("no reply to server/discover within %ss: treating the server as legacy", self.probe_timeout)
                break
            except HTTPError as exc:
                if not 400 <= exc.status < 500:
                    raise
                log.info("server/discover got HTTP %s without a modern error: treating the server as legacy", exc.status)
                break
            except RemoteError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                    version = self._pick_version(exc.data)
                    if version is not None and attempt == 0:
                        # Retry once with the version it names, even the one just sent:
                        # the server may have refused a request, not the version.
                        self._use_modern(version)
                        continue
                    if self._supports_legacy(exc.data):
                        break
                    raise IncompatibleServer(
                        f"the server supports none of this client's protocol versions "
                        f"({', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}): {exc.message}"
                    ) from exc
                if exc.code in MODERN_ERROR_CODES:
                    self._remember_era()
                    return
                log.info("server/discover failed with %s: treating the server as legacy", exc)
                break
            else:
                discovered = DiscoverResult(self._check_complete(methods.DISCOVER, result))
                versions = discovered.supported_versions
                if self.protocol_version not in versions:
                    version = next((v for v in MODERN_VERSIONS if v in versions), None)
                    if version is None:
                        if any(v in LEGACY_VERSIONS for v in versions):
                            break
                        raise IncompatibleServer(
                            f"the server supports {', '.join(versions) or 'no versions'}; "
                            f"this client speaks {', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}"
                        )
                    self._use_modern(version)
                self._server = discovered
                self._store(methods.DISCOVER, {}, result)
                self._remember_era()
                return
        else:
            raise IncompatibleServer("the server refused server/discover twice with UnsupportedProtocolVersion")
        await self._initialize()
        self._remember_era()

    @staticmethod
    def _pick_version(data: Any) -> str | None:
        supported = data.get("supported") if type(data) is dict else None
        if type(supported) is not list:
            return None
        return next((v for v in MODERN_VERSIONS if v in supported), None)

    @staticmethod
    def _supports_legacy(data: Any) -> bool:
        supported = data.get("supported") if type(data) is dict else None
        return type(supported) is list and any(v in LEGACY_VERSIONS for v in supported)

    async def _initialize(self) -> None:
        """The 2025-11-25 handshake (lifecycle.mdx, Initialization)."""
        self.era = Era.LEGACY
        self._meta = None
        self.protocol_version = LEGACY_VERSION
        params = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.client_capabilities,
            "clientInfo": self.client_info,
        }
        result = await self._roundtrip("initialize", params, timeout=self.timeout, cancel_on_timeout=False)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            raise IncompatibleServer(
                f"the server answered initialize with protocol version {version!r}; "
                f"this client speaks {', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}"
            )
        self.protocol_version = version
        self._server = DiscoverResult(result)
        self.notify("notifications/initialized")
        started = getattr(self.transport, "legacy_session_started", None)
        if started is not None:  # e.g. HTTP: open the 2025-11-25 GET stream for server requests
            started(version)

    # -- sending --------------------------------------------------------------

    def _params(self, params: dict[str, Any] | None, id: Any, call: _Call, log_level: str | None, meta: dict[str, Any] | None) -> dict[str, Any]:
        base = self._meta
        if call.on_progress is not None or log_level is not None or meta:
            base = {**base} if base is not None else {}
            if meta:
                base.update(meta)
            if call.on_progress is not None:
                base["progressToken"] = id
            if log_level is not None and self._meta is not None:
                base[LOG_LEVEL] = log_level
        if base is None:
            return params if params is not None else {}
        if params is None:
            return {"_meta": base}
        return {**params, "_meta": base}

    def _start(
        self,
        method: str,
        params: dict[str, Any] | None,
        call: _Call,
        timeout: float | None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
        id: Any = None,
    ) -> Any:
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed))
        if not self._opened:
            raise ClientError("the client is not connected; use 'async with client' or 'await client.connect()'")
        pending = self._pending
        if id is None:
            id = pending.new_id()
        full = self._params(params, id, call, log_level, meta)
        data = encode_request(id, method, full)
        deadline = None if timeout is None else self._loop.time() + timeout  # type: ignore[union-attr]
        pending.add(id, method, deadline=deadline, context=call)
        if call.on_log is not None:
            self._log_calls.add(id)
        if self.on_wire is not None:
            self.on_wire("send", data)
        headers = None
        if self._mirrors:
            annotations = None
            if method == methods.TOOLS_CALL and params is not None:
                annotations = self._annotations.get(params.get("name"))  # type: ignore[arg-type]
            headers = request_headers(method, full, self.protocol_version, annotations)
        try:
            self.transport.send(data, id=id, method=method, params=full, headers=headers)
        except BaseException:
            pending.abandon(id)
            self._log_calls.discard(id)
            raise
        if deadline is not None:
            self._arm(deadline)
        return id

    async def _roundtrip(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
        cancel_on_timeout: bool = True,
    ) -> dict[str, Any]:
        call = _Call(self._loop.create_future(), method, on_progress, on_log, cancel_on_timeout)  # type: ignore[union-attr]
        id = self._start(method, params, call, timeout, log_level, meta)
        try:
            return await call.future  # type: ignore[no-any-return]
        except asyncio.CancelledError:
            self._abandon(id, "the caller cancelled the request")
            raise

    # Timeouts: one timer for the whole connection, at the earliest deadline the
    # pending map holds (not a timer per call, created and cancelled each time).

    def _arm(self, deadline: float) -> None:
        timer = self._deadline_timer
        if timer is None or deadline < self._deadline_at:
            if timer is not None:
                timer.cancel()
            self._deadline_at = deadline
            self._deadline_timer = self._loop.call_at(deadline, self._expire)  # type: ignore[union-attr]

    def _expire(self) -> None:
        self._deadline_timer = None
        # A timer may fire a hair early (the loop's clock resolution): allow 1 ms.
        for entry in self._pending.expire(self._loop.time() + 1e-3):  # type: ignore[union-attr]
            self._timed_out(entry)
        following = self._pending.next_deadline()
        if following is not None and self._closed is None:
            self._arm(following)

    def _timed_out(self, entry: Any) -> None:
        id = entry.id
        call = entry.context
        self._log_calls.discard(id)
        call.fail(RequestTimeout(f"no reply to {entry.method} (id {id}) in time; the request was cancelled"))
        if call.cancel_on_timeout:
            self._cancel_on_wire(id, "timed out")

    def _abandon(self, id: Any, reason: str) -> None:
        entry = self._pending.abandon(id, reason)
        if entry is None:
            return
        self._log_calls.discard(id)
        if self._closed is None:
            self._cancel_on_wire(id, reason)

    def _cancel_on_wire(self, id: Any, reason: str) -> None:
        """cancellation.mdx, Transport-Specific Cancellation."""
        if self._closed is not None:
            return
        try:
            if self.transport.cancel_by_notification:
                self.notify(methods.CANCELLED, {"requestId": id, "reason": reason})
            else:
                self.transport.abandon(id)
        except ClientError as exc:
            log.debug("could not cancel request %r: %s", id, exc)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no reply)."""
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed))
        data = encode_notification(method, params)
        if self.on_wire is not None:
            self.on_wire("send", data)
        self.transport.send(data)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One request, its raw result dict. Adds ``_meta``; raises `RemoteError` for an error reply.

        ``on_progress(progress, total, message)`` receives the request's
        progress notifications; ``on_log(params)`` its log messages (the
        request asks for them at ``log_level``, default ``"debug"``). ``meta``
        adds keys to ``_meta`` (e.g. ``traceparent``).
        """
        if timeout is _DEFAULT:
            timeout = self.timeout
        if on_log is not None and log_level is None:
            log_level = LOG_LEVELS[0]
        if log_level is not None and log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}")
        try:
            return await self._roundtrip(
                method, params, timeout=timeout, on_progress=on_progress, on_log=on_log, log_level=log_level, meta=meta
            )
        except RemoteError as exc:
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or self.era is not Era.MODERN:
                raise
            version = self._pick_version(exc.data)
            if version is None:
                raise
            log.info("the server asked for protocol version %s; retrying with it", version)
            self._use_modern(version)
            self._remember_era()
            return await self._roundtrip(
                method, params, timeout=timeout, on_progress=on_progress, on_log=on_log, log_level=log_level, meta=meta
            )

    async def send_raw(self, message: bytes | dict[str, Any], *, reply_timeout: float | None = 5.0) -> Any:
        """Send a message exactly as given (no ``_meta`` added): an escape hatch for demos and tests.

        A dict with an ``id`` is sent as a request under that id and its reply
        (a `Response` or `ErrorResponse`, never raised) is returned. Bytes are
        written as they are; if ``reply_timeout`` is not ``None`` the next reply
        that matches no request in flight (such as a parse error's reply with
        id null) is returned. ``None`` when nothing came within ``reply_timeout``
        or for a notification.
        """
        if self._closed is not None:
            raise ConnectionClosed(str(self._closed))
        loop = self._loop
        assert loop is not None
        if isinstance(message, dict):
            data = orjson.dumps(message)
            id = message.get("id")
            if id is None:
                if self.on_wire is not None:
                    self.on_wire("send", data)
                self.transport.send(data)
                return None
            call = _Call(loop.create_future(), str(message.get("method")), raw=True)
            self._pending.add(id, call.method, context=call)
            if self.on_wire is not None:
                self.on_wire("send", data)
            self.transport.send(data, id=id, method=message.get("method"), params=message.get("params"))
            try:
                return await asyncio.wait_for(call.future, reply_timeout)
            except asyncio.TimeoutError:
                self._pending.abandon(id)
                return None
        waiter: asyncio.Future[Any] = loop.create_future()
        if reply_timeout is not None:
            self._unmatched.append(waiter)
        if self.on_wire is not None:
            self.on_wire("send", bytes(message))
        self.transport.send_raw(bytes(message))
        if reply_timeout is None:
            return None
        try:
            return await asyncio.wait_for(waiter, reply_timeout)
        except asyncio.TimeoutError:
            return None
        finally:
            try:
                self._unmatched.remove(waiter)
            except ValueError:
                pass

    # -- receiving (the Receiver interface) -------------------------------------

    def message(self, data: bytes, origin: Any = None, status: int | None = None) -> None:
        """One incoming JSON text (called by the transport)."""
        if self.on_wire is not None:
            self.on_wire("recv", data)
        try:
            msg = self._decoder.decode(data)
        except InvalidResponse as exc:
            entry = self._pending.abandon(exc.response_id) if exc.response_id is not None else None
            if entry is not None:
                entry.context.fail(ProtocolViolation(f"the reply to {entry.method} is malformed: {exc.message}"))
            else:
                log.warning("ignored a malformed message from the server: %s", exc.message)
            return
        except JSONRPCError as exc:
            log.warning("ignored a message from the server that is not valid JSON-RPC: %s", exc.message)
            return
        t = type(msg)
        if t is Response or t is ErrorResponse:
            self._reply(msg, status, origin)  # type: ignore[arg-type]
        elif t is Notification:
            self._notification(msg, origin)  # type: ignore[arg-type]
        else:
            self._server_request(msg)  # type: ignore[arg-type]

    def request_failed(self, id: Any, exc: BaseException) -> None:
        entry = self._pending.abandon(id, "failed")
        if entry is not None:
            self._log_calls.discard(id)
            entry.context.fail(exc)

    def closed(self, exc: BaseException | None) -> None:
        if self._closed is None:
            self._closed = exc if exc is not None else ConnectionClosed("the server closed the connection")
        self._fail_all(self._closed)

    def _fail_all(self, exc: BaseException) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None
        for entry in self._pending.drain():
            entry.context.fail(ConnectionClosed(str(exc)) if not isinstance(exc, ConnectionClosed) else exc)
        self._log_calls.clear()
        for sub in list(self._subscriptions.values()):
            sub._end(ConnectionClosed(str(exc)))
        while self._unmatched:
            waiter = self._unmatched.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _reply(self, msg: Response | ErrorResponse, status: int | None = None, origin: Any = None) -> None:
        if msg.id is None:
            if origin is not None and origin in self._pending:
                # An error without an id on a request's own response stream (HTTP) answers that request.
                msg = ErrorResponse(origin, msg.error)  # type: ignore[union-attr]
            else:
                self._unmatched_reply(msg)
                return
        try:
            entry = self._pending.resolve(msg)
        except RemoteProtocolError:
            self._unmatched_reply(msg)
            return
        if entry is None:
            log.debug("dropped the late reply to cancelled request %r", msg.id)
            return
        call = entry.context
        if call.on_log is not None:
            self._log_calls.discard(entry.id)
        if call.raw:
            call.settle(msg)
        elif type(msg) is Response:
            call.settle(msg.result)
        else:
            call.fail(RemoteError(msg.error, entry.method, http_status=status))  # type: ignore[union-attr]

    def _unmatched_reply(self, msg: Response | ErrorResponse) -> None:
        while self._unmatched:
            waiter = self._unmatched.popleft()
            if not waiter.done():
                waiter.set_result(msg)
                return
        if type(msg) is ErrorResponse:
            log.warning("the server reported an error for no request in flight (id %r): %s", msg.id, msg.message)
        else:
            log.warning("ignored a reply for id %r, which is not in flight", msg.id)

    def _notification(self, note: Notification, origin: Any) -> None:
        method = note.method
        params = note.params if type(note.params) is dict else {}
        if method == methods.PROGRESS:
            token = params.get("progressToken")
            entry = self._pending.get(token) if type(token) in (str, int) else None
            if entry is not None and entry.context.on_progress is not None:
                _call_back(entry.context.on_progress, params.get("progress"), params.get("total"), params.get("message"))
            else:
                log.debug("progress for unknown token %r dropped", token)
            return
        if method == methods.MESSAGE:
            self._log_message(params, origin)
            return
        invalidates = _LIST_CHANGED.get(method)
        if invalidates is not None:
            self.invalidate(*invalidates)
        elif method == _RESOURCES_UPDATED and type(params.get("uri")) is str:
            self._cache.pop((methods.RESOURCES_READ, _sort_keys({"uri": params["uri"]})), None)
        meta = params.get("_meta")
        sub_id = meta.get(SUBSCRIPTION_ID) if type(meta) is dict else None
        if sub_id is None and origin is not None and origin in self._subscriptions:
            sub_id = origin
        if method == methods.CANCELLED:
            target = self._subscriptions.get(params.get("requestId"))
            if target is not None:
                # The server tore the subscription down (cancellation.mdx).
                self._pending.abandon(target.id, "cancelled by the server")
                target._end(None)
                return
        if sub_id is not None:
            sub = self._subscriptions.get(sub_id)
            if sub is not None:
                sub._deliver(method, params)
                return
        if self.on_notification is not None:
            _call_back(self.on_notification, note)
        else:
            log.debug("notification %s received", method)

    def _log_message(self, params: dict[str, Any], origin: Any) -> None:
        target = None
        if origin is not None:
            entry = self._pending.get(origin)
            target = entry.context.on_log if entry is not None else None
        elif len(self._log_calls) == 1:
            (only,) = self._log_calls
            entry = self._pending.get(only)
            target = entry.context.on_log if entry is not None else None
        if target is None:
            target = self.on_log
        if target is not None:
            _call_back(target, params)
        else:
            log.debug("server log message: %r", params)

    def _server_request(self, req: Request) -> None:
        if self.era is not Era.LEGACY:
            log.warning(
                "ignored a %s request from the server: in MCP %s servers ask through "
                "InputRequiredResult, and the client must not write responses on stdio",
                req.method,
                self.protocol_version,
            )
            return
        asyncio.ensure_future(self._answer_server(req))

    async def _answer_server(self, req: Request) -> None:
        """Legacy era: answer a server-initiated request with the configured callbacks."""
        try:
            if req.method == "ping":
                result: Any = {}
            else:
                result = await self._answer_input(req.method, req.params or {})
            data = encode_result(req.id, result)
        except ProtocolViolation as exc:
            data = encode_error(req.id, {"code": -32601, "message": f"Method not found: {exc}"})
        except Exception as exc:  # noqa: BLE001 - the server is owed a reply
            log.exception("answering the server's %s failed", req.method)
            data = encode_error(req.id, {"code": -32603, "message": f"Internal error: {type(exc).__name__}"})
        if self._closed is not None:
            return
        if self.on_wire is not None:
            self.on_wire("send", data)
        self.transport.send(data)

    async def _answer_input(self, method: str, params: dict[str, Any]) -> Any:
        kind = _INPUT_METHODS.get(method)
        handler = self._inputs.get(kind) if kind is not None else None
        if handler is None:
            raise ProtocolViolation(
                f"the server asked for {method!r}, which this client did not declare (configure "
                f"{kind or 'a callback'} on the Client)"
            )
        return await _maybe_await(handler(params))

    # -- results, MRTR ----------------------------------------------------------

    def _check_complete(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        kind = result.get("resultType")
        if kind is None or kind == "complete":
            return result
        raise ProtocolViolation(f"{method} returned resultType {kind!r}, which is not valid for this request")

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A request through to its complete result: `request` plus the ``resultType`` rules and MRTR."""
        return (
            await self._call(
                method, params, timeout=timeout, on_progress=on_progress, on_log=on_log, log_level=log_level, meta=meta
            )
        )[0]

    async def _call(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None = _DEFAULT,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], int]:
        rounds = 0
        current = params
        while True:
            result = await self.request(
                method, current, timeout=timeout, on_progress=on_progress, on_log=on_log, log_level=log_level, meta=meta
            )
            kind = result.get("resultType")
            if kind is None or kind == "complete":
                return result, rounds
            if kind != "input_required" or method not in _MRTR_METHODS or self.era is not Era.MODERN:
                raise ProtocolViolation(f"{method} returned resultType {kind!r}, which is not valid for this request")
            rounds += 1
            if rounds > self.max_input_rounds:
                raise ProtocolViolation(
                    f"{method} still needed input after {self.max_input_rounds} rounds; giving up"
                )
            requests = result.get("inputRequests")
            state = result.get("requestState")
            if requests is None and state is None:
                raise ProtocolViolation("an InputRequiredResult must carry inputRequests or requestState")
            if requests is not None and type(requests) is not dict:
                raise ProtocolViolation("inputRequests must be an object")
            if state is not None and type(state) is not str:
                raise ProtocolViolation("requestState must be a string")
            current = dict(params) if params is not None else {}
            if requests:
                responses: dict[str, Any] = {}
                for key, ask in requests.items():
                    if type(ask) is not dict or type(ask.get("method")) is not str:
                        raise ProtocolViolation(f"inputRequests[{key!r}] is not a request object")
                    responses[key] = await self._answer_input(ask["method"], ask.get("params") or {})
                current["inputResponses"] = responses
            if state is not None:
                current["requestState"] = state

    # -- caching (server/utilities/caching.mdx) ------------------------------------

    def _store(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> None:
        if not self._cache_enabled:
            return
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0:
            return
        self._cache[(method, _sort_keys(params))] = (time.monotonic() + ttl / 1000.0, result)

    async def _cached(self, method: str, params: dict[str, Any], refresh: bool, timeout: Any = _DEFAULT) -> dict[str, Any]:
        key = (method, _sort_keys(params))
        if not refresh and self._cache_enabled:
            hit = self._cache.get(key)
            if hit is not None:
                if time.monotonic() < hit[0]:
                    return hit[1]
                del self._cache[key]
        result = self._check_complete(method, await self.request(method, params or None, timeout=timeout))
        self._store(method, params, result)
        return result

    def invalidate(self, *methods_: str) -> None:
        """Drop cached results of these methods (all cached results when none are named)."""
        if not methods_:
            self._cache.clear()
            return
        for key in [k for k in self._cache if k[0] in methods_]:
            del self._cache[key]

    # -- the MCP surface ----------------------------------------------------------

    async def discover(self, *, refresh: bool = False) -> DiscoverResult:
        """server/discover (server/discover.mdx); in the legacy era, the initialize result."""
        if self.era is Era.LEGACY:
            assert self._server is not None
            return self._server
        result = DiscoverResult(await self._cached(methods.DISCOVER, {}, refresh))
        self._server = result
        return result

    async def ping(self, *, timeout: float | None = _DEFAULT) -> None:
        """Check the server answers: ``ping`` (legacy) or an uncached ``server/discover`` (modern, where ping was removed)."""
        if self.era is Era.LEGACY:
            await self.request("ping", timeout=timeout)
        else:
            await self.request(methods.DISCOVER, timeout=timeout)

    async def list_page(self, method: str, cursor: str | None = None, *, refresh: bool = False) -> Page:
        """One page of ``tools/list``, ``prompts/list``, ``resources/list`` or ``resources/templates/list``."""
        key = _PAGE_KEYS.get(method)
        if key is None:
            raise ValueError(f"{method} is not a paginated list method")
        params = {"cursor": cursor} if cursor is not None else {}
        raw = await self._cached(method, params, refresh)
        if method == methods.TOOLS_LIST:
            raw = self._accept_tools(raw, cursor is None)
        return Page(raw, key)

    def _accept_tools(self, raw: dict[str, Any], first_page: bool) -> dict[str, Any]:
        """Record tool definitions; over HTTP drop those with invalid x-mcp-header annotations (tools.mdx)."""
        if first_page:
            self.tool_definitions.clear()
            self._annotations.clear()
        kept: list[Any] = []
        dropped = False
        for tool in raw.get("tools") or ():
            if type(tool) is not dict or type(tool.get("name")) is not str:
                continue
            if self._mirrors:
                try:
                    annotations = header_annotations(tool)
                except InvalidToolHeaders as exc:
                    log.warning("ignored tool %r: %s (streamable-http.mdx, Custom Headers)", tool["name"], exc)
                    dropped = True
                    continue
                if annotations:
                    self._annotations[tool["name"]] = annotations
            self.tool_definitions[tool["name"]] = tool
            kept.append(tool)
        if dropped:
            raw = {**raw, "tools": kept}
        return raw

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
        return [t async for t in self._iter(methods.TOOLS_LIST, refresh)]

    def iter_resources(self, *, refresh: bool = False) -> AsyncIterator[dict[str, Any]]:
        return self._iter(methods.RESOURCES_LIST, refresh)

    async def list_resources(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        return [r async for r in self._iter(methods.RESOURCES_LIST, refresh)]

    async def list_resource_templates(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        return [r async for r in self._iter(methods.RESOURCES_TEMPLATES_LIST, refresh)]

    def iter_prompts(self, *, refresh: bool = False) -> AsyncIterator[dict[str, Any]]:
        return self._iter(methods.PROMPTS_LIST, refresh)

    async def list_prompts(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        return [p async for p in self._iter(methods.PROMPTS_LIST, refresh)]

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = _DEFAULT,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> CallToolResult:
        """tools/call (server/tools.mdx). A tool execution error is a result with ``is_error``, not an exception."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        try:
            return CallToolResult(
                await self.call(
                    methods.TOOLS_CALL, params, timeout=timeout, on_progress=on_progress, on_log=on_log,
                    log_level=log_level, meta=meta,
                )
            )
        except RemoteError as exc:
            if exc.code != HEADER_MISMATCH or not self._mirrors:
                raise
            # streamable-http.mdx, Client Behavior: re-read tools/list for the
            # tool's current x-mcp-header annotations, then retry once.
            log.info("HeaderMismatch on tools/call %s: refreshing tools/list and retrying", name)
            await self.list_tools(refresh=True)
            return CallToolResult(
                await self.call(
                    methods.TOOLS_CALL, params, timeout=timeout, on_progress=on_progress, on_log=on_log,
                    log_level=log_level, meta=meta,
                )
            )

    async def read_resource(self, uri: str, *, refresh: bool = False, timeout: float | None = _DEFAULT) -> ReadResourceResult:
        """resources/read (server/resources.mdx); cached for the result's ``ttlMs``."""
        params = {"uri": uri}
        key = (methods.RESOURCES_READ, _sort_keys(params))
        if not refresh and self._cache_enabled:
            hit = self._cache.get(key)
            if hit is not None and time.monotonic() < hit[0]:
                return ReadResourceResult(hit[1])
        result, rounds = await self._call(methods.RESOURCES_READ, params, timeout=timeout)
        if rounds == 0:  # an MRTR retry's result is never cached (caching.mdx, Cache Key)
            self._store(methods.RESOURCES_READ, params, result)
        return ReadResourceResult(result)

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = _DEFAULT
    ) -> GetPromptResult:
        """prompts/get (server/prompts.mdx)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return GetPromptResult(await self.call(methods.PROMPTS_GET, params, timeout=timeout))

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str,
        *,
        context: dict[str, str] | None = None,
        timeout: float | None = _DEFAULT,
    ) -> CompleteResult:
        """completion/complete (server/utilities/completion.mdx); ``ref`` is a prompt or template reference."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        result = await self.request(methods.COMPLETION_COMPLETE, params, timeout=timeout)
        return CompleteResult(self._check_complete(methods.COMPLETION_COMPLETE, result))

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources_list: bool = False,
        resources: list[str] | None = None,
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
        return Subscription(self, filter_)


_PAGE_KEYS = {
    methods.TOOLS_LIST: "tools",
    methods.PROMPTS_LIST: "prompts",
    methods.RESOURCES_LIST: "resources",
    methods.RESOURCES_TEMPLATES_LIST: "resourceTemplates",
}


class Subscription:
    """One ``subscriptions/listen`` stream: iterate it for ``(method, params)`` pairs.

    Entering sends the request and waits for
    ``notifications/subscriptions/acknowledged``; ``acknowledged`` is then
    the filter the server agreed to honour (it may be narrower than asked).
    Iteration ends when the server closes the subscription gracefully (its
    response to the listen request, or ``notifications/cancelled`` naming
    it); an abrupt end of the connection raises `ConnectionClosed`. Leaving
    the block cancels the subscription on the wire.
    """

    def __init__(self, client: Client, filter_: dict[str, Any], *, buffer: int = DEFAULT_SUBSCRIPTION_BUFFER) -> None:
        self.client = client
        self.filter = filter_
        self.id: Any = None
        self.acknowledged: dict[str, Any] | None = None
        self.dropped = 0
        self._buffer = buffer
        self._queue: deque[tuple[str, dict[str, Any]]] = deque()
        self._wakeup: asyncio.Event = asyncio.Event()
        self._acked: asyncio.Event = asyncio.Event()
        self._ended = False
        self._error: BaseException | None = None
        self._call: _Call | None = None

    async def __aenter__(self) -> Subscription:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def open(self, *, timeout: float | None = _DEFAULT) -> None:
        client = self.client
        if timeout is _DEFAULT:
            timeout = client.timeout
        loop = asyncio.get_running_loop()
        call = _Call(loop.create_future(), methods.SUBSCRIPTIONS_LISTEN)
        call.subscription = self
        self._call = call
        self.id = client._pending.new_id()
        # Registered before the request goes out: the acknowledgment may come at once.
        client._subscriptions[self.id] = self
        try:
            client._start(methods.SUBSCRIPTIONS_LISTEN, {"notifications": self.filter}, call, None, id=self.id)
        except BaseException:
            client._subscriptions.pop(self.id, None)
            raise
        call.future.add_done_callback(self._finished)
        acked = asyncio.ensure_future(self._acked.wait())
        try:
            done, _ = await asyncio.wait({acked, call.future}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            acked.cancel()
        if self._acked.is_set():
            return
        if call.future.done():
            client._subscriptions.pop(self.id, None)
            exc = call.future.exception()
            if exc is not None:
                raise exc
            raise ProtocolViolation("the server ended the subscription before acknowledging it")
        await self.aclose()
        raise RequestTimeout("the server did not acknowledge subscriptions/listen in time")

    def _finished(self, future: asyncio.Future[Any]) -> None:
        if future.cancelled():
            self._end(None)
            return
        exc = future.exception()
        if exc is None:
            self._end(None)  # a graceful close (subscriptions.mdx, Graceful Closure)
        else:
            self._end(exc)

    def _deliver(self, method: str, params: dict[str, Any]) -> None:
        if method == _ACKNOWLEDGED:
            notes = params.get("notifications")
            self.acknowledged = notes if type(notes) is dict else {}
            self._acked.set()
            return
        if not self._acked.is_set():
            log.warning("subscription %r: %s arrived before the acknowledgment; dropped", self.id, method)
            return
        if len(self._queue) >= self._buffer:
            self._queue.popleft()
            self.dropped += 1
        self._queue.append((method, params))
        self._wakeup.set()

    def _end(self, exc: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = exc
        self.client._subscriptions.pop(self.id, None)
        self._wakeup.set()

    @property
    def closed(self) -> bool:
        return self._ended

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> tuple[str, dict[str, Any]]:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._ended:
                if self._error is not None and not isinstance(self._error, asyncio.CancelledError):
                    raise self._error
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()

    async def aclose(self) -> None:
        """Cancel the subscription (stdio: notifications/cancelled; HTTP: close its stream)."""
        if self._ended:
            return
        self._end(None)
        self.client._abandon(self.id, "the client closed the subscription")
