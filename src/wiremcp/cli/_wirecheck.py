"""The wire checker: each envelope of a conversation against the rules of its era (sans-I/O).

`WireChecker` is fed the lines (or decoded messages) of one client–server
conversation in the order they crossed the wire, each with its direction
(``"c2s"``, client to server, or ``"s2c"``), and returns the problems it
finds in each; `finish` names the requests never answered. It does no I/O
and keeps no clock: `wiremcp tap` (live stdio traffic), `wiremcp validate`
(a capture) and the web inspector all use it.

The era is detected from the traffic, per request: a request whose
``params._meta`` carries a 2026-07-28 ``io.modelcontextprotocol/protocolVersion``
is *modern*; a request of a connection that opened an ``initialize``
handshake is *legacy*, at the revision the server's ``initialize`` result
chose. A response is judged by the era of the request it answers.

Rules (each problem has a short ``code`` and a message naming the rule):

* JSON-RPC framing: a line must be one JSON object (``parse-error``,
  ``not-an-object``, ``batch``), ``"jsonrpc": "2.0"`` (``bad-jsonrpc``), a
  request, notification or response (``invalid-envelope``), ``params`` an
  object (``bad-params``), a ``method`` string not starting ``rpc.``
  (``bad-method``, ``reserved-method``), an ``error`` with an integer
  ``code`` and a string ``message`` (``bad-error``), not both ``result``
  and ``error`` (``result-and-error``), no ``id`` on a notification.
* Ids (basic/index.mdx, "Requests"): a string or integer, never null
  (``bad-id``, ``null-id``); not the id of another request of the same
  sender still in flight (``duplicate-id``); a response answers a request
  the other side sent (``unknown-id``) and only once (``already-answered``);
  a request never answered is reported by `finish` (``never-answered``),
  unless it was cancelled.
* Methods: a method the revision does not define (``unknown-method``), sent
  in the wrong direction (``wrong-direction``); on 2026-07-28 the methods it
  removed (``removed-method``) and any server-to-client request
  (``server-request``: mrtr.mdx, servers ask through ``InputRequiredResult``).
* ``_meta`` (2026-07-28): every client request carries the protocol version
  and client capabilities (``missing-meta``); the version is one we know
  (``unknown-version``); keys have the reserved format (``bad-meta-key``).
* Results (2026-07-28): ``resultType`` present (``missing-result-type``)
  and ``"complete"`` or ``"input_required"`` (``bad-result-type``);
  caching hints ``ttlMs`` (an integer >= 0) and ``cacheScope``
  (``"public"``/``"private"``) on complete results of the cacheable methods
  (``missing-cache-hints``, ``bad-cache-hints``); the retired error code
  -32002 (``retired-error-code``).
* Results (legacy sessions): no ``resultType``, a 2026-07-28 member no
  earlier revision has (``legacy-result-type``; the legacy schemas allow
  extra members, so the schema check alone would let it pass).
* Multi round-trip requests (mrtr.mdx): ``input_required`` only on
  ``tools/call``, ``prompts/get``, ``resources/read``
  (``mrtr-not-allowed``); with ``inputRequests`` or ``requestState``
  (``mrtr-empty``); input requests of the three allowed kinds
  (``mrtr-bad-input-request``) that the client declared
  (``mrtr-undeclared-capability``); a retry echoes a ``requestState`` the
  server issued (``unknown-request-state``) and answers only keys it asked
  (``unexpected-input-response``).
* Schema (``schema``): each message against the definition its method
  names in the revision's ``schema.json`` (copies ship in
  ``wiremcp/cli/_schemas/``), with the project's compiled validator
  (`wiremcp.server.schema.compile_validator`). A revision without a copy
  (2025-06-18 and older) is not schema-checked. A message that already has
  a problem is not schema-checked again (one cause, one report).
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from importlib import resources
from typing import Any, Callable, Literal, TypedDict

import orjson

from ..protocol import LEGACY_VERSIONS, MODERN_VERSIONS
from ..protocol import meta as meta_keys
from ..protocol import methods as mcp_methods
from ..server.schema import compile_validator

__all__ = [
    "Direction", "Problem", "Checked", "WireChecker", "SCHEMA_REVISIONS", "HUNG_UP_STREAMS", "load_schema", "problem",
    "sent_by_server",
]

#: Requests that open a stream a client may hang up on (exit, close, be killed) without a violation:
#: left open when the client closed its side first, they are hung up on, not unanswered (tap, validate).
HUNG_UP_STREAMS = frozenset({"subscriptions/listen"})

Direction = Literal["c2s", "s2c"]

#: Revisions whose ``schema.json`` ships with the package.
SCHEMA_REVISIONS = ("2026-07-28", "2025-11-25")
#: How many answered ids per direction are remembered (``already-answered``).
ANSWERED_MEMORY = 4096

_MODERN = "2026-07-28"
_MRTR_METHODS = frozenset({mcp_methods.TOOLS_CALL, mcp_methods.PROMPTS_GET, mcp_methods.RESOURCES_READ})
_INPUT_KINDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
_META_PREFIX = re.compile(r"^(?:[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?/")
_META_NAME = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$")


class Problem(TypedDict):
    code: str
    message: str


def problem(code: str, message: str) -> Problem:
    return {"code": code, "message": message}


class Checked(TypedDict):
    """What the checker made of one line: the parsed message (or None) and its problems."""

    msg: Any
    problems: list[Problem]


def _other(direction: Direction) -> Direction:
    return "s2c" if direction == "c2s" else "c2s"


def _who(direction: Direction) -> str:
    return "the client" if direction == "c2s" else "the server"


def _id_key(value: Any) -> tuple[bool, Any]:
    return (type(value) is str, value)


def _show(value: Any) -> str:
    return orjson.dumps(value).decode()


@functools.cache
def load_schema(revision: str) -> dict[str, Any]:
    """The revision's ``schema.json`` shipped in ``wiremcp/cli/_schemas/``."""
    text = resources.files(__package__).joinpath("_schemas", revision, "schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


class _Revision:
    """One revision's schema: method tables and compiled validators, built on use."""

    def __init__(self, revision: str) -> None:
        self.revision = revision
        self.schema = load_schema(revision)
        defs: dict[str, Any] = self.schema["$defs"]
        self.requests: dict[str, str] = {}  # method -> Request definition name
        self.notifications: dict[str, str] = {}
        for name, body in defs.items():
            props: dict[str, Any] = (body.get("properties") if type(body) is dict else None) or {}
            method = props.get("method", {}).get("const")
            if type(method) is not str or name.startswith(("Client", "Server")):
                continue
            if "id" in props and name.endswith("Request"):
                self.requests.setdefault(method, name)
            elif name.endswith("Notification"):
                self.notifications.setdefault(method, name)
        self.client_methods = self._union_methods(("ClientRequest", "ClientNotification"))
        self.server_methods = self._union_methods(("ServerRequest", "ServerNotification"))
        self._checks: dict[str, Callable[[Any], str | None]] = {}

    def _union_methods(self, unions: tuple[str, ...]) -> frozenset[str]:
        defs = self.schema["$defs"]
        out: set[str] = set()
        for union in unions:
            body = defs.get(union) or {}
            inline = (body.get("properties") or {}).get("method", {}).get("const")
            if type(inline) is str:  # a union of one member is written out in place
                out.add(inline)
            refs = [item.get("$ref", "") for item in body.get("anyOf", ())] or [body.get("$ref", "")]
            for ref in refs:
                target = defs.get(ref.rpartition("/")[2]) or {}
                method = (target.get("properties") or {}).get("method", {}).get("const")
                if type(method) is str:
                    out.add(method)
        return frozenset(out)

    def has(self, name: str) -> bool:
        return name in self.schema["$defs"]

    def check(self, name: str, value: Any) -> str | None:
        check = self._checks.get(name)
        if check is None:
            root = {"$schema": self.schema["$schema"], "$defs": self.schema["$defs"], "$ref": f"#/$defs/{name}"}
            check = self._checks[name] = compile_validator(root)
        return check(value)

    def result_definition(self, method: str, result: Any) -> str | None:
        request = self.requests.get(method)
        if request is None:
            return None
        if (
            self.revision == _MODERN
            and type(result) is dict
            and result.get("resultType") == "input_required"
            and self.has("InputRequiredResult")
        ):
            return "InputRequiredResult"
        name = request[: -len("Request")] + "Result"
        return name if self.has(name) else "Result"


@functools.cache
def _revision(revision: str) -> _Revision:
    return _Revision(revision)


class _Pending:
    __slots__ = ("method", "revision", "capabilities", "cancelled")

    def __init__(self, method: str, revision: str | None, capabilities: Any) -> None:
        self.method = method
        self.revision = revision
        self.capabilities = capabilities
        self.cancelled = False


class WireChecker:
    """Checks one conversation; feed it in wire order with `check_line` or `check_message`."""

    def __init__(self) -> None:
        self._pending: dict[Direction, dict[tuple[bool, Any], _Pending]] = {"c2s": {}, "s2c": {}}
        self._answered: dict[Direction, OrderedDict[tuple[bool, Any], None]] = {"c2s": OrderedDict(), "s2c": OrderedDict()}
        self._legacy: str | None = None  # the revision an initialize result chose
        self._initializing = False
        self._modern_seen = False
        self._states: set[str] = set()
        self._input_keys: set[str] = set()

    @property
    def era(self) -> Literal["modern", "legacy"] | None:
        """The era seen so far: legacy once ``initialize`` was sent, modern once a modern request was."""
        if self._legacy is not None or self._initializing:
            return "legacy"
        return "modern" if self._modern_seen else None

    @property
    def revision(self) -> str | None:
        return self._legacy if self._legacy is not None else (_MODERN if self._modern_seen else None)

    # -- entry points ---------------------------------------------------------

    def check_line(self, direction: Direction, line: bytes) -> Checked:
        """Parse and check one line (its newline may be included)."""
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            return {
                "msg": None,
                "problems": [
                    problem(
                        "parse-error",
                        f"{_who(direction)} wrote a line that is not JSON ({exc}); on stdio every line "
                        "must be one JSON-RPC message (transports/stdio.mdx)",
                    )
                ],
            }
        return {"msg": msg, "problems": self.check_message(direction, msg)}

    def check_message(self, direction: Direction, msg: Any) -> list[Problem]:
        """The problems of one decoded message."""
        if type(msg) is list:
            return [problem("batch", "a JSON array is a JSON-RPC batch, which MCP does not allow (one message per line)")]
        if type(msg) is not dict:
            return [problem("not-an-object", f"a JSON-RPC message is a JSON object, not {_show(msg)[:60]}")]
        problems: list[Problem] = []
        if msg.get("jsonrpc") != "2.0":
            problems.append(problem("bad-jsonrpc", f'"jsonrpc" must be exactly "2.0", not {_show(msg.get("jsonrpc"))} (JSON-RPC 2.0)'))
        if "method" in msg:
            if "result" in msg or "error" in msg:
                problems.append(problem("invalid-envelope", "a message with a method is a request or notification; it carries no result or error"))
            if "id" in msg:
                self._request(direction, msg, problems)
            else:
                self._notification(direction, msg, problems)
        elif "result" in msg or "error" in msg:
            self._response(direction, msg, problems)
        else:
            problems.append(
                problem("invalid-envelope", "not a request (method and id), notification (method) or response (id and result or error)")
            )
        return problems

    def inflight(self) -> list[tuple[Direction, Any, str]]:
        """Requests still waiting for an answer: ``(sender's direction, id, method)``, cancelled ones excluded."""
        return [
            (direction, key[1], pending.method)
            for direction, table in self._pending.items()
            for key, pending in table.items()
            if not pending.cancelled
        ]

    def finish(self) -> list[tuple[Direction, Problem]]:
        """The end of the conversation: one ``never-answered`` problem per request left without a reply.

        Each comes with the direction its reply should have travelled.
        """
        out: list[tuple[Direction, Problem]] = []
        for direction, request_id, method in self.inflight():
            out.append(
                (
                    _other(direction),
                    problem(
                        "never-answered",
                        f"request {_show(request_id)} ({method}) from {_who(direction)} was never answered; "
                        "every request gets exactly one response (JSON-RPC 2.0)",
                    ),
                )
            )
        return out

    # -- requests and notifications -------------------------------------------

    def _method(self, direction: Direction, msg: dict[str, Any], problems: list[Problem]) -> str | None:
        method = msg["method"]
        if type(method) is not str:
            problems.append(problem("bad-method", f'"method" must be a string, not {_show(method)[:60]}'))
            return None
        if method.startswith("rpc."):
            problems.append(problem("reserved-method", f"method names starting with 'rpc.' are reserved by JSON-RPC 2.0: {method!r}"))
        params = msg.get("params")
        if "params" in msg and type(params) is not dict:
            problems.append(problem("bad-params", f'"params" must be an object in MCP, not {_show(params)[:60]}'))
        elif type(params) is dict:
            meta = params.get("_meta")
            if meta is not None and type(meta) is not dict:
                problems.append(problem("bad-meta", "params._meta must be an object (basic/index.mdx, _meta)"))
            elif type(meta) is dict:
                self._meta_keys(meta, problems)
        return method

    def _meta_keys(self, meta: dict[str, Any], problems: list[Problem]) -> None:
        for key in meta:
            prefix_end = key.rfind("/") + 1
            prefix, name = key[:prefix_end], key[prefix_end:]
            if (prefix and not _META_PREFIX.match(prefix)) or not _META_NAME.match(name):
                problems.append(
                    problem("bad-meta-key", f"_meta key {key!r} is not [prefix/]name with the reserved format (basic/index.mdx, _meta)")
                )

    def _request_revision(self, direction: Direction, msg: dict[str, Any], method: str) -> tuple[str | None, Any]:
        """The revision a request belongs to, and its client capabilities (modern)."""
        params = msg.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        version = meta.get(meta_keys.PROTOCOL_VERSION) if type(meta) is dict else None
        if type(version) is str and version in MODERN_VERSIONS:
            return _MODERN, meta.get(meta_keys.CLIENT_CAPABILITIES) if type(meta) is dict else None
        return self._legacy, None

    def _request(self, direction: Direction, msg: dict[str, Any], problems: list[Problem]) -> None:
        request_id = msg["id"]
        method = self._method(direction, msg, problems)
        id_ok = True
        if request_id is None:
            problems.append(problem("null-id", "a request id MUST NOT be null in MCP (basic/index.mdx, Requests)"))
            id_ok = False
        elif type(request_id) is not str and type(request_id) is not int:
            problems.append(problem("bad-id", f"a request id must be a string or an integer, not {_show(request_id)[:40]}"))
            id_ok = False
        if method is None:
            return
        revision, capabilities = self._request_revision(direction, msg, method)
        if direction == "c2s":
            self._client_request(msg, method, revision, problems)
        elif revision == _MODERN or (revision is None and self._modern_seen):
            revision = None  # not a method of the revision at all: the one problem is that it was sent
            problems.append(
                problem(
                    "server-request",
                    f"the server sent a {method!r} request; on 2026-07-28 servers MUST NOT send requests to the "
                    "client and ask through an InputRequiredResult instead (mrtr.mdx)",
                )
            )
        self._known_method(direction, method, revision, problems, request=True)
        if id_ok:
            table = self._pending[direction]
            key = _id_key(request_id)
            if key in table:
                problems.append(
                    problem(
                        "duplicate-id",
                        f"request id {_show(request_id)} is already in flight from {_who(direction)} ({table[key].method}); "
                        "an id MUST NOT match another request the sender has not had answered (basic/index.mdx)",
                    )
                )
            else:
                table[key] = _Pending(method, revision, capabilities)
        if not problems and revision is not None:
            self._schema(revision, msg, (_revision(revision).requests.get(method) if revision in SCHEMA_REVISIONS else None), problems, "")

    def _client_request(self, msg: dict[str, Any], method: str, revision: str | None, problems: list[Problem]) -> None:
        params = msg.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        if method == "initialize":
            self._initializing = True
            return
        if revision == _MODERN:
            self._modern_seen = True
            assert type(meta) is dict
            if type(meta.get(meta_keys.CLIENT_CAPABILITIES)) is not dict:
                problems.append(
                    problem(
                        "missing-meta",
                        f"params._meta must carry '{meta_keys.CLIENT_CAPABILITIES}' (an object) on every 2026-07-28 request (basic/index.mdx)",
                    )
                )
            if method in mcp_methods.REMOVED_IN_MODERN:
                problems.append(problem("removed-method", f"2026-07-28 removed {method!r} (changelog.mdx); a modern server answers -32601"))
            if type(params) is dict:
                self._mrtr_retry(params, problems)
            return
        if self._legacy is not None or self._initializing:
            return
        version = meta.get(meta_keys.PROTOCOL_VERSION) if type(meta) is dict else None
        if version is not None and version not in LEGACY_VERSIONS:
            problems.append(problem("unknown-version", f"protocol version {_show(version)[:40]} is not a revision wiremcp knows"))
        elif version is None:
            problems.append(
                problem(
                    "missing-meta",
                    f"a {method!r} request with no '{meta_keys.PROTOCOL_VERSION}' in params._meta and no initialize "
                    "handshake before it: 2026-07-28 requests carry the version in _meta, legacy sessions start with initialize",
                )
            )

    def _mrtr_retry(self, params: dict[str, Any], problems: list[Problem]) -> None:
        state = params.get("requestState")
        if state is not None and state not in self._states:
            problems.append(
                problem(
                    "unknown-request-state",
                    "the retry's requestState is not one the server issued; clients MUST echo it exactly (mrtr.mdx)",
                )
            )
        answers = params.get("inputResponses")
        if type(answers) is dict:
            extra = sorted(k for k in answers if k not in self._input_keys)
            if extra:
                problems.append(
                    problem(
                        "unexpected-input-response",
                        f"inputResponses answers {', '.join(map(repr, extra))}, which no inputRequests asked for (mrtr.mdx)",
                    )
                )

    def _known_method(self, direction: Direction, method: str, revision: str | None, problems: list[Problem], request: bool) -> None:
        if revision not in SCHEMA_REVISIONS or method.startswith("rpc."):
            return
        rev = _revision(revision)
        table = rev.requests if request else rev.notifications
        if method not in table:
            if revision == _MODERN and method in mcp_methods.REMOVED_IN_MODERN:
                return
            kind = "request" if request else "notification"
            problems.append(problem("unknown-method", f"{method!r} is not a {kind} of revision {revision} (schema.json)"))
            return
        sender_methods = rev.client_methods if direction == "c2s" else rev.server_methods
        if rev.client_methods and rev.server_methods and method not in sender_methods:
            problems.append(problem("wrong-direction", f"{method!r} is not sent by {_who(direction)} in revision {revision}"))

    def _notification(self, direction: Direction, msg: dict[str, Any], problems: list[Problem]) -> None:
        method = self._method(direction, msg, problems)
        if method is None:
            return
        revision = self._legacy if self._legacy is not None else (_MODERN if self._modern_seen else None)
        self._known_method(direction, method, revision, problems, request=False)
        if method == mcp_methods.CANCELLED:
            params = msg.get("params")
            target = params.get("requestId") if type(params) is dict else None
            key = _id_key(target)
            pending = self._pending[direction].get(key)
            if pending is not None:
                pending.cancelled = True
            elif key not in self._answered[direction] and target is not None:
                problems.append(
                    problem(
                        "cancel-unknown",
                        f"notifications/cancelled names request {_show(target)[:40]}, which {_who(direction)} never sent (cancellation.mdx)",
                    )
                )
        if not problems and revision in SCHEMA_REVISIONS:
            self._schema(revision, msg, _revision(revision).notifications.get(method), problems, "")

    # -- responses ------------------------------------------------------------

    def _response(self, direction: Direction, msg: dict[str, Any], problems: list[Problem]) -> None:
        if "result" in msg and "error" in msg:
            problems.append(problem("result-and-error", "a response carries either result or error, never both (JSON-RPC 2.0)"))
        is_error = "error" in msg
        if "id" not in msg:
            if is_error:  # an error to a request whose id could not be read: the schema makes its id optional
                self._error_object(msg["error"], problems)
                return
            problems.append(problem("invalid-envelope", "a response must carry the id of the request it answers"))
            return
        response_id = msg["id"]
        if is_error:
            self._error_object(msg["error"], problems)
        if response_id is None:
            if not is_error:
                problems.append(problem("null-id", "only an error response (to a request whose id could not be read) may have a null id"))
            return
        if type(response_id) is not str and type(response_id) is not int:
            problems.append(problem("bad-id", f"a response id is a string or an integer (the request's), not {_show(response_id)[:40]}"))
            return
        requester = _other(direction)
        key = _id_key(response_id)
        pending = self._pending[requester].pop(key, None)
        if pending is None:
            if key in self._answered[requester]:
                problems.append(
                    problem(
                        "already-answered",
                        f"{_who(direction)} answered request {_show(response_id)[:40]} again; each request gets exactly one response",
                    )
                )
            else:
                problems.append(
                    problem(
                        "unknown-id",
                        f"{_who(direction)} replied to id {_show(response_id)[:40]}, which {_who(requester)} never sent as a request "
                        "(responses MUST carry the id of the request they answer)",
                    )
                )
            return
        answered = self._answered[requester]
        answered[key] = None
        if len(answered) > ANSWERED_MEMORY:
            answered.popitem(last=False)
        if pending.method == "initialize" and direction == "s2c" and not is_error:
            result = msg.get("result")
            version = result.get("protocolVersion") if type(result) is dict else None
            if type(version) is str:
                self._legacy = version
                if version not in LEGACY_VERSIONS:
                    problems.append(problem("unknown-version", f"the server chose protocol version {version!r}, not a revision wiremcp knows"))
            return
        if is_error:
            if pending.revision == _MODERN and type(msg["error"]) is dict and msg["error"].get("code") == -32002:
                problems.append(
                    problem("retired-error-code", "2026-07-28 implementations MUST NOT emit -32002 (resource not found is -32602 now)")
                )
            if not problems and pending.revision in SCHEMA_REVISIONS:
                self._schema(pending.revision, msg, "JSONRPCErrorResponse", problems, "")
            return
        result = msg.get("result")
        if type(result) is not dict:
            problems.append(problem("bad-result", f"an MCP result is a JSON object, not {_show(result)[:40]}"))
            return
        if pending.revision == _MODERN and direction == "s2c":
            self._modern_result(pending, result, problems)
        elif pending.revision is not None and direction == "s2c" and "resultType" in result:
            problems.append(
                problem(
                    "legacy-result-type",
                    f"the {pending.method} result of a {pending.revision} session carries resultType, a 2026-07-28 member "
                    "no earlier revision has (schema.mdx, Result): a legacy session's results must not carry it",
                )
            )
        if not problems and pending.revision in SCHEMA_REVISIONS:
            rev = _revision(pending.revision)
            self._schema(pending.revision, result, rev.result_definition(pending.method, result), problems, "the result ")

    def _error_object(self, error: Any, problems: list[Problem]) -> None:
        if type(error) is not dict:
            problems.append(problem("bad-error", '"error" must be an object with "code" and "message" (JSON-RPC 2.0)'))
            return
        if type(error.get("code")) is not int:
            problems.append(problem("bad-error", f'error "code" must be an integer, not {_show(error.get("code"))[:40]}'))
        if type(error.get("message")) is not str:
            problems.append(problem("bad-error", 'error "message" must be a string'))

    def _modern_result(self, pending: _Pending, result: dict[str, Any], problems: list[Problem]) -> None:
        kind = result.get("resultType")
        if kind is None:
            problems.append(
                problem(
                    "missing-result-type",
                    f"the {pending.method} result has no resultType; on 2026-07-28 every result MUST include it "
                    '("complete" or "input_required", basic/index.mdx)',
                )
            )
            kind = "complete"
        elif kind not in ("complete", "input_required"):
            problems.append(problem("bad-result-type", f'resultType {_show(kind)[:40]} is not "complete" or "input_required"'))
            return
        if kind == "input_required":
            self._input_required(pending, result, problems)
        elif pending.method in mcp_methods.CACHEABLE:
            ttl, scope = result.get("ttlMs"), result.get("cacheScope")
            if ttl is None or scope is None:
                missing = " and ".join(n for n, v in (("ttlMs", ttl), ("cacheScope", scope)) if v is None)
                problems.append(
                    problem("missing-cache-hints", f"the {pending.method} result lacks {missing}; servers MUST include caching hints (caching.mdx)")
                )
            else:
                if type(ttl) is not int or ttl < 0:
                    problems.append(problem("bad-cache-hints", f"ttlMs must be an integer >= 0, not {_show(ttl)[:40]} (caching.mdx)"))
                if scope not in ("public", "private"):
                    problems.append(problem("bad-cache-hints", f'cacheScope must be "public" or "private", not {_show(scope)[:40]}'))

    def _input_required(self, pending: _Pending, result: dict[str, Any], problems: list[Problem]) -> None:
        if pending.method not in _MRTR_METHODS:
            problems.append(
                problem(
                    "mrtr-not-allowed",
                    f"an input_required result answers {pending.method!r}; only tools/call, prompts/get and resources/read may ask for input (mrtr.mdx)",
                )
            )
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if requests is None and state is None:
            problems.append(problem("mrtr-empty", "an InputRequiredResult MUST include inputRequests or requestState (mrtr.mdx)"))
        if type(state) is str:
            self._states.add(state)
        if type(requests) is dict:
            caps = pending.capabilities if type(pending.capabilities) is dict else {}
            for key, request in requests.items():
                self._input_keys.add(key)
                method = request.get("method") if type(request) is dict else None
                capability = _INPUT_KINDS.get(method) if type(method) is str else None
                if capability is None:
                    problems.append(
                        problem(
                            "mrtr-bad-input-request",
                            f"inputRequests[{key!r}] is {_show(method)[:40]}; input requests are elicitation/create, sampling/createMessage or roots/list",
                        )
                    )
                elif capability not in caps:
                    problems.append(
                        problem(
                            "mrtr-undeclared-capability",
                            f"inputRequests[{key!r}] asks for {method}, but the client did not declare the {capability!r} capability (mrtr.mdx)",
                        )
                    )

    # -- schema ---------------------------------------------------------------

    def _schema(self, revision: str, value: Any, definition: str | None, problems: list[Problem], what: str) -> None:
        if definition is None or revision not in SCHEMA_REVISIONS:
            return
        found = _revision(revision).check(definition, value)
        if found is not None:
            problems.append(problem("schema", f"{what or 'the message '}is not a valid {definition} (schema.json of {revision}): {found}"))


def sent_by_server(method: Any) -> bool:
    """Whether ``method`` is one only servers send (in any revision shipped): a guess at a message's direction."""
    if type(method) is not str:
        return False
    for revision in SCHEMA_REVISIONS:
        rev = _revision(revision)
        if method in rev.server_methods and method not in rev.client_methods:
            return True
    return method in ("elicitation/create", "sampling/createMessage", "roots/list")
