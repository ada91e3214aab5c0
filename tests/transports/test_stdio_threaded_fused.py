"""A plain ``def`` tool's call through the fused stage gets the general path's reply, byte for byte, over stdio.

The fused stage (`_intake.FastPath.serve`) hands a threaded tool's fused call
straight to the worker pool (`Tool.fused_threaded`) and the connection's
`Call`; a server with a middleware takes the general path (`Server.handle`)
for the same call. Both are real `wiremcp run` subprocesses fed the same
lines: successes, structured output, bad arguments (which the fused stage
leaves to the general one), tool errors, a deliberate protocol error and an
unexpected exception, masked and unmasked. No task awaits such a call: the
worker's completion callback writes its reply on the loop (`PostedCall`), so
the races between a cancellation and that callback, the in-flight cap and
the end of input are checked here too, each against the general path.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable

import orjson
import pytest

from conftest import SERVERS, call, wiremcp_cmd

import wiremcp
from wiremcp.jsonrpc import MCP, Decoder
from wiremcp.server._call import PostedCall
from wiremcp.transports.stdio._lines import LineServer
from wiremcp.server._intake import FastPath

SERVER = SERVERS / "threaded_fused.py"

CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("echo", {"text": "hello"}),
    ("echo", {"text": "ünïcødé \u2028 \"quoted\" \\ slash"}),
    ("mix", {"a": 3, "flag": True}),
    ("mix", {"a": -7, "flag": False, "label": "x", "scale": 2.5}),
    ("data", {"n": 41}),
    ("fails", {"kind": "tool"}),
    ("fails", {"kind": "protocol"}),
    ("fails", {"kind": "bug"}),
    ("fails", {"kind": "fine"}),
    # bad arguments: the general path's verdicts
    ("echo", {"text": 5}),
    ("echo", {}),
    ("echo", None),
    ("mix", {"a": 1.5, "flag": True}),
    ("mix", {"a": 1, "flag": "yes"}),
    ("mix", {"a": 1, "flag": True, "extra": 1}),
    ("data", {"n": True}),
    ("nosuch", {"text": "x"}),
]


def lines() -> list[bytes]:
    out = []
    for i, (tool, arguments) in enumerate(CALLS, start=1):
        message = call(i if i % 2 else f"s{i}", tool, arguments)
        if arguments is None:
            message["params"].pop("arguments")
        out.append(orjson.dumps(message))
    return out


def replies(spawn: Any, attr: str) -> list[bytes]:
    peer = spawn(*wiremcp_cmd("run", f"{SERVER}:{attr}"))
    got = []
    for line in lines():  # one at a time: each reply read before the next line goes
        peer.send_raw(line + b"\n")
        reply = peer.read_line()
        assert reply is not None, peer.stderr_so_far()
        got.append(reply)
    return got


@pytest.mark.parametrize("fast, general", [("fast", "general"), ("fast_unmasked", "general_unmasked")])
def test_threaded_fused_replies_are_the_general_replies(spawn: Any, fast: str, general: str) -> None:
    fast_replies = replies(spawn, fast)
    assert fast_replies == replies(spawn, general)
    by_kind = dict(zip([f"{t}:{a}" for t, a in CALLS], fast_replies))
    assert b'"text":"hello"' in by_kind["echo:{'text': 'hello'}"]
    assert b'"structuredContent":{"n":41}' in by_kind["data:{'n': 41}"]
    assert b'"code":-32602' in by_kind["fails:{'kind': 'protocol'}"]
    bug = by_kind["fails:{'kind': 'bug'}"]
    assert b'"isError":true' in bug
    assert (b"secret internals" in bug) == (fast == "fast_unmasked")


def test_the_fused_stage_takes_these_calls_to_the_worker_pool() -> None:
    """In process: each well-formed call above is one the fused stage posts to the worker pool (a `PostedCall`), not the general path."""
    import runpy

    servers = runpy.run_path(str(SERVER))
    fast: wiremcp.Server = servers["fast"]
    general: wiremcp.Server = servers["general"]
    written: list[bytes] = []
    over: list[Any] = []

    async def main() -> None:
        done = asyncio.get_running_loop().create_future()

        def end(call: Any) -> None:
            over.append(call.id)
            if len(over) == 9:
                done.set_result(None)

        def begin(id_: Any, data: bytes, fused: Any) -> PostedCall:
            return PostedCall(id_, written.append, True, end, data, fused)

        path = FastPath(fast, Decoder(MCP))
        for line in lines()[:9]:
            assert type(path.serve(line, (), None, None, begin)) is PostedCall, line
            assert path.serve(line) is None  # without `begin` (HTTP, the stdio front): the general stage decides
        assert FastPath(general, Decoder(MCP)).serve(lines()[0], (), None, None, begin) is None  # middleware: off
        await done  # each reply written from the worker's callback on the loop, then handed to ``over``

    asyncio.run(main())
    assert sorted(map(str, over)) == sorted(str(i if i % 2 else f"s{i}") for i in range(1, 10))
    assert len(written) == 9


def test_the_stdio_fronts_connection_posts_threaded_calls_once_handed_to_the_loop() -> None:
    """The front's connection has no ``over`` (it answers blocking, before any loop): a threaded call is not
    posted there; `LineServer` takes it with ``conn=`` and rebinds its ``over``, and the fused stage posts from then on."""
    import runpy

    from wiremcp.server.transport import ServerConnection

    fast: wiremcp.Server = runpy.run_path(str(SERVER))["fast"]
    front = ServerConnection(fast, lambda data: None, decoder=Decoder(MCP))
    first = lines()[0]
    assert type(front.receive(first, defer=True)) is not PostedCall
    written: list[bytes] = []

    async def main() -> None:
        server = LineServer(fast, written.append, conn=front)
        assert server.conn is front
        out = front.receive(first)
        assert type(out) is PostedCall, out
        while not written:
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert orjson.loads(written[0])["id"] == orjson.loads(first)["id"]


@pytest.mark.parametrize("attr", ["fast", "general"])
def test_a_threaded_fused_call_is_in_flight_cancellable_and_its_id_taken(spawn: Any, attr: str) -> None:
    """While it runs its id is in flight (a reuse is refused, -32600); cancelled, it gets no reply (stdio.mdx, Cancellation)."""
    peer = spawn(*wiremcp_cmd("run", f"{SERVER}:{attr}"))
    peer.send(call("c", "wait", {"seconds": 1.0}))
    reused = peer.ask(call("c", "echo", {"text": "x"}))
    assert reused["id"] == "c" and reused["error"]["code"] == -32600 and "in flight" in reused["error"]["message"]
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c", "reason": "user"}})
    assert peer.ask(call("next", "echo", {"text": "x"}))["id"] == "next"
    peer.expect_nothing_more()
    # End of input drains what is in flight: a reply for "c" would show here.
    assert peer.finish_quietly() == ""


def test_shutdown_with_a_threaded_call_in_flight_replies_once_as_the_general_path(spawn: Any) -> None:
    """End of input while a threaded fused call runs: its reply is written once, before the exit, byte for byte the general path's."""
    got = {}
    for attr in ("fast", "general"):
        peer = spawn(*wiremcp_cmd("run", f"{SERVER}:{attr}"))
        peer.send(call(7, "wait", {"seconds": 0.3}))
        code, rest, err = peer.finish()
        assert code == 0, err
        assert rest.count(b"\n") == 1 and rest.startswith(b'{"jsonrpc":"2.0","id":7,"result":'), rest
        got[attr] = rest
    assert got["fast"] == got["general"]


# -- In process: the races between a cancellation and the worker's callback, on a one-thread pool ---------------


class Gated:
    """A server (fused, or the general path behind a middleware) with one worker thread and a tool that waits on a gate."""

    def __init__(self, general: bool) -> None:
        self.gate = threading.Event()  # opened by the test: `hold` returns
        self.entered = threading.Event()  # set by `hold` when it starts
        self.ran = threading.Event()  # set by `hold` as its last act
        self.server = server = wiremcp.Server("gated", version="1.0.0", threads=1)

        @server.tool
        def hold(label: str) -> str:
            """Wait for the gate, then answer."""
            self.entered.set()
            assert self.gate.wait(30)
            self.ran.set()
            return label

        @server.tool
        def echo(text: str) -> str:
            """Return the text."""
            return text

        if general:

            @server.middleware
            async def passthrough(invocation: Any, call_next: Any) -> Any:
                return await call_next(invocation)


def request(id_: Any, tool: str, **arguments: Any) -> bytes:
    return orjson.dumps(call(id_, tool, arguments)) + b"\n"


def cancel(id_: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id_}}) + b"\n"


async def until(test: Callable[[], bool]) -> None:
    """Let the loop run until ``test()`` holds (a condition, not a fixed wait)."""
    async def poll() -> None:
        while not test():
            await asyncio.sleep(0)

    await asyncio.wait_for(poll(), 30)


def both(scenario: Callable[[Gated, LineServer, list[bytes]], Awaitable[None]], max_in_flight: int = 256) -> list[bytes]:
    """The lines ``scenario`` gets written on the fused path; the general path's must be the same bytes."""
    out = {}
    for general in (False, True):
        gated = Gated(general)
        written: list[bytes] = []

        async def main() -> None:
            lines = LineServer(gated.server, written.append, max_in_flight=max_in_flight, max_listens=0)
            try:
                await scenario(gated, lines, written)
            finally:
                gated.gate.set()
                gated.server.workers.shutdown(wait=True)

        asyncio.run(main())
        out[general] = written
    assert out[False] == out[True]
    return out[False]


def test_cancelled_before_its_thread_ends_no_reply_and_its_slot_is_freed_at_once() -> None:
    """A threaded fused call cancelled while its thread runs: no reply, ever; its slot goes to the waiting request at once."""

    async def scenario(gated: Gated, lines: LineServer, written: list[bytes]) -> None:
        lines.feed(request("a", "hold", label="a"))
        lines.feed(request("b", "echo", text="b"))
        assert (lines.in_flight, lines.waiting) == (1, 1)  # the cap is one: b waits
        lines.feed(cancel("a"))
        await until(lambda: lines.waiting == 0)  # a's slot is b's while a's thread still blocks
        assert lines.in_flight == 1 and not gated.ran.is_set()
        gated.gate.set()
        lines.feed_eof()
        await lines.wait_closed()

    written = both(scenario, max_in_flight=1)
    assert len(written) == 1 and b'"id":"b"' in written[0]


def test_cancelled_after_its_thread_ended_before_its_callback_ran_no_reply() -> None:
    """The thread is done and its outcome posted, the cancel is read first: the callback drops it."""

    async def scenario(gated: Gated, lines: LineServer, written: list[bytes]) -> None:
        lines.feed(request("a", "hold", label="a"))
        await until(gated.entered.is_set)  # a runs in its thread (the general path starts it from a task)
        gated.gate.set()
        assert gated.ran.wait(30)  # the loop is held here: a's callback cannot run before the cancel
        lines.feed(cancel("a"))
        lines.feed(request("c", "echo", text="c"))  # the one thread runs c after posting a's outcome
        await until(lambda: bool(written))
        lines.feed_eof()
        await lines.wait_closed()

    written = both(scenario)
    assert len(written) == 1 and b'"id":"c"' in written[0]


def test_cancelled_after_its_reply_is_ignored() -> None:
    """A cancel for a call already answered changes nothing: one reply, and the next request is served."""

    async def scenario(gated: Gated, lines: LineServer, written: list[bytes]) -> None:
        gated.gate.set()
        lines.feed(request("a", "hold", label="a"))
        await until(lambda: bool(written))
        assert lines.in_flight == 0  # replied: its id is free
        lines.feed(cancel("a"))
        lines.feed(request("a", "echo", text="again"))  # the id may be used again
        lines.feed_eof()
        await lines.wait_closed()

    written = both(scenario)
    assert len(written) == 2 and b'"text":"a"' in written[0] and b'"text":"again"' in written[1]


def test_end_of_input_waits_for_a_threaded_call_and_cancel_all_drops_it() -> None:
    """At end of input the call in flight is waited for and replied to once; when the grace is over (`cancel_all`), never."""

    async def drained(gated: Gated, lines: LineServer, written: list[bytes]) -> None:
        lines.feed(request("a", "hold", label="a"))
        lines.feed_eof()
        closed = asyncio.ensure_future(lines.wait_closed())
        await asyncio.sleep(0)
        assert not closed.done() and not written
        gated.gate.set()
        await closed

    written = both(drained)
    assert len(written) == 1 and b'"text":"a"' in written[0]

    async def dropped(gated: Gated, lines: LineServer, written: list[bytes]) -> None:
        lines.feed(request("a", "hold", label="a"))
        lines.feed_eof()
        await lines.cancel_all()  # returns while a's thread still blocks: its slot is freed by the cancel
        assert lines.in_flight == 0 and not gated.ran.is_set()
        gated.gate.set()
        await gated.server.workers.submit(lambda: None, {})  # the one thread posted a's outcome before this one's

    assert both(dropped) == []
