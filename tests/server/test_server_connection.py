"""The server's transport contract (wiremcp.server: ServerConnection, Call, request_era, OutgoingRequests).

Driven with plain messages, no transport: what a stdio stream, a legacy HTTP
session and the in-memory transport rely on. The rules come from
2026-07-28 basic/versioning.mdx ("Backward Compatibility with
Initialization-Based Versions"), basic/patterns/cancellation.mdx and
2025-11-25 basic/lifecycle.mdx; the transports' own tests check the same
rules over real processes and real HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

import wiremcp
from wiremcp import Context
from wiremcp.jsonrpc import ErrorResponse, Notification, Request, Response
from wiremcp.server import ClientRequestFailed
from wiremcp.server.transport import (
    Call,
    CallState,
    ConnectionState,
    Era,
    OutgoingRequests,
    ServerConnection,
    carries_protocol_meta,
    request_era,
)

from conftest import META

INIT = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "old", "version": "1"}}


def make_server(release: asyncio.Event | None = None) -> wiremcp.Server:
    """A dual-era server; ``slow`` waits for ``release``."""
    server = wiremcp.Server("contract", version="1.0.0")

    @server.tool(inline=True)  # answered at once; a plain def would run in a worker thread
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    async def slow(ctx: Context) -> str:
        """Report progress, then wait to be released."""
        ctx.report_progress(1, 2)
        assert release is not None
        await release.wait()
        ctx.report_progress(2, 2)
        return "released"

    @server.tool()
    async def ask_name(ctx: Context) -> str:
        """Ask the client for a name."""
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"Hello, {answer['content']['name']}!"

    return server


def modern(id: Any, method: str, params: dict[str, Any] | None = None) -> Request:
    return Request(id, method, {"_meta": META, **(params or {})})


def legacy(id: Any, method: str, params: dict[str, Any] | None = None) -> Request:
    return Request(id, method, params or {})


def reply_of(out: Any) -> dict[str, Any]:
    assert type(out) is tuple, f"expected a reply now, got {out!r}"
    line, code = out
    assert line.endswith(b"\n")
    message = orjson.loads(line)
    assert (code is None) == ("result" in message)
    return message  # type: ignore[no-any-return]


async def until(condition: Any) -> None:
    """Let the loop run until ``condition()`` holds (a bounded number of steps: no clock)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


def run(call: Any) -> asyncio.Task[Any]:
    """Run a call's `finish` as a transport does."""
    assert isinstance(call, Call)
    task = call.task = asyncio.get_running_loop().create_task(call.finish())
    return task


async def settled(*tasks: asyncio.Task[Any]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


class Sink:
    """A transport's write function: keeps what it is given."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.lines.append(data)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.lines]


# -- the era of a request ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "in_session", "legacy_on", "era"),
    [
        (modern(1, "tools/list"), False, True, Era.MODERN),
        (modern(1, "tools/list"), True, True, Era.MODERN),  # modern _meta wins over the session
        (modern(1, "initialize"), False, True, Era.MODERN),
        (legacy(1, "initialize", INIT), False, True, Era.LEGACY),  # initialize opens a session
        (legacy(1, "initialize", INIT), False, False, Era.MODERN),  # ... unless legacy is off
        (legacy(1, "tools/list"), True, True, Era.LEGACY),
        (legacy(1, "tools/list"), True, False, Era.MODERN),
        (legacy(1, "tools/list"), False, True, Era.MODERN),  # no session: the modern checks say what is missing
        (Request(1, "tools/list", {"_meta": {"progressToken": 1}}), True, True, Era.LEGACY),
    ],
)
def test_request_era(request_, in_session, legacy_on, era):
    assert request_era(request_, in_session, legacy_on) is era


def test_carries_protocol_meta():
    assert carries_protocol_meta({"_meta": META})
    assert not carries_protocol_meta({"_meta": {"progressToken": 1}})
    assert not carries_protocol_meta({"_meta": "2026-07-28"})
    assert not carries_protocol_meta(None)


# -- replies made at once -----------------------------------------------------------------


def test_a_synchronous_request_is_answered_at_once():
    sink = Sink()
    conn = ServerConnection(make_server(), sink)
    reply = reply_of(conn.request(modern(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})))
    assert reply["id"] == 1 and reply["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert conn.calls == {} and sink.lines == []


def test_errors_become_replies_with_their_codes():
    conn = ServerConnection(make_server(), Sink())
    missing_meta = reply_of(conn.request(legacy(2, "tools/list")))  # no session, no _meta: modern, -32602
    assert missing_meta["id"] == 2 and missing_meta["error"]["code"] == -32602
    unknown = reply_of(conn.request(modern(3, "no/such/method")))
    assert unknown["error"]["code"] == -32601
    assert conn.session is None


def test_a_call_turns_any_exception_into_one_internal_error(caplog):
    def broken(request: Request, emit: Any) -> dict[str, Any]:
        raise RuntimeError("secret detail")

    call = Call(7, "x/y", Sink())
    line, code = call.start(broken, modern(7, "x/y"))  # type: ignore[misc]
    assert code == -32603 and call.state is CallState.REPLIED
    error = orjson.loads(line)["error"]
    assert error["code"] == -32603 and "secret detail" not in error["message"]
    assert "secret detail" in caplog.text  # logged, not sent


def test_a_request_id_already_in_flight_is_refused():
    async def scenario() -> None:
        release = asyncio.Event()
        conn = ServerConnection(make_server(release), Sink())
        first = conn.request(modern(5, "tools/call", {"name": "slow", "arguments": {}}), Sink())
        task = run(first)
        again = reply_of(conn.request(modern(5, "tools/call", {"name": "echo", "arguments": {"text": "x"}})))
        assert again["id"] == 5 and again["error"]["code"] == -32600 and "already in flight" in again["error"]["message"]
        release.set()
        await settled(task)

    asyncio.run(scenario())


# -- calls: notifications, finish, cancellation ----------------------------------------------


def test_an_asynchronous_call_writes_its_notifications_then_its_one_reply():
    async def scenario() -> None:
        release = asyncio.Event()
        conn = ServerConnection(make_server(release), Sink())
        own = Sink()
        call = conn.request(
            modern(9, "tools/call", {"name": "slow", "arguments": {}, "_meta": {**META, "progressToken": "p"}}), own
        )
        assert isinstance(call, Call) and conn.calls == {9: call} and call.state is CallState.RUNNING
        task = call.task = asyncio.get_running_loop().create_task(call.finish())
        await until(lambda: own.lines)
        assert [m["method"] for m in own.messages] == ["notifications/progress"]
        release.set()
        reply = await task
        assert reply is not None and orjson.loads(reply[0])["result"]["content"][0]["text"] == "released"
        assert call.state is CallState.REPLIED
        conn.finished(call)
        assert conn.calls == {}
        call.emit("notifications/progress", {"progressToken": "p", "progress": 3})
        assert len(own.messages) == 2  # nothing after the reply

    asyncio.run(scenario())


def test_notifications_cancelled_stops_a_call_without_a_reply():
    async def scenario() -> None:
        release = asyncio.Event()
        conn = ServerConnection(make_server(release), Sink())
        own = Sink()
        call = conn.request(modern(4, "tools/call", {"name": "slow", "arguments": {}, "_meta": {**META, "progressToken": 1}}), own)
        assert isinstance(call, Call)
        task = call.task = asyncio.get_running_loop().create_task(call.finish())
        await until(lambda: own.lines)
        cancelled = conn.notification(Notification("notifications/cancelled", {"requestId": 4, "reason": "test"}))
        assert cancelled is call and call.state is CallState.CANCELLED
        call.emit("notifications/progress", {"progressToken": 1, "progress": 2})
        assert len(own.lines) == 1  # the one sent before the cancellation
        with pytest.raises(asyncio.CancelledError):
            await task
        conn.finished(call)
        # Unknown, finished or malformed targets are ignored.
        assert conn.notification(Notification("notifications/cancelled", {"requestId": 4})) is None
        assert conn.notification(Notification("notifications/cancelled", {"requestId": [4]})) is None
        assert conn.notification(Notification("notifications/cancelled", None)) is None

    asyncio.run(scenario())


def test_cancel_calls_can_end_only_the_endless_ones():
    async def scenario() -> None:
        release = asyncio.Event()
        conn = ServerConnection(make_server(release), Sink())
        tool = conn.request(modern(1, "tools/call", {"name": "slow", "arguments": {}}), Sink())
        listen = conn.request(modern(2, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}), Sink())
        tasks = run(tool), run(listen)
        assert isinstance(tool, Call) and isinstance(listen, Call)
        assert conn.cancel_calls(endless_only=True) == [listen]
        assert listen.state is CallState.CANCELLED and tool.state is CallState.RUNNING
        assert conn.cancel_calls() == [tool, listen]
        await settled(*tasks)
        assert all(task.cancelled() for task in tasks)

    asyncio.run(scenario())


# -- legacy sessions -------------------------------------------------------------------------


def test_initialize_opens_the_session_that_serves_later_requests():
    conn = ServerConnection(make_server(), Sink())
    init = reply_of(conn.request(legacy(1, "initialize", INIT)))
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert conn.session is not None and conn.session.version == "2025-11-25"
    assert conn.era(legacy(2, "ping")) is Era.LEGACY
    conn.notification(Notification("notifications/initialized", None))
    assert conn.session.initialized
    assert reply_of(conn.request(legacy(2, "ping")))["result"] == {}
    # A request with modern _meta is still served statelessly: ping does not exist in 2026-07-28.
    assert reply_of(conn.request(modern(3, "ping")))["error"]["code"] == -32601


def test_a_connection_without_legacy_never_opens_a_session():
    conn = ServerConnection(make_server(), Sink(), legacy=False)
    reply = reply_of(conn.request(legacy(1, "initialize", INIT)))
    assert "error" in reply and conn.session is None


def test_session_requests_to_the_client_are_correlated_with_its_answers():
    async def scenario() -> None:
        out = Sink()
        conn = ServerConnection(make_server(), out)
        reply_of(conn.request(legacy(1, "initialize", INIT)))
        call = conn.request(legacy(2, "tools/call", {"name": "ask_name", "arguments": {}}))
        assert isinstance(call, Call)
        task = call.task = asyncio.get_running_loop().create_task(call.finish())
        await until(lambda: out.lines)
        [asked] = out.messages
        assert asked["method"] == "elicitation/create" and type(asked["id"]) is int
        assert conn.response(Response(asked["id"] + 1000, {})) is False  # answers nothing we sent
        assert conn.response(Response(asked["id"], {"action": "accept", "content": {"name": "Ada"}})) is True
        reply = await task
        assert reply is not None and orjson.loads(reply[0])["result"]["content"][0]["text"] == "Hello, Ada!"

    asyncio.run(scenario())


def test_an_error_answer_fails_the_servers_request_and_close_fails_the_rest():
    async def scenario() -> None:
        out = Sink()
        outgoing = OutgoingRequests(line=False)
        first = asyncio.ensure_future(outgoing.request("roots/list", {}, out))
        second = asyncio.ensure_future(outgoing.request("roots/list", {}, out))
        await until(lambda: len(out.lines) == 2)
        assert [m["id"] for m in out.messages] == [1, 2] and not out.lines[0].endswith(b"\n")
        assert outgoing.answer(ErrorResponse(1, {"code": -32601, "message": "no roots here"}))
        with pytest.raises(ClientRequestFailed) as failed:
            await first
        assert failed.value.code == -32601
        outgoing.close("the client left")
        with pytest.raises(ConnectionError, match="the client left"):
            await second
        with pytest.raises(ConnectionError):
            await outgoing.request("roots/list", {}, out)

    asyncio.run(scenario())


def test_a_request_given_up_on_is_cancelled_with_the_peer_and_its_late_answer_ignored():
    async def scenario() -> None:
        out = Sink()
        outgoing = OutgoingRequests()
        waiting = asyncio.ensure_future(outgoing.request("sampling/createMessage", {}, out))
        await until(lambda: out.lines)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        asked, cancelled = out.messages
        assert cancelled == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": asked["id"], "reason": "no longer needed"},
        }
        assert outgoing.answer(Response(asked["id"], {})) is True  # late: accepted, ignored
        assert len(outgoing) == 0

    asyncio.run(scenario())


def test_close_ends_the_session_and_the_servers_requests():
    async def scenario() -> None:
        out = Sink()
        conn = ServerConnection(make_server(), out)
        reply_of(conn.request(legacy(1, "initialize", INIT)))
        call = conn.request(legacy(2, "tools/call", {"name": "ask_name", "arguments": {}}))
        assert isinstance(call, Call)
        task = call.task = asyncio.get_running_loop().create_task(call.finish())
        await until(lambda: out.lines)
        conn.close("the client closed the connection")
        assert conn.state is ConnectionState.CLOSED
        reply = await task  # the tool sees ConnectionError: a tool execution error, still one reply
        assert reply is not None and orjson.loads(reply[0])["result"]["isError"] is True

    asyncio.run(scenario())
