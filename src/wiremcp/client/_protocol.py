"""The client side of MCP without I/O: messages in, bytes and events out.

`ClientProtocol` is to the asyncio `Client` what h11's ``Connection`` is to
an HTTP client: it holds the state of one connection to one server and
decides everything that can be decided without a socket, a clock or an event
loop. Give it what arrived (`receive`, `request_failed`, `connection_lost`,
`expire` with the time); it answers with `events` for the I/O layer to act
on. Ask it to build what goes out (`request`, `notification`, `cancel`,
`answer`); it answers with bytes. Each request carries an opaque ``tag`` the
caller chooses, handed back in the events that concern it.

Rules it keeps:

* **Correlation** (basic/index.mdx, "Requests"): ids come from
  `PendingRequests`, never reused while in flight; replies are matched by id
  in any order; a reply to a request that was cancelled or timed out is
  recognised and dropped; a reply to an id never sent, or a second reply to
  one, is dropped; each of these is logged as a warning naming the id, and
  none of them settles another request; a malformed reply with a readable id fails
  that request with `ProtocolViolation`; an error without an id on a
  request's own response stream (HTTP) answers that request.
* **Per-request metadata** (basic/index.mdx, "_meta"): in the modern era
  every request carries ``protocolVersion``, ``clientCapabilities`` and
  ``clientInfo``; a call's ``meta`` adds keys, ``progressToken`` (the
  request's id) is set when the call wants progress, ``logLevel`` when it
  wants log messages. Legacy requests carry none of it.
* **Era** (`_eras`): `start` and the ``probe_*`` methods walk a
  `Negotiation`; what it decides is remembered in the `EraCache` given.
  A probe that gets no reply in time means legacy only where the binding
  says so (``silence_means_legacy``: stdio yes, Streamable HTTP no, where
  `probe_silent` raises `RequestTimeout` naming the probe).
  A -32022 on a later request whose ``data.supported`` names a version this
  client speaks switches to it (`version_refused`), once per request.
* **Cancellation and timeouts** (patterns/cancellation.mdx): a request
  cancelled or past its deadline is abandoned, and cancelled on the wire
  (``notifications/cancelled`` on a shared stream, `Abandon` on HTTP) unless
  it was sent with ``cancel_on_timeout=False`` and timed out (the era probe:
  a legacy server was never initialized).
* **Request-scoped notifications**: ``notifications/progress`` goes to the
  request its ``progressToken`` names, if it asked for progress;
  ``notifications/message`` to the request whose response stream carried it
  (HTTP), else to the one request in flight that asked for logs, else to
  nobody in particular (``LogMessage.tag`` is ``None``).
* **Subscriptions** (patterns/subscriptions.mdx): a notification whose
  ``_meta`` names a subscription id (or that arrived on its stream) goes to
  it; ``notifications/subscriptions/acknowledged`` opens it; anything before
  the acknowledgment is logged and dropped; ``notifications/cancelled``
  naming it ends it; the reply to the listen request is its graceful end.
* **Caching** (`_cache`): list_changed and resources/updated notifications
  make cached results stale, whoever they are routed to afterwards.
* **Server requests**: the modern era has none (stdio.mdx: the client must
  not write responses), so one is logged and ignored. In the legacy era
  ``ping`` is answered ``{}`` here, an input request the client declared is
  handed out as `ServerRequest`, and anything else gets -32601; every error
  reply to the server is built in one place, `answer_error`.
* **Tasks** (`_tasks`): with ``tasks=True`` the modern ``clientCapabilities``
  declare ``io.modelcontextprotocol/tasks`` (legacy ``initialize`` is left
  as it was: 2025-11-25 task augmentation needs no client capability);
  `task_created` tells a ``CreateTaskResult`` from an ordinary result and
  refuses one the request did not ask for; ``notifications/tasks`` and
  ``notifications/tasks/status`` are checked and handed out as `TaskUpdate`,
  followed by the usual routing (to the subscription that carried it, else
  `Notified`); a malformed one is logged and dropped. A 2025-11-25
  ``tools/call`` that asked for progress and was answered with a task keeps
  its ``progressToken`` for the task's life (tasks.mdx, "Task Progress
  Notifications"): the task's progress goes to that call's tag until the
  task ends (a terminal status seen: `task_ended`, or a terminal
  ``notifications/tasks/status``) or the connection does.
* **HTTP metadata headers** (`_headers`): computed per request when the
  transport mirrors them; tools whose ``x-mcp-header`` annotations are
  invalid are dropped from tools/list (`accept_tools`).

The routing of what arrives (replies, request-scoped notifications,
subscriptions, task status) is written in `_inbox` (`Inbox`, the base class,
which owns the routing state); the rest is here.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, TypeVar

from ..jsonrpc import (
    INTERNAL_ERROR,
    MCP,
    METHOD_NOT_FOUND,
    Decoder,
    ErrorResponse,
    InvalidNotification,
    InvalidResponse,
    JSONRPCError,
    Notification,
    Request,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)
from ..protocol import MODERN_VERSIONS, Era, methods
from ..protocol.errors import UNSUPPORTED_PROTOCOL_VERSION
from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from .events import Abandon, Event, Failed, Id, Send, ServerRequest
from ._cache import ResultCache
from ._eras import EraCache, EraChoice, Initialize, Negotiation, Probe, Ready, Step, pick_version
from ._errors import ConnectionClosed, ProtocolViolation, RemoteError, RequestTimeout
from ._headers import Annotation, InvalidToolHeaders, header_annotations, request_headers
from ._inbox import Entry, Inbox, as_id
from ._mrtr import INPUT_METHODS, MultiRoundCall, check_complete, undeclared
from ._options import CallOptions
from ._results import DiscoverResult
from ._tasks import TASKS_EXTENSION, TaskFollower, TaskState, created_task

__all__ = ["ClientProtocol", "Outgoing", "DEFAULT_MAX_INPUT_ROUNDS"]

log = logging.getLogger("wiremcp.client")

#: MRTR retries allowed for one call before giving up (patterns/mrtr.mdx lets
#: a server ask again; a bound stops a server that never completes).
DEFAULT_MAX_INPUT_ROUNDS = 8

_NO_OPTIONS = CallOptions()

T = TypeVar("T")
Events = list[Event[T]]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A request ready for the transport: its id, method, encoded bytes, full params and HTTP headers."""

    id: Id
    method: str
    data: bytes
    params: dict[str, Any]
    headers: dict[str, str] | None


class ClientProtocol(Inbox[T]):
    """The state of one client connection; see the module docstring for the rules."""

    def __init__(
        self,
        *,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        answers: Iterable[str] = (),
        era: EraChoice = "auto",
        protocol_version: str = MODERN_VERSIONS[0],
        eras: EraCache | None = None,
        server_key: Hashable = None,
        cache: bool = True,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        cancel_by_notification: bool = True,
        mirrors_headers: bool = False,
        silence_means_legacy: bool | None = None,
        tasks: bool = False,
    ) -> None:
        """``tasks``: declare the tasks extension (modern era). ``answers``: the input kinds (``elicitation``, ``sampling``, ``roots``) the I/O layer can answer.

        ``silence_means_legacy``: whether a probe that gets no reply in time
        means a legacy server (stdio.mdx) or is a timeout (streamable-http.mdx);
        by default, ``cancel_by_notification``: a shared stream (stdio) yes,
        a stream per request (HTTP) no.
        """
        if max_input_rounds < 0:
            raise ValueError("max_input_rounds must not be negative")
        if silence_means_legacy is None:
            silence_means_legacy = cancel_by_notification
        self._negotiation = Negotiation(era, protocol_version, silence_means_legacy=silence_means_legacy)
        if client_info is None:
            client_info = {"name": "wiremcp", "version": getattr(sys.modules.get("wiremcp"), "__version__", "0")}
        self.client_info = client_info
        self.client_capabilities: dict[str, Any] = dict(capabilities or {})
        #: Whether the client declares the tasks extension (and follows tasks it is given).
        self.tasks = tasks
        self.answers = frozenset(answers)
        self.eras = eras if eras is not None else EraCache()
        self.server_key = server_key
        self.cache = ResultCache(cache)
        self.max_input_rounds = max_input_rounds
        self.cancel_by_notification = cancel_by_notification
        self.mirrors_headers = mirrors_headers
        self.era: Era | None = None
        self.protocol_version: str | None = None
        #: What the server said about itself: its DiscoverResult (or legacy InitializeResult).
        self.server: DiscoverResult | None = None
        #: Why the connection ended, once it has.
        self.closed: BaseException | None = None
        #: Tool definitions from the latest tools/list pages, by name.
        self.tool_definitions: dict[str, dict[str, Any]] = {}
        self._annotations: dict[str, list[Annotation]] = {}
        self._meta: dict[str, Any] | None = None
        self._decoder = Decoder(MCP)
        super().__init__()

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def __contains__(self, id: object) -> bool:
        return id in self._pending

    # -- era --------------------------------------------------------------------

    def start(self) -> Step:
        """The first step of the era decision (the cached era, when the cache knows this server)."""
        self._negotiation.cached = self.eras.get(self.server_key)
        return self._apply(self._negotiation.first())

    def probe_answered(self, result: dict[str, Any], now: float) -> Step:
        """The ``server/discover`` probe got a result."""
        step = self._apply(self._negotiation.discovered(check_complete(methods.DISCOVER, result)))
        if type(step) is Ready:
            self.cache.put(methods.DISCOVER, {}, result, now)
        return step

    def probe_refused(self, error: RemoteError) -> Step:
        """The probe got a JSON-RPC error."""
        step = self._negotiation.refused(error.code, error.message, error.data)
        if type(step) is Initialize:
            log.info("server/discover failed with %s: treating the server as legacy", error)
        return self._apply(step)

    @property
    def silence_means_legacy(self) -> bool:
        """Whether a probe that gets no reply in time means a legacy server (stdio) or a timeout (HTTP)."""
        return self._negotiation.silence_means_legacy

    def probe_silent(self, timeout: float | None = None) -> Step:
        """No reply to the probe within ``timeout`` seconds: legacy on stdio, `RequestTimeout` over HTTP."""
        step = self._negotiation.silent()
        within = "in time" if timeout is None else f"within {timeout:g} s"
        if step is None:
            raise RequestTimeout(
                f"no reply to the era probe (server/discover) {within}; over Streamable HTTP only an HTTP 4xx "
                "without a recognized modern error body means a legacy server (streamable-http.mdx, Backward "
                "Compatibility), so a slow server is reported, not taken for a legacy one"
            )
        log.info("no reply to server/discover %s: treating the server as legacy (stdio.mdx)", within)
        return self._apply(step)

    def probe_http_error(self, status: int) -> Step | None:
        """An HTTP error without a JSON-RPC body; ``None``: not an answer, raise it."""
        step = self._negotiation.http_refused(status)
        if step is None:
            return None
        log.info("server/discover got HTTP %s without a modern error: treating the server as legacy", status)
        return self._apply(step)

    def initialize_refused(self, error: RemoteError) -> Step | None:
        """The fallback ``initialize`` got an error: a -32022 decides the modern era; ``None``: raise the error."""
        step = self._negotiation.initialize_refused(error.code, error.data)
        if step is None:
            return None
        log.info("initialize got %s: the server is modern; continuing with %s", error, step.version)
        return self._apply(step)

    def initialize_params(self, step: Initialize) -> dict[str, Any]:
        return {"protocolVersion": step.version, "capabilities": self.client_capabilities, "clientInfo": self.client_info}

    def initialized(self, result: dict[str, Any]) -> bytes:
        """The ``initialize`` result came: the legacy era is decided; returns ``notifications/initialized`` to send."""
        self._apply(self._negotiation.initialized(result))
        return encode_notification("notifications/initialized", None)

    def _apply(self, step: Step) -> Step:
        if type(step) is Probe:
            self._use_modern(step.version)
        elif type(step) is Initialize:
            self.era = Era.LEGACY
            self.protocol_version = step.version
            self._meta = None
        else:
            assert type(step) is Ready
            if step.era is Era.MODERN:
                self._use_modern(step.version)
            else:
                self.era = Era.LEGACY
                self.protocol_version = step.version
                self._meta = None
            if step.server is not None:
                self.server = DiscoverResult(step.server)
            if self._negotiation.choice == "auto":  # a forced era is an order, not knowledge about the server
                self.eras.remember(self.server_key, step.era, step.version)
        return step

    def _use_modern(self, version: str) -> None:
        self.era = Era.MODERN
        self.protocol_version = version
        capabilities = self.client_capabilities
        if self.tasks:
            extensions = capabilities.get("extensions")
            capabilities = {
                **capabilities,
                "extensions": {**(extensions if type(extensions) is dict else {}), TASKS_EXTENSION: {}},
            }
        self._meta = {
            PROTOCOL_VERSION: version,
            CLIENT_CAPABILITIES: capabilities,
            CLIENT_INFO: self.client_info,
        }

    def version_refused(self, error: RemoteError) -> bool:
        """A -32022 on a modern request: switch to a version it names, if any; ``True`` means retry once."""
        if error.code != UNSUPPORTED_PROTOCOL_VERSION or self.era is not Era.MODERN:
            return False
        version = pick_version(error.data)
        if version is None:
            return False
        log.info("the server asked for protocol version %s; retrying with it", version)
        self._use_modern(version)
        self.eras.remember(self.server_key, Era.MODERN, version)
        return True

    # -- sending ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed is not None:
            raise ConnectionClosed(str(self.closed))

    def request(
        self,
        method: str,
        params: dict[str, Any] | None,
        tag: T,
        options: CallOptions = _NO_OPTIONS,
        deadline: float | None = None,
        *,
        cancel_on_timeout: bool = True,
        id: Id | None = None,
    ) -> Outgoing:
        """Register a request and encode it. Its outcome comes back as `Settled` or `Failed` with ``tag``."""
        self._check_open()
        pending = self._pending
        if id is None:
            id = pending.new_id()
        progress = options.on_progress is not None
        level = options.log_request
        meta = self._meta
        if progress or level is not None or options.meta:
            base = meta or {}
            meta = {**options.meta, **base} if options.meta else {**base}
            if progress:
                meta["progressToken"] = id
            if level is not None and self._meta is not None:
                meta[LOG_LEVEL] = level
        if meta is None:
            full = params if params is not None else {}
        elif params is None:
            full = {"_meta": meta}
        else:
            full = {**params, "_meta": meta}
        data = encode_request(id, method, full)
        logs = options.on_log is not None
        pending.add(id, method, deadline=deadline, context=Entry(tag, progress, logs, cancel_on_timeout, False))
        if logs:
            self._log_calls.add(id)
        headers = None
        if self.mirrors_headers:
            annotations = None
            if method == methods.TOOLS_CALL and params is not None:
                name = params.get("name")
                annotations = self._annotations.get(name) if type(name) is str else None
            headers = request_headers(method, full, self.protocol_version, annotations)
        return Outgoing(id, method, data, full, headers)

    def listen(self, notifications: dict[str, Any], tag: T) -> Outgoing:
        """A ``subscriptions/listen`` request; its notifications come back as subscription events with ``tag``."""
        out = self.request(methods.SUBSCRIPTIONS_LISTEN, {"notifications": notifications}, tag)
        entry = self._pending.get(out.id)
        assert entry is not None
        entry.context.subscription = True
        # Registered before the request goes out: the acknowledgment may come at once.
        self._subscriptions[out.id] = entry.context
        return out

    def forget(self, id: Id) -> None:
        """Drop a request that could not be sent (nothing went out, so nothing is cancelled)."""
        self._pending.abandon(id, "not sent")
        self._log_calls.discard(id)
        self._subscriptions.pop(id, None)

    def notification(self, method: str, params: dict[str, Any] | None = None) -> bytes:
        self._check_open()
        return encode_notification(method, params)

    def cancel(self, id: Id, reason: str) -> Events[T]:
        """The caller gave up on ``id``: abandon it and cancel it on the wire (its late reply is dropped)."""
        entry = self._pending.abandon(id, reason)
        if entry is None:
            return []
        self._log_calls.discard(id)
        self._subscriptions.pop(id, None)
        return self._cancel_on_wire(id, reason)

    def _cancel_on_wire(self, id: Id, reason: str) -> Events[T]:
        """cancellation.mdx, Transport-Specific Cancellation."""
        if self.closed is not None:
            return []
        if self.cancel_by_notification:
            return [Send(encode_notification(methods.CANCELLED, {"requestId": id, "reason": reason}))]
        return [Abandon(id)]

    def next_deadline(self) -> float | None:
        return self._pending.next_deadline()

    def expire(self, now: float) -> Events[T]:
        """Fail every request whose deadline is at or before ``now`` with `RequestTimeout`, and cancel it."""
        out: Events[T] = []
        for entry in self._pending.expire(now):
            id = entry.id
            self._log_calls.discard(id)
            self._subscriptions.pop(id, None)
            out.append(Failed(entry.context.tag, RequestTimeout(
                f"no reply to {entry.method} (id {id}) in time; the request was cancelled"
            )))
            if entry.context.cancel_on_timeout:
                out.extend(self._cancel_on_wire(id, "timed out"))
        return out

    # -- answering the server (legacy era) ------------------------------------------

    def answer(self, id: Id, result: Any) -> bytes | None:
        """The reply to a `ServerRequest`; ``None`` when the connection is gone."""
        return None if self.closed is not None else encode_result(id, result)

    def answer_error(self, id: Id, exc: BaseException) -> bytes | None:
        """The one place error replies to the server are built: -32601 for what this client cannot answer, -32603 else."""
        if self.closed is not None:
            return None
        if isinstance(exc, ProtocolViolation):
            error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {exc}"}
        else:
            error = {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}"}
        return encode_error(id, error)

    def _server_request(self, req: Request) -> Events[T]:
        if self.era is not Era.LEGACY:
            log.warning(
                "ignored a %s request from the server: in MCP %s servers ask through "
                "InputRequiredResult, and the client must not write responses on stdio",
                req.method,
                self.protocol_version,
            )
            return []
        params = req.params if type(req.params) is dict else {}
        id = as_id(req.id)
        assert id is not None  # the MCP profile decodes only string and integer ids
        if req.method == "ping":
            data = self.answer(id, {})
            return [Send(data)] if data is not None else []
        kind = INPUT_METHODS.get(req.method)
        if kind is None or kind not in self.answers:
            data = self.answer_error(id, undeclared(req.method, kind))
            return [Send(data)] if data is not None else []
        return [ServerRequest(id, req.method, kind, params)]

    # -- receiving --------------------------------------------------------------------

    def receive(self, data: bytes, origin: Id | None = None, status: int | None = None) -> Events[T]:
        """One incoming JSON text. ``origin``: the request whose response stream carried it (HTTP), else ``None``."""
        try:
            msg = self._decoder.decode(data)
        except InvalidResponse as exc:
            entry = self._pending.abandon(exc.response_id) if exc.response_id is not None else None
            if entry is not None:
                self._settled(entry.id)
                return [Failed(entry.context.tag, ProtocolViolation(f"the reply to {entry.method} is malformed: {exc.message}"))]
            log.warning("ignored a malformed message from the server: %s", exc.message)
            return []
        except InvalidNotification as exc:
            # JSON-RPC 2.0 §4.1: never answered; it concerns no request, so nothing else happens.
            log.warning("ignored a malformed notification from the server (%s): %s", exc.method or "no method", exc.message)
            return []
        except JSONRPCError as exc:
            log.warning("ignored a message from the server that is not valid JSON-RPC: %s", exc.message)
            return []
        t = type(msg)
        if t is Response or t is ErrorResponse:
            return self._reply(msg, status, origin)  # type: ignore[arg-type]  # narrowed by the type test
        if t is Notification:
            return self._notification(msg, origin)  # type: ignore[arg-type]  # narrowed by the type test
        return self._server_request(msg)  # type: ignore[arg-type]  # MCP profile: no batches, so a Request

    def task_ended(self, task_id: str) -> None:
        """Task ``task_id`` reached a terminal status: its progress has nowhere to go any more."""
        self._drop_task_progress(task_id)

    def request_failed(self, id: Id, exc: BaseException) -> Events[T]:
        """The transport says ``id`` cannot be answered any more (an HTTP error, a dropped stream)."""
        entry = self._pending.abandon(id, "failed")
        if entry is None:
            return []
        self._settled(id)
        return [Failed(entry.context.tag, exc)]

    def connection_lost(self, exc: BaseException | None = None) -> Events[T]:
        """The connection is gone: fail everything in flight with `ConnectionClosed`."""
        if self.closed is None:
            self.closed = exc if exc is not None else ConnectionClosed("the server closed the connection")
        reason = self.closed if isinstance(self.closed, ConnectionClosed) else ConnectionClosed(str(self.closed))
        out: Events[T] = [Failed(entry.context.tag, reason) for entry in self._pending.drain()]
        self._log_calls.clear()
        self._subscriptions.clear()
        self._task_progress.clear()
        return out

    # -- results ----------------------------------------------------------------------

    def multi_round(self, method: str, params: dict[str, Any] | None) -> MultiRoundCall:
        """A call through its MRTR rounds (`_mrtr`), bound to this connection's era and answers."""
        return MultiRoundCall(
            method, params, max_rounds=self.max_input_rounds, modern=self.era is Era.MODERN, declared=self.answers
        )

    def task_created(
        self, method: str, result: dict[str, Any], *, augmented: bool = False
    ) -> TaskState | None:
        """The task ``result`` creates (`_tasks.created_task`), ``None`` for an ordinary result."""
        return created_task(method, result, legacy=self.era is Era.LEGACY, declared=self.tasks, augmented=augmented)

    def follow_task(self, task_id: str) -> TaskFollower:
        """The steps of following task ``task_id`` on this connection (`_tasks.TaskFollower`)."""
        return TaskFollower(task_id, legacy=self.era is Era.LEGACY, declared=self.answers)

    def accept_tools(self, raw: dict[str, Any], first_page: bool) -> dict[str, Any]:
        """Record tool definitions; when mirroring headers, drop tools with invalid x-mcp-header annotations (tools.mdx)."""
        if first_page:
            self.tool_definitions.clear()
            self._annotations.clear()
        kept: list[Any] = []
        dropped = False
        tools = raw.get("tools")
        for tool in tools if type(tools) is list else ():
            if type(tool) is not dict or type(tool.get("name")) is not str:
                continue
            if self.mirrors_headers:
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

