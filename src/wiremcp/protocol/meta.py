"""``_meta`` keys and the per-request protocol fields (basic/index.mdx, "_meta").

Every modern request carries, in ``params._meta``:

=============================================  ========  =========================
key                                            required  checked here
=============================================  ========  =========================
``io.modelcontextprotocol/protocolVersion``    yes       a string; a supported one
``io.modelcontextprotocol/clientCapabilities`` yes       an object
``io.modelcontextprotocol/clientInfo``         no        an object when present
``io.modelcontextprotocol/logLevel``           no        a LoggingLevel when present
``progressToken``                              no        a string or integer
=============================================  ========  =========================

A missing or mistyped field is -32602 (HTTP 400); a version the server does
not support is -32022 with ``data.supported`` and ``data.requested``. The
version is checked before the other fields, since another revision may
define them differently.

A `RequestMeta` says its era (``era``: ``"modern"`` for a request carrying
these fields, ``"legacy"`` for one of a 2025-11-25 session, whose fields come
from ``initialize``), set where it is built; nothing infers the era from
another field. Questions a handler puts to the client go through one channel
(``questions``): None for a modern request (multi round-trip requests), the
session for a legacy request, a task's own channel for a task's body.
"""

from __future__ import annotations

from typing import Any, Iterable, Literal, Protocol

from ..jsonrpc import InvalidParams
from .errors import UnsupportedProtocolVersion

__all__ = [
    "PROTOCOL_VERSION",
    "CLIENT_INFO",
    "CLIENT_CAPABILITIES",
    "LOG_LEVEL",
    "SUBSCRIPTION_ID",
    "SERVER_INFO",
    "PROGRESS_TOKEN",
    "LOG_LEVELS",
    "RequestMeta",
    "RequestEra",
    "ClientQuestions",
    "LegacySessionLike",
    "parse_request_meta",
]

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
PROGRESS_TOKEN = "progressToken"

#: RFC 5424 severities, least severe first (server/utilities/logging.mdx).
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LEVEL_RANK = {name: rank for rank, name in enumerate(LOG_LEVELS)}


#: The era of one request: ``"modern"`` (2026-07-28, per-request ``_meta``) or ``"legacy"`` (2025-11-25 session).
RequestEra = Literal["modern", "legacy"]


class ClientQuestions(Protocol):
    """A channel for a handler's questions to the client (elicitation, sampling, roots), answered in place.

    A legacy session sends them as real requests; a task parks itself until
    the client answers (``tasks/update``, or the session's replies).
    """

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Put each ``{"method", "params"}`` to the client; the results by key."""
        ...


class LegacySessionLike(ClientQuestions, Protocol):
    """What a request of a legacy (2025-11-25) session can ask of its session.

    The server's legacy session (``wiremcp.server._legacy.LegacySession``)
    implements it; it is named here so that `RequestMeta` can carry one.
    """

    def close_sse_stream(self, request_id: Any, retry_ms: int | None = None) -> bool:
        """Close the connection carrying this request's SSE stream (Streamable HTTP only)."""
        ...


class RequestMeta:
    """The validated protocol fields of one request's ``_meta``."""

    __slots__ = (
        "protocol_version", "client_capabilities", "client_info", "log_level", "progress_token", "raw", "era",
        "inputs", "session", "_questions", "origin_session",
    )
    #: A task's fields only (`for_task`): the legacy session of the request that made the task.
    origin_session: LegacySessionLike | None

    def __init__(
        self,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        raw: dict[str, Any] | None = None,
        era: RequestEra = "modern",
    ) -> None:
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level = log_level
        self.progress_token = progress_token
        self.raw = raw if raw is not None else {}
        #: The request's era, said where it is built (never inferred from ``session``).
        self.era: RequestEra = era
        #: Multi round-trip answers verified for this request (its earlier rounds'
        #: answers from ``requestState`` plus its ``inputResponses``), or None.
        self.inputs: dict[str, Any] | None = None
        #: The legacy (2025-11-25) session the request belongs to, or None (modern).
        self.session: LegacySessionLike | None = None
        self._questions: ClientQuestions | None = None

    @property
    def questions(self) -> ClientQuestions | None:
        """Where the handler's questions to the client go (None: multi round-trip requests).

        A task's channel when one was given (`for_task`), else the legacy session.
        """
        return self._questions if self._questions is not None else self.session

    def for_task(self, task_id: str, questions: ClientQuestions) -> RequestMeta:
        """The fields a task's body sees: this era and client, no log level, no session, its own channel.

        ``progress_token`` is the task's id: progress reported by the body
        becomes the task's status message (the task runtime's own sink).
        """
        meta = RequestMeta(
            self.protocol_version, self.client_capabilities, self.client_info, None, task_id, self.raw, self.era
        )
        meta._questions = questions
        # Not the session (the body must not use it), but what names it: a task's
        # ``ctx.session_state`` is its request's (server/_state.py). Unset on any other meta.
        meta.origin_session = self.session
        return meta

    def wants_log(self, level: str) -> bool:
        """Whether a message at ``level`` may be sent for this request.

        Never, when the request did not set ``logLevel`` (logging.mdx: servers
        MUST NOT emit notifications/message for such requests).
        """
        if self.log_level is None:
            return False
        return _LEVEL_RANK[level] >= _LEVEL_RANK[self.log_level]

    def __repr__(self) -> str:
        return (
            f"RequestMeta(protocol_version={self.protocol_version!r}, "
            f"client_capabilities={self.client_capabilities!r}, client_info={self.client_info!r}, "
            f"log_level={self.log_level!r}, progress_token={self.progress_token!r}, era={self.era!r})"
        )


def _missing(what: str) -> InvalidParams:
    return InvalidParams(
        f"Invalid params: {what}; every request must carry params._meta with "
        f"'{PROTOCOL_VERSION}' and '{CLIENT_CAPABILITIES}'"
    )


def parse_request_meta(params: dict[str, Any] | None, supported: Iterable[str]) -> RequestMeta:
    """Validate the per-request protocol fields, or raise the exact error."""
    if params is None:
        raise _missing("the request has no params")
    meta = params.get("_meta")
    if meta is None:
        raise _missing("params._meta is missing")
    if type(meta) is not dict:
        raise InvalidParams("Invalid params: params._meta must be an object")
    version = meta.get(PROTOCOL_VERSION)
    if version is None:
        raise _missing(f"'{PROTOCOL_VERSION}' is missing from params._meta")
    if type(version) is not str:
        raise InvalidParams(f"Invalid params: '{PROTOCOL_VERSION}' must be a string")
    if version not in supported:
        raise UnsupportedProtocolVersion(version, supported)
    caps = meta.get(CLIENT_CAPABILITIES)
    if caps is None:
        raise _missing(f"'{CLIENT_CAPABILITIES}' is missing from params._meta")
    if type(caps) is not dict:
        raise InvalidParams(f"Invalid params: '{CLIENT_CAPABILITIES}' must be an object")
    info = meta.get(CLIENT_INFO)
    if info is not None and type(info) is not dict:
        raise InvalidParams(f"Invalid params: '{CLIENT_INFO}' must be an object with name and version")
    level = meta.get(LOG_LEVEL)
    if level is not None and (type(level) is not str or level not in _LEVEL_RANK):
        raise InvalidParams(
            f"Invalid params: '{LOG_LEVEL}' must be one of {', '.join(LOG_LEVELS)}"
        )
    token = meta.get(PROGRESS_TOKEN)
    if token is not None and type(token) is not str and type(token) is not int:
        raise InvalidParams("Invalid params: 'progressToken' must be a string or an integer")
    return RequestMeta(version, caps, info, level, token, meta)
