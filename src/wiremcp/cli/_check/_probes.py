"""The wire probes of ``wiremcp check``: hostile and edge-case envelopes, and what the server must answer.

Each probe is one rule (declared here, with the words of the spec it
enforces) and a coroutine run in a fresh session of one era
(`_context.Target.open`): it sends what the rule is about, reads what comes
back up to a synchronisation point (`_context.Era.sync`), and returns the
findings. A server that stops answering, or dies, fails the probe that did
it (the runner says so: `_runner`).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from ._conn import HttpConn, Session, dumps
from ._context import Era
from ._findings import Finding, Rule, rule

__all__ = ["Probe", "PROBES"]

_JSONRPC = "JSON-RPC 2.0 specification, 5.1 Error object"
_INVALID_ID = (
    "If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be Null. "
    "(MCP: Error responses MUST include the same ID as the request they correspond to (except in error cases where the ID "
    "could not be read due a malformed request); its schema makes that id optional.) "
    "-32600 Invalid Request: The JSON sent is not a valid Request object."
)

ProbeFn = Callable[[Session, Era, Rule], Awaitable[list[Finding]]]


class Probe:
    """A rule and the coroutine that checks it."""

    def __init__(self, checks: Rule, run: ProbeFn, eras: tuple[str, ...] = ("modern", "legacy")) -> None:
        self.rule = checks
        self.run = run
        self.eras = eras


# -- helpers ---------------------------------------------------------------------


def _error_code(msg: Any) -> Any:
    error = msg.get("error") if type(msg) is dict else None
    return error.get("code") if type(error) is dict else None


def _responses(messages: list[Any]) -> list[Any]:
    return [m for m in messages if not (type(m) is dict and "method" in m)]


async def _after(session: Session, era: Era) -> list[Any]:
    """The server's responses to what was just sent: everything up to the sync point's answer."""
    if isinstance(session.conn, HttpConn):
        await session.conn.settle()
    _, before = await era.sync(session)
    session.backlog.clear()
    return _responses(before)


def _request(era: Era, session: Session, method: str = "", **extra: Any) -> dict[str, Any]:
    sync = era.sync_message(session)
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": session.next_id("probe"), "method": method or sync["method"]}
    if "params" in sync:
        msg["params"] = sync["params"]
    msg.update(extra)
    return msg


def _finding(checks: Rule, session: Session, since: int, message: str, subject: str = "") -> Finding:
    return Finding(checks, message, subject, session.envelopes(since))


def _expect_error(
    checks: Rule, session: Session, since: int, replies: list[Any], codes: tuple[int, ...], ids: tuple[Any, ...], what: str,
    raw: bytes | None = None,
) -> list[Finding]:
    """One error reply with a code of ``codes`` and an id of ``ids``, else a finding."""
    want = " or ".join(str(c) for c in codes)
    conn = session.conn
    if not replies and isinstance(conn, HttpConn) and raw is not None and 400 <= (conn.status_of(raw) or 0) < 500:
        return []  # refused by its HTTP status: the JSON-RPC error in the body is a MAY (streamable-http.mdx)
    if not replies:
        return [_finding(checks, session, since, f"no reply (expected an error {want})", what)]
    reply = replies[0]
    if type(reply) is list:
        return [_finding(checks, session, since, f"the reply is a JSON array (a batch reply), not one error {want}", what)]
    code = _error_code(reply)
    if code is None:
        return [_finding(checks, session, since, f"the reply is not an error (expected {want})", what)]
    found: list[Finding] = []
    if code not in codes:
        found.append(_finding(checks, session, since, f"error {code}, expected {want}", what))
    reply_id = reply.get("id") if type(reply) is dict else None  # absent is null: the schema makes it optional
    if not any(reply_id == i and type(reply_id) is type(i) for i in ids):
        shown = " or ".join("null (or none)" if i is None else repr(i) for i in ids)
        found.append(_finding(checks, session, since, f"the error's id is {dumps(reply_id).decode()}, expected {shown}", what))
    return found


# -- probes ----------------------------------------------------------------------


async def _bad_jsonrpc(session: Session, era: Era, checks: Rule) -> list[Finding]:
    found: list[Finding] = []
    for version in ("1.0", 2.0, None):
        since = len(session.transcript)
        msg = _request(era, session, jsonrpc=version)
        await session.send(msg, hostile=True)
        replies = await _after(session, era)
        found += _expect_error(checks, session, since, replies, (-32600,), (msg["id"], None), f'"jsonrpc": {version!r}', dumps(msg))
    return found


async def _bad_id(session: Session, era: Era, checks: Rule) -> list[Finding]:
    found: list[Finding] = []
    for value in (None, 1.5, {"a": 1}, [1], True):
        since = len(session.transcript)
        msg = _request(era, session)
        msg["id"] = value
        await session.send(msg, hostile=True)
        replies = await _after(session, era)
        found += _expect_error(checks, session, since, replies, (-32600,), (None,), f"id {value!r}", dumps(msg))
    return found


async def _batch(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    batch = [_request(era, session), _request(era, session)]
    await session.send(batch, hostile=True)
    replies = await _after(session, era)
    return _expect_error(checks, session, since, replies, (-32600,), (None,), "a batch of two requests", dumps(batch))


async def _bad_params(session: Session, era: Era, checks: Rule) -> list[Finding]:
    found: list[Finding] = []
    for params in ([1], "text", 7):
        since = len(session.transcript)
        msg = _request(era, session, params=params)
        await session.send(msg, hostile=True)
        replies = await _after(session, era)
        found += _expect_error(checks, session, since, replies, (-32602, -32600), (msg["id"], None), f'"params": {params!r}', dumps(msg))
    return found


async def _unknown_method(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    msg = _request(era, session, "wiremcp-check/no-such-method")
    await session.send(msg, hostile=True)
    replies = await _after(session, era)
    found = _expect_error(checks, session, since, replies, (-32601,), (msg["id"],), "an unknown method")
    conn = session.conn
    if isinstance(conn, HttpConn) and era.name == "modern":
        status = next((s for raw, s, _ in conn.statuses if b"no-such-method" in raw), None)
        if status != 404:
            found.append(_finding(checks, session, since, f"an unknown method over HTTP: status {status}, expected 404", "HTTP status"))
    return found


async def _notification(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    await session.send({"jsonrpc": "2.0", "method": "notifications/wiremcp-check-unknown", "params": {}}, hostile=True)
    await session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}, hostile=True)
    replies = await _after(session, era)
    found = [
        _finding(checks, session, since, f"a notification got a reply: {dumps(reply).decode()[:160]}", "notification") for reply in replies
    ]
    conn = session.conn
    if isinstance(conn, HttpConn):
        for raw, status, body in conn.statuses:
            if b'"notifications/' in raw and (status != 202 or body.strip()):
                found.append(
                    _finding(checks, session, since, f"a notification over HTTP: status {status} with {len(body)} body bytes, expected 202 and no body", "HTTP status")
                )
    return found


async def _duplicate_id(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    first = _request(era, session)
    second = dict(first)
    await session.send(first, hostile=True)
    await session.send(second, hostile=True)
    replies = await _after(session, era)
    answered = [r for r in replies if type(r) is dict and r.get("id") in (first["id"], None)]
    if not answered:
        return [_finding(checks, session, since, "two requests with one id: neither was answered", "duplicate id")]
    return []


async def _malformed(session: Session, era: Era, checks: Rule) -> list[Finding]:
    found: list[Finding] = []
    for raw in (b'{"jsonrpc": "2.0", "id": 1, "method": ', b"{not json}", b"\xff\xfe"):
        since = len(session.transcript)
        await session.write(raw)
        replies = await _after(session, era)
        found += _expect_error(checks, session, since, replies, (-32700,), (None,), f"the line {raw[:30]!r}", raw)
    return found


async def _oversize(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    msg = _request(era, session)
    msg.setdefault("params", {})
    msg["params"] = {**msg["params"], "wiremcpCheckPadding": "x" * (4 * 1024 * 1024)}
    return await _survives(session, era, checks, since, msg, "a 4 MiB request")


async def _deep(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    msg = _request(era, session)
    depth = 100_000
    raw = b'{"jsonrpc":"2.0","id":"%s","method":"%s","params":{"deep":' % (msg["id"].encode(), msg["method"].encode())
    raw += b"[" * depth + b"]" * depth + b"}}"
    session.mark_hostile(msg["id"])  # too deep for the checker to read: a reply to it is not to an unknown id
    await session.write(raw, msg["method"])
    return await _survives(session, era, checks, since, None, f"a request nested {depth} arrays deep", msg["id"])


async def _survives(
    session: Session, era: Era, checks: Rule, since: int, msg: Any, what: str, request_id: Any = None
) -> list[Finding]:
    """Sent ``msg`` (or already written): some answer (a reply or an HTTP error status), then the server still serves."""
    if msg is not None:
        await session.send(msg, hostile=True)
        request_id = msg["id"]
    replies = await _after(session, era)
    if any(type(r) is dict and r.get("id") in (request_id, None) for r in replies):
        return []
    conn = session.conn
    if isinstance(conn, HttpConn) and any(400 <= status < 500 for _, status, _ in conn.statuses):
        return []
    return [_finding(checks, session, since, "no reply at all (expected a result or an error)", what)]


async def _cancel(session: Session, era: Era, checks: Rule) -> list[Finding]:
    since = len(session.transcript)
    msg = _request(era, session)
    await session.send(msg, hostile=True)
    await session.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg["id"], "reason": "wiremcp check"}})
    replies = await _after(session, era)
    found = []
    stray = [r for r in replies if not (type(r) is dict and r.get("id") == msg["id"])]
    if stray:
        found.append(_finding(checks, session, since, f"the cancellation got a reply: {dumps(stray[0]).decode()[:160]}", "notifications/cancelled"))
    if len(replies) - len(stray) > 1:
        found.append(_finding(checks, session, since, "the cancelled request was answered more than once", "notifications/cancelled"))
    return found


JSONRPC_VERSION = rule(
    "wire-rejects-bad-jsonrpc", "wire", "error", 'A message whose "jsonrpc" is not "2.0" gets error -32600',
    'jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be exactly "2.0". ' + _INVALID_ID, _JSONRPC,
)
BAD_ID = rule(
    "wire-rejects-bad-id", "wire", "error", "A request whose id is null, a float, an object, an array or a boolean gets -32600 with id null",
    "Requests MUST include a string or integer ID. Unlike base JSON-RPC, the ID MUST NOT be null. " + _INVALID_ID,
    "basic/index.mdx (2026-07-28), Requests; " + _JSONRPC,
)
BATCH = rule(
    "wire-rejects-batch", "wire", "error", "A batch (a JSON array) gets one error -32600",
    "Messages are individual JSON-RPC requests, notifications, or responses. (2025-06-18 removed JSON-RPC batching.) " + _INVALID_ID,
    "basic/transports/stdio.mdx; changelog 2025-06-18",
)
BAD_PARAMS = rule(
    "wire-rejects-bad-params", "wire", "error", "A request whose params is not an object gets -32602 (or -32600)",
    "params?: { [key: string]: unknown } -- If present, parameters for the rpc call MUST be provided as a Structured value. "
    "-32602 Invalid params: Invalid method parameter(s).", "basic/index.mdx (2026-07-28), Requests; " + _JSONRPC,
)
UNKNOWN_METHOD = rule(
    "wire-method-not-found", "wire", "error", "An unknown method gets -32601 (on modern HTTP, with status 404)",
    "-32601 Method not found: The method does not exist / is not available. If the server does not implement the requested "
    "RPC method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601.",
    _JSONRPC + "; basic/transports/streamable-http.mdx (2026-07-28), Protocol Version Header",
)
NOTIFICATION = rule(
    "wire-notification-no-reply", "wire", "error", "A notification gets no reply (over HTTP: 202 and no body)",
    "Notifications are sent from the client to the server or vice versa, as a one-way message. The receiver MUST NOT send a response.",
    "basic/index.mdx (2026-07-28), Notifications",
)
DUPLICATE = rule(
    "wire-survives-duplicate-id", "wire", "warning", "Two requests with one id in flight: the server answers and keeps serving",
    "The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for.",
    "basic/index.mdx (2026-07-28), Requests",
)
MALFORMED = rule(
    "wire-rejects-malformed-json", "wire", "error", "A line that is not JSON gets -32700 with id null, and the server keeps serving",
    "-32700 Parse error: Invalid JSON was received by the server. " + _INVALID_ID, _JSONRPC,
)
OVERSIZE = rule(
    "wire-survives-oversize", "wire", "error", "A 4 MiB request gets an answer (a result or an error), and the server keeps serving",
    "Implementations SHOULD be prepared to handle these error cases: ... Invalid requests; Implementations SHOULD establish timeouts.",
    "basic/lifecycle.mdx (2025-11-25), Error Handling",
)
DEEP = rule(
    "wire-survives-deep-nesting", "wire", "error", "A request nested 100,000 levels deep gets an answer, and the server keeps serving",
    "Implementations SHOULD be prepared to handle these error cases: ... Invalid requests.",
    "basic/lifecycle.mdx (2025-11-25), Error Handling",
)
CANCEL = rule(
    "wire-cancel-in-flight", "wire", "error", "Cancelling a request in flight: the notification gets no reply, the request at most one",
    "Servers receiving cancellation notifications SHOULD: Stop processing the cancelled request; Not send a response for the "
    "cancelled request. Both parties MUST handle these race conditions gracefully.", "basic/patterns/cancellation.mdx (2026-07-28)",
)

PROBES: tuple[Probe, ...] = (
    Probe(JSONRPC_VERSION, _bad_jsonrpc),
    Probe(BAD_ID, _bad_id),
    Probe(BATCH, _batch),
    Probe(BAD_PARAMS, _bad_params),
    Probe(UNKNOWN_METHOD, _unknown_method),
    Probe(NOTIFICATION, _notification),
    Probe(DUPLICATE, _duplicate_id),
    Probe(MALFORMED, _malformed),
    Probe(OVERSIZE, _oversize),
    Probe(DEEP, _deep),
    Probe(CANCEL, _cancel),
)
