"""A plain ``def`` tool's call through the fused stage gets the general path's reply, byte for byte, over stdio.

The fused stage (`_intake.FastPath.serve`) hands a threaded tool's fused call
straight to the worker pool (`Tool.fused_threaded`) and the connection's
`Call`; a server with a middleware takes the general path (`Server.handle`)
for the same call. Both are real `wiremcp run` subprocesses fed the same
lines: successes, structured output, bad arguments (which the fused stage
leaves to the general one), tool errors, a deliberate protocol error and an
unexpected exception, masked and unmasked.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from conftest import SERVERS, call, wiremcp_cmd

import wiremcp
from wiremcp.jsonrpc import MCP, Decoder
from wiremcp.server._call import Call
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
    """In process: each well-formed call above is one the fused stage hands to the worker pool (a `Call`), not the general path."""
    import runpy

    servers = runpy.run_path(str(SERVER))
    fast: wiremcp.Server = servers["fast"]
    general: wiremcp.Server = servers["general"]
    begun: list[Any] = []

    def begin(id_: Any, pending: Any) -> Call:
        pending.close()  # not run here: the stdio test above runs them
        begun.append(id_)
        return Call(id_, "tools/call", lambda data: None)

    path = FastPath(fast, Decoder(MCP))
    for line in lines()[:9]:
        assert type(path.serve(line, (), None, None, begin)) is Call, line
        assert path.serve(line) is None  # without `begin` (HTTP, the stdio front): the general stage decides
    assert len(begun) == 9
    assert FastPath(general, Decoder(MCP)).serve(lines()[0], (), None, None, begin) is None  # middleware: off


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
