"""What a handler knows about the request it serves, and how it talks back.

A tool asks for it by annotating a parameter with `Context`; the parameter is
injected and left out of the tool's ``inputSchema``.

Authorization (basic/authorization/): a transport that authenticates
requests (Streamable HTTP with a ``ResourceServer``) sets `current_auth` to
the verified access token while it serves the request; ``ctx.auth`` is that
token, or None where requests are not authenticated (stdio: the spec has
no authorization there). Tools, resources and prompts registered with
``scopes`` are checked before their function runs (`_authorization`, the
one table of every method's check): with a token that lacks one of them
the request fails with `InsufficientScope`, which the HTTP transport answers
with 403 ``insufficient_scope``. Without a token nothing is enforced.

HTTP request headers: `MCPApp` sets `current_headers` to the request's
headers (lower-case byte names, repeated fields joined with ``", "``) while
it serves a request; ``ctx.headers`` is a read-only, case-insensitive
mapping of them as text, or None where there is no HTTP request (stdio).

``ctx.lifespan`` is what the server's lifespan yielded (see `_lifespan`).

State (docs/state.md): ``ctx.request_state`` is a dict for the request's
life, the same one middleware sees as ``call.state`` (the pipeline hands it
over in `current_request_state`); ``ctx.session_state`` is the session's
keys on ``server.storage`` (`_state`, loaded on first use). `current_peer`
names the connection off HTTP (stdio, in-memory): the transport sets it once
per connection, and its id is made on first use.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, TypeVar, overload

from ..jsonrpc import InvalidRequest, RequestId
from ..protocol import methods
from ..protocol.meta import RequestMeta
from ._failures import DEV
from ._mrtr import ELICIT, ROOTS, SAMPLE, InputRequired, check_answer, check_capabilities

if TYPE_CHECKING:
    import asyncio
    # Types only: the answers' TypedDicts cost import time and nothing here needs them at run time.
    from ..protocol.inputs import CreateMessageResult, ElicitResult, Root
    from ._elicit import Elicited  # typed elicitation (`elicit` imports `_elicit` on first use)
    from ._server import Server
    from ._state import SessionState

__all__ = [
    "Context",
    "Emit",
    "InsufficientScope",
    "current_auth",
    "current_headers",
    "header_mapping",
    "Headers",
    "scope_tuple",
    "current_peer",
    "current_request_state",
    "Peer",
]

#: The verified access token of the request being served (a
#: ``wiremcp.auth.server.AccessToken``), set by an authenticating transport; None elsewhere.
current_auth: ContextVar[Any] = ContextVar("wiremcp.auth", default=None)
#: The HTTP request's headers (``{lower-case name: value}`` as bytes), set by `MCPApp`; None elsewhere.
current_headers: ContextVar[dict[bytes, bytes] | None] = ContextVar("wiremcp.headers", default=None)


class Peer:
    """One connection off HTTP (a stdio stream, an in-memory client); its random ``id`` is made on first use."""

    __slots__ = ("_id",)

    def __init__(self) -> None:
        self._id: str | None = None

    @property
    def id(self) -> str:
        """A random id naming the connection (32 hex digits), the same for its whole life."""
        if self._id is None:
            import secrets

            self._id = secrets.token_hex(16)
        return self._id


#: The connection the request came on, off HTTP (set once per connection by stdio and the in-memory transport).
current_peer: ContextVar[Peer | None] = ContextVar("wiremcp.peer", default=None)
#: The request's state dict, when middleware made it before the handler (the pipeline sets it).
current_request_state: ContextVar[dict[str, Any] | None] = ContextVar("wiremcp.request_state", default=None)


class Headers(Mapping[str, str]):
    """An HTTP request's headers, read-only: names are case-insensitive, values are text (latin-1)."""

    __slots__ = ("_raw",)

    def __init__(self, raw: dict[bytes, bytes]) -> None:
        self._raw = raw

    def __getitem__(self, name: str) -> str:
        return self._raw[name.lower().encode("latin-1")].decode("latin-1")

    def __iter__(self) -> Iterator[str]:
        return (name.decode("latin-1") for name in self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, name: object) -> bool:
        return type(name) is str and name.lower().encode("latin-1", "replace") in self._raw

    def __repr__(self) -> str:
        return f"Headers({dict(self)!r})"


def header_mapping(raw: dict[bytes, bytes] | None) -> Headers | None:
    return None if raw is None else Headers(raw)


class InsufficientScope(InvalidRequest):
    """The request's token lacks scopes the operation needs; ``scopes`` lists all it needs."""

    def __init__(self, scopes: tuple[str, ...], what: str) -> None:
        super().__init__(f"Forbidden: insufficient scope: {what} needs the scopes {' '.join(scopes)}")
        self.scopes = scopes


def scope_tuple(scopes: Iterable[str] | None) -> tuple[str, ...]:
    """Registration's ``scopes=``: a tuple of non-empty strings without spaces (ValueError otherwise)."""
    if scopes is None:
        return ()
    if isinstance(scopes, str):
        raise ValueError("scopes must be a list of scope names, not one string")
    out = tuple(dict.fromkeys(scopes))
    for scope in out:
        if type(scope) is not str or not scope or " " in scope:
            raise ValueError(f"scopes: {scope!r} is not a scope name (a non-empty string without spaces)")
    return out


T = TypeVar("T")

#: Sends one notification about the request: ``emit(method, params)``. The
#: transport drops it once the request was cancelled (stdio.mdx, Cancellation).
Emit = Callable[[str, dict[str, Any]], None]


def _discard(method: str, params: dict[str, Any]) -> None:
    return None


class _Watched:
    """``wiremcp dev`` only: a request's emitter that remembers what visible work went out (progress, log)."""

    __slots__ = ("emit", "sent")

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.sent: dict[str, None] = {}

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.sent[_VISIBLE.get(method, method)] = None
        self.emit(method, params)


_VISIBLE = {methods.PROGRESS: "progress", methods.MESSAGE: "a log message"}


class Context:
    """The request being served: its id, its ``_meta`` fields, progress and logging."""

    __slots__ = ("request_id", "method", "meta", "server", "auth", "_emit", "_asked", "_watched", "_request_state")

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        meta: RequestMeta,
        server: Server,
        emit: Emit | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self.server = server
        #: The request's verified access token (``wiremcp.auth.server.AccessToken``), or None.
        self.auth: Any = current_auth.get()
        self._emit: Emit = emit or _discard
        self._asked = 0
        self._request_state: dict[str, Any] | None = None
        if DEV:  # read once at import: outside `wiremcp dev` nothing is watched
            self._emit = self._watched = _Watched(self._emit)

    def from_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make progress and log notifications safe to send from a worker thread (hops to ``loop``)."""
        emit = self._emit

        def hop_(method: str, params: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(emit, method, params)

        hop: Emit = hop_
        self._emit = hop

    @property
    def headers(self) -> Headers | None:
        """The HTTP request's headers (read-only, case-insensitive), or None off HTTP (stdio).

        Behind the built-in resource server (``Server(auth=...)``) the credentials are left
        out (``Authorization``, ``Proxy-Authorization``, ``DPoP``, ``Cookie``): a handler never
        holds a token it could pass through; `auth` is the verified identity."""
        return header_mapping(current_headers.get())

    @property
    def request_state(self) -> dict[str, Any]:
        """A dict for this request's life, shared with the middleware (``call.state``); gone when it is answered."""
        state = self._request_state
        if state is None:
            state = current_request_state.get()
            self._request_state = state = {} if state is None else state
        return state

    @property
    def session_state(self) -> SessionState:
        """The session's keys on ``server.storage``: ``await ctx.session_state.get(key)`` / ``.set(key, value)``.

        What a session is depends on the era and the transport (docs/state.md); where nothing
        identifies one (2026-07-28 over HTTP without authorization) this raises `StateUnavailable`."""
        from ._state import session_state

        return session_state(self)

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded (None without one; see `wiremcp.server._lifespan`)."""
        return self.server.lifespan.value

    @property
    def protocol_version(self) -> str:
        """The protocol version of the request (``_meta`` ``io.modelcontextprotocol/protocolVersion``)."""
        return self.meta.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared with this request (``elicitation``, ``sampling``, ...)."""
        return self.meta.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The ``clientInfo`` the client sent with this request, or None."""
        return self.meta.client_info

    @property
    def trace_context(self) -> dict[str, str]:
        """``traceparent``, ``tracestate`` and ``baggage`` from ``_meta``, when present."""
        raw = self.meta.raw
        return {k: raw[k] for k in ("traceparent", "tracestate", "baggage") if type(raw.get(k)) is str}

    def supports(self, capability: str, mode: str | None = None) -> bool:
        """Whether the request's ``clientCapabilities`` declare ``capability`` (and ``mode``)."""
        declared = self.meta.client_capabilities.get(capability)
        if type(declared) is not dict:
            return False
        if mode is None:
            return True
        return mode in declared or (capability == "elicitation" and mode == "form" and not declared)

    # -- input from the client (basic/patterns/mrtr.mdx) ----------------------

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Several input requests at once: ``{key: {"method", "params"}}`` → ``{key: result}``.

        If the request already carries every answer (a retry), they are
        returned, checked. Otherwise the client is asked for the missing
        ones: the request ends with an ``input_required`` result and the
        handler runs again when the client retries with the answers. In a
        legacy (2025-11-25) session the same call sends real requests to the
        client and waits for the answers, so one handler serves both eras.
        """
        questions = self.meta.questions
        if questions is not None:  # 2025-11-25, or a task: real requests to the client, awaited
            check_capabilities(requests, self.meta.client_capabilities)
            answers = await questions.ask(requests)
            for key, request in requests.items():
                check_answer(key, request, answers[key])
            return answers
        answers = self.meta.inputs or {}
        missing = {k: r for k, r in requests.items() if k not in answers}
        if not missing:
            for key, request in requests.items():
                check_answer(key, request, answers[key])
            return {k: answers[k] for k in requests}
        check_capabilities(missing, self.meta.client_capabilities)
        asking = InputRequired(missing, answers)
        if DEV and self._watched.sent:  # the engine warns that this work will be done again (`warn_rerun`)
            asking.visible = tuple(self._watched.sent)
        raise asking

    def _key(self, key: str | None) -> str:
        self._asked += 1
        return key if key is not None else f"input-{self._asked}"

    @overload
    async def elicit(self, message: str, schema: dict[str, Any] | None = None, *, key: str | None = None) -> ElicitResult: ...

    @overload
    async def elicit(self, message: str, schema: type[T], *, key: str | None = None) -> Elicited[T]: ...

    @overload
    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> Elicited[Any]: ...

    async def elicit(self, message: str, schema: Any = None, *, key: str | None = None) -> ElicitResult | Elicited[Any]:
        """Ask the user to fill a form (client/elicitation.mdx).

        ``schema`` is either a type (a dataclass, TypedDict, pydantic model
        or a primitive such as ``str``; see `wiremcp.server._elicit`): the
        form is derived from it and the answer comes back as an `Elicited`
        whose ``.value`` is of that type when ``.action == "accept"``; or a
        JSON Schema dict (a flat object of primitive properties): the answer
        is the raw ElicitResult dict, its ``content`` checked against it.

        Under 2026-07-28 each question ends the request with ``input_required``
        and the handler runs again from the top when the client retries: put
        side effects after the last question, or declare the inputs as
        parameters (``Annotated[T, Elicit("...")]``) so the body runs once.
        """
        if schema is None or isinstance(schema, dict):
            form = None
        else:
            from ._elicit import form_for  # typed elicitation's forms: on first use

            form = form_for(schema)
        requested = form.schema if form is not None else schema
        params = {
            "mode": "form",
            "message": message,
            "requestedSchema": requested if requested is not None else {"type": "object", "properties": {}},
        }
        k = self._key(key)
        result: ElicitResult = (await self.ask({k: {"method": ELICIT, "params": params}}))[k]  # checked: check_answer
        if form is not None:
            return form.result(dict(result))
        return result

    async def elicit_url(self, message: str, url: str, elicitation_id: str, *, key: str | None = None) -> ElicitResult:
        """Send the user to a URL (URL-mode elicitation); returns the ElicitResult."""
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        k = self._key(key)
        result: ElicitResult = (await self.ask({k: {"method": ELICIT, "params": params}}))[k]  # checked: check_answer
        return result

    async def sample(
        self,
        messages: list[dict[str, Any]] | str,
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        key: str | None = None,
        **options: Any,
    ) -> CreateMessageResult:
        """Ask the client's LLM (client/sampling.mdx); returns the CreateMessageResult.

        ``messages`` may be a plain string: one user text message. Other
        CreateMessageRequest fields go in ``options`` by their wire names
        (``modelPreferences``, ``temperature``, ``stopSequences`` ...).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens, **options}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        k = self._key(key)
        result: CreateMessageResult = (await self.ask({k: {"method": SAMPLE, "params": params}}))[k]  # checked: check_answer
        return result

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (client/roots.mdx)."""
        k = self._key(key)
        result = (await self.ask({k: {"method": ROOTS, "params": {}}}))[k]
        roots: list[Root] = result["roots"]  # checked: an array (check_answer)
        return roots

    def close_sse_stream(self, retry_ms: int | None = None) -> bool:
        """Close the HTTP connection carrying this request's SSE stream, leaving the stream open.

        Only a 2025-11-25 session on Streamable HTTP has resumable streams: the
        client reconnects after ``retry_ms`` (a ``retry`` field sent before the
        close) with ``Last-Event-ID``, and what the handler sends afterwards,
        its result included, arrives there (2025-11-25 basic/transports.mdx,
        "Sending Messages to the Server" 6). Returns whether a connection was
        closed; elsewhere (2026-07-28, stdio) it does nothing and returns False.
        """
        session = self.meta.session
        if session is None:
            return False
        return session.close_sse_stream(self.request_id, retry_ms)

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send ``notifications/progress`` if the request asked for it (a ``progressToken``).

        Returns whether a notification was sent (patterns/progress.mdx).
        """
        token = self.meta.progress_token
        if token is None:
            return False
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._emit(methods.PROGRESS, params)
        return True

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send ``notifications/message`` if the request's ``logLevel`` admits ``level``.

        Returns whether it was sent; nothing is sent for a request that did
        not set ``io.modelcontextprotocol/logLevel`` (server/utilities/logging.mdx).
        """
        if not self.meta.wants_log(level):
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._emit(methods.MESSAGE, params)
        return True

    def debug(self, data: Any, logger: str | None = None) -> bool:
        """`log` at level ``debug``; returns whether it was sent."""
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> bool:
        """`log` at level ``info``; returns whether it was sent."""
        return self.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> bool:
        """`log` at level ``warning``; returns whether it was sent."""
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> bool:
        """`log` at level ``error``; returns whether it was sent."""
        return self.log("error", data, logger)
