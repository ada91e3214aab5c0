"""`ServerConnection.receive`: the server's one entry point, driven with plain bytes and no event loop.

Every transport hands it a message's bytes; it decodes them once (the fused
stage first), decides the era once and names what the transport does next.
"""

from __future__ import annotations

from typing import Any

import orjson

import wiremcp
from wiremcp.jsonrpc import Notification, Response
from wiremcp.server.transport import DEFERRED, Era, Held, Notified, ServerConnection

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def make_server() -> wiremcp.Server:
    server = wiremcp.Server("receive", legacy=True)

    @server.tool(inline=True)
    def echo(text: str) -> str:
        return text

    return server


def line(id_: Any, method: str, params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


def call_line(id_: Any = 1, meta: dict[str, Any] | None = None) -> bytes:
    return line(id_, "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": META if meta is None else meta})


def test_a_fused_call_is_answered_with_the_general_paths_bytes() -> None:
    fused = ServerConnection(make_server(), lambda data: None).receive(call_line())
    # An extra `_meta` member takes the general path (Decoder, `request`): the same reply.
    general_conn = ServerConnection(make_server(), lambda data: None)
    general = general_conn.receive(call_line(meta={**META, "x.example/trace": "1"}))
    assert type(fused) is tuple and type(general) is tuple
    assert fused == general
    assert orjson.loads(fused[0])["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_held_requests_are_not_started() -> None:
    conn = ServerConnection(make_server(), lambda data: None, held=frozenset({"subscriptions/listen"}))
    out = conn.receive(call_line(), True)  # no free slot: held, and no fused call overtakes
    assert type(out) is Held and out.request.method == "tools/call" and out.era is None
    listen = conn.receive(line(2, "subscriptions/listen", {"_meta": META}))
    assert type(listen) is Held and listen.request.id == 2
    assert not conn.calls


def test_a_transport_that_keeps_the_sessions_gets_every_request_held_with_its_era() -> None:
    conn = ServerConnection(make_server(), lambda data: None, line=False)
    init = conn.receive(line(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}), in_session=False)
    assert type(init) is Held and init.era is Era.LEGACY
    ping = conn.receive(line(2, "ping", {}), in_session=True)
    assert type(ping) is Held and ping.era is Era.LEGACY
    modern = conn.receive(line(3, "tools/list", {"_meta": META}), True, in_session=True)
    assert type(modern) is Held and modern.era is Era.MODERN


def test_notifications_responses_and_bad_messages() -> None:
    conn = ServerConnection(make_server(), lambda data: None)
    note = conn.receive(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}')
    assert type(note) is Notified and type(note.note) is Notification and note.cancelled is None
    stray = conn.receive(b'{"jsonrpc":"2.0","id":5,"result":{}}')
    assert type(stray) is Response  # answers nothing we sent: the transport logs or refuses it
    assert conn.receive(b'{"jsonrpc":"2.0","method":"notifications/x","params":1}') is None  # never answered
    bad = conn.receive(b"{not json")
    assert type(bad) is tuple and orjson.loads(bad[0])["error"]["code"] == -32700
    # HTTP answers every POST: a malformed notification's error comes back for its status.
    http = ServerConnection(make_server(), lambda data: None, line=False)
    refused = http.receive(b'{"jsonrpc":"2.0","method":"notifications/x","params":1}', in_session=False)
    assert type(refused) is tuple and refused[1] == -32600


def test_defer_answers_only_what_is_answered_at_once() -> None:
    server = make_server()

    @server.tool()
    async def later(text: str) -> str:
        return text

    conn = ServerConnection(server, lambda data: None)
    plain = ServerConnection(server, lambda data: None)
    assert conn.fast is not None and not conn.fast.loaded
    first = conn.receive(call_line(), False, True)  # the general stage: the fused stage is not loaded yet
    assert first == plain.receive(call_line())
    conn.warm()  # what the stdio front does once that reply is written
    assert conn.fast.loaded
    assert conn.receive(call_line(3), False, True) == plain.receive(call_line(3))  # the fused stage now
    for msg in (line(2, "tools/list", {"_meta": META}), line(4, "server/discover", {"_meta": META})):
        assert conn.receive(msg, False, True) == plain.receive(msg)
    assert conn.calls == {}
    untouched = [
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized","params":1}',  # malformed: the event loop logs it
        line(5, "ping", {}),  # no session: a modern request, not answered at once
        line(6, "tools/call", {"name": "later", "arguments": {"text": "x"}, "_meta": META}),
        line(7, "tools/call", {"name": "nope", "arguments": {}, "_meta": META}),
        line(8, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "_meta": META}),  # modern: no session
        b"{not json",
    ]
    for msg in untouched:
        assert conn.receive(msg, False, True) is DEFERRED
    assert conn.session is None and conn.calls == {}


LEGACY_INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def test_defer_answers_the_legacy_handshake_as_the_general_path_does() -> None:
    """``initialize``, ``notifications/initialized``, ``ping``, ``tools/list`` and inline calls of the session, at once."""
    server = make_server()
    conn = ServerConnection(server, lambda data: None)
    plain = ServerConnection(server, lambda data: None)
    initialized = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    before = conn.receive(initialized, False, True)  # before initialize: acted on (ignored), as on the event loop
    assert type(before) is Notified and conn.session is None
    steps = [
        line(1, "initialize", {"protocolVersion": 5}),  # -32602, the session opened all the same (as on the event loop)
        line(2, "initialize", LEGACY_INIT),
        line(3, "initialize", LEGACY_INIT),  # -32600: already initialized
        line(4, "tools/list", {}),
        line(5, "ping", {}),
        line(6, "tools/call", {"name": "echo", "arguments": {"text": "legacy"}}),
        line(7, "tools/call", {"name": "echo", "arguments": {"text": 1}}),
        line(8, "server/discover", {"_meta": META}),  # modern in the session: stateless
    ]
    for i, msg in enumerate(steps):
        assert conn.receive(msg, False, True) == plain.receive(msg), i
        if i == 1:
            note = conn.receive(initialized, False, True)
            assert type(note) is Notified and conn.session is not None and conn.session.initialized
            plain.receive(initialized)
    conn.warm()
    assert conn.fast is not None and not conn.fast.loaded  # a legacy call never takes the fused stage: not loaded for it
    for msg in (line(9, "server/discover", {}), line(10, "logging/setLevel", {"level": "info"}), line(11, "tools/call", {"name": "later"})):
        assert conn.receive(msg, False, True) is DEFERRED  # answered on the event loop
    assert conn.calls == {}


def test_rebind_sends_the_sessions_messages_to_the_new_write() -> None:
    server = make_server()
    first: list[bytes] = []
    second: list[bytes] = []
    conn = ServerConnection(server, first.append)
    assert type(conn.receive(line(1, "initialize", LEGACY_INIT), False, True)) is tuple
    server.notify_tools_changed()
    conn.rebind(second.append, frozenset({"subscriptions/listen"}))
    server.notify_tools_changed()
    changed = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}\n'
    assert first == [changed] and second == [changed] and conn.held == frozenset({"subscriptions/listen"})


def test_a_request_is_started_once_decoded() -> None:
    conn = ServerConnection(make_server(), lambda data: None)
    out = conn.receive(line(1, "tools/list", {"_meta": META}))
    assert type(out) is tuple and "tools" in orjson.loads(out[0])["result"]
