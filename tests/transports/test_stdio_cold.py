"""Cold start on stdio: a host's first requests are answered before the event loop, and nothing else changes.

`wiremcp run` answers ``server/discover``, ``tools/list`` and a
``tools/call`` of an inline tool, and the legacy handshake (``initialize``,
``notifications/initialized``, ``tools/list``, ``ping`` and such calls in the
session), before asyncio is imported
(`wiremcp.transports.stdio.serve_before_loop`), with the bytes the event loop
would write; the first message that needs more (another notification, a tool
that awaits or runs on a worker thread) moves the stream, and its legacy
session, to the event loop. These tests drive
a real `wiremcp run` subprocess and check that the rules of
basic/transports/stdio.mdx and basic/patterns/cancellation.mdx hold across
that move: concurrency, cancellation, duplicate ids, end of input, a closed
stdout.
"""

from __future__ import annotations

import subprocess
import sys
import time

import orjson
import pytest

from conftest import META, ROOT, SERVERS, StdioPeer, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow


@pytest.fixture
def cold():
    peer = StdioPeer(wiremcp_cmd("run", str(SERVERS / "cold.py")))
    try:
        yield peer
    finally:
        peer.kill()


def text(reply: dict) -> str:
    return reply["result"]["content"][0]["text"]


def test_fused_calls_are_answered_before_asyncio_is_imported(cold):
    assert text(cold.ask(call(1, "loop_loaded"))) == "no"
    assert text(cold.ask(call(2, "echo", {"text": "a"}))) == "a"
    assert text(cold.ask(call(3, "loop_loaded"))) == "no"
    cold.expect_nothing_more()  # server/discover: answered before the event loop too
    assert text(cold.ask(call(4, "loop_loaded"))) == "no"
    move_to_the_event_loop(cold)
    assert text(cold.ask(call(5, "loop_loaded"))) == "yes"
    assert cold.finish_quietly() == ""


def move_to_the_event_loop(peer) -> None:
    """A notification needs the general path: from here on the event loop serves the stream."""
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "none"}})


def test_the_same_bytes_before_and_after_the_event_loop(cold):
    line = orjson.dumps(call(7, "echo", {"text": "same"})) + b"\n"
    cold.send_raw(line)
    before = cold.read_line()
    move_to_the_event_loop(cold)
    cold.send_raw(line)
    after = cold.read_line()
    assert before is not None and before == after


#: What a host sends first, and the errors of the same requests, each answered before the event loop.
HOST_LINES = [
    request("d", "server/discover"),
    request("l", "tools/list"),
    call("c1", "echo", {"text": "first: the general stage, before the fused stage is loaded"}),
    call("c2", "echo", {"text": "second: the fused stage"}),
    call("c3", "echo", {"text": 3}),  # declined by the fused stage: the validator's tool error
    call("c4", "echo", {}),
    request("l2", "tools/list", {"cursor": "not a cursor"}),
    request("d2", "server/discover", meta={**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
    {"jsonrpc": "2.0", "id": "l3", "method": "tools/list"},  # no _meta and no session: the modern checks' error
    call("c5", "echo", {"text": "x"}, **{"io.modelcontextprotocol/protocolVersion": "1999-01-01"}),
]


def test_a_host_handshake_gets_the_same_bytes_before_and_after_the_event_loop(cold):
    before = []
    for msg in HOST_LINES:
        cold.send(msg)
        before.append(cold.read_line())
    assert text(cold.ask(call("loaded", "loop_loaded"))) == "no"  # every line above was answered before the loop
    move_to_the_event_loop(cold)
    after = []
    for msg in HOST_LINES:
        cold.send(msg)
        after.append(cold.read_line())
    assert text(cold.ask(call("loaded", "loop_loaded"))) == "yes"
    assert before == after
    replies = [orjson.loads(line) for line in before]
    assert [r["id"] for r in replies] == [m["id"] for m in HOST_LINES]
    assert "supportedVersions" in replies[0]["result"] and [t["name"] for t in replies[1]["result"]["tools"]][:1] == ["echo"]
    assert [text(r) for r in replies[2:4]] == [m["params"]["arguments"]["text"] for m in HOST_LINES[2:4]]
    assert replies[4]["result"]["isError"] is True and replies[5]["result"]["isError"] is True
    assert [r["error"]["code"] for r in replies[6:]] == [-32602, -32022, -32602, -32022]


def test_a_host_handshake_in_one_read(cold):
    """Lines that arrive together: the first call is answered, the fused stage loaded, the rest fused."""
    lines = [request(1, "server/discover"), request(2, "tools/list")] + [call(i, "echo", {"text": str(i)}) for i in range(3, 20)]
    cold.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in lines))
    replies = [cold.recv() for _ in lines]
    assert [r["id"] for r in replies] == list(range(1, 20))
    assert [text(r) for r in replies[2:]] == [str(i) for i in range(3, 20)]
    assert text(cold.ask(call("loaded", "loop_loaded"))) == "no"


def legacy(id_, method, params=None):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


INIT = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "host", "version": "0"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

#: A legacy host's first lines and the errors around them, each answered before the event loop
#: (None: a notification, answered by nothing, checked with the next reply).
LEGACY_LINES = [
    legacy("early-list", "tools/list"),  # before initialize: a modern request without _meta
    legacy("early-call", "tools/call", {"name": "echo", "arguments": {"text": "x"}}),
    INITIALIZED,  # before initialize: ignored
    legacy("bad-init", "initialize", {"protocolVersion": 5, "capabilities": {}}),
    legacy("init", "initialize", INIT),
    legacy("init-again", "initialize", INIT),
    INITIALIZED,
    legacy("list", "tools/list"),
    legacy("list-bad-cursor", "tools/list", {"cursor": "not a cursor"}),
    legacy("ping", "ping"),
    legacy("c1", "tools/call", {"name": "echo", "arguments": {"text": "in the session"}}),
    legacy("c2", "tools/call", {"name": "echo", "arguments": {"text": 3}}),  # the validator's tool error
    legacy("c3", "tools/call", {"name": "echo", "arguments": {"text": "x"}, "_meta": {"progressToken": 1.5}}),
    request("modern", "server/discover"),  # modern _meta in a legacy session: served statelessly
    call("modern-call", "echo", {"text": "modern"}),
    legacy("c4", "tools/call", {"name": "echo", "arguments": {"text": "after a modern call"}}),
    INITIALIZED,  # again: nothing to answer
]


def send_legacy_lines(peer) -> list[bytes | None]:
    out: list[bytes | None] = []
    for msg in LEGACY_LINES:
        peer.send(msg)
        out.append(peer.read_line() if "id" in msg else None)
    return out


def test_a_legacy_handshake_gets_the_same_bytes_before_and_after_the_event_loop(cold, spawn):
    before = send_legacy_lines(cold)
    assert text(cold.ask(legacy("where", "tools/call", {"name": "loop_loaded"}))) == "no"  # all of it before the loop
    late = spawn(*wiremcp_cmd("run", str(SERVERS / "cold.py")))
    move_to_the_event_loop(late)
    after = send_legacy_lines(late)
    assert text(late.ask(legacy("where", "tools/call", {"name": "loop_loaded"}))) == "yes"
    assert before == after
    replies = {m["id"]: orjson.loads(line) for m, line in zip(LEGACY_LINES, before) if line is not None}
    assert list(replies) == [m["id"] for m in LEGACY_LINES if "id" in m]  # each reply is its request's
    errors = {id_: r["error"]["code"] for id_, r in replies.items() if "error" in r}
    assert errors == {"early-list": -32602, "early-call": -32602, "bad-init": -32602, "init-again": -32600, "list-bad-cursor": -32602, "c3": -32602}
    assert replies["init"]["result"]["protocolVersion"] == "2025-11-25" and "tools" in replies["init"]["result"]["capabilities"]
    assert "resultType" not in replies["list"]["result"] and "echo" in [t["name"] for t in replies["list"]["result"]["tools"]]
    assert replies["ping"]["result"] == {}
    assert [text(replies[i]) for i in ("c1", "modern-call", "c4")] == ["in the session", "modern", "after a modern call"]
    assert replies["c2"]["result"]["isError"] is True and "resultType" not in replies["c1"]["result"]
    assert "supportedVersions" in replies["modern"]["result"] and replies["modern-call"]["result"]["resultType"] == "complete"


def test_the_legacy_session_crosses_to_the_event_loop(cold):
    """The session the front opened serves on the event loop: its state, the server's notifications and requests."""
    assert cold.ask(legacy(1, "initialize", INIT))["result"]["protocolVersion"] == "2025-11-25"
    cold.send(INITIALIZED)
    assert "echo" in [t["name"] for t in cold.ask(legacy(2, "tools/list"))["result"]["tools"]]
    assert text(cold.ask(legacy(3, "tools/call", {"name": "echo", "arguments": {"text": "a"}}))) == "a"
    assert text(cold.ask(legacy(4, "tools/call", {"name": "loop_loaded"}))) == "no"
    cold.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})  # a legacy notification: the event loop
    assert text(cold.ask(legacy(5, "tools/call", {"name": "loop_loaded"}))) == "yes"
    assert cold.ask(legacy(6, "initialize", INIT))["error"]["code"] == -32600  # the same session: already initialized
    assert cold.ask(legacy(7, "server/discover"))["error"]["code"] == -32601  # still a legacy session
    cold.send(legacy(8, "tools/call", {"name": "chatty", "_meta": {"progressToken": "p"}}))
    seen = [cold.recv() for _ in range(3)]
    assert seen[0] == {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}
    assert seen[1] == {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": 1, "total": 2}}
    ask = seen[2]
    assert ask["method"] == "roots/list" and "id" in ask
    cold.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"roots": [{"uri": "file:///work"}]}})
    rest = [cold.recv(), cold.recv()]
    assert rest[0] == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}  # the session's own write, rebound
    assert rest[1]["id"] == 8 and text(rest[1]) == "file:///work"
    cold.expect_nothing_more(legacy=True)
    assert cold.finish_quietly() == ""


def test_a_legacy_handshake_in_one_read_moves_with_its_rest(cold):
    """Lines that arrive together: the front answers the handshake, the event loop the rest, in the same session."""
    lines = [
        legacy(1, "initialize", INIT), INITIALIZED, legacy(2, "tools/list"),
        legacy(3, "tools/call", {"name": "slow", "arguments": {"seconds": 0.2}}),
        legacy(4, "tools/call", {"name": "echo", "arguments": {"text": "after"}}),
        legacy(5, "initialize", INIT),
    ]
    cold.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in lines))
    replies = {r["id"]: r for r in (cold.recv() for _ in range(5))}
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25" and "tools" in replies[2]["result"]
    assert text(replies[4]) == "after" and replies[5]["error"]["code"] == -32600 and text(replies[3]) == "slow"
    assert text(cold.ask(legacy(6, "tools/call", {"name": "loop_loaded"}))) == "yes"


def test_a_request_before_initialize_moves_to_the_event_loop_and_the_handshake_goes_on(cold):
    assert cold.ask(legacy(1, "ping"))["error"]["code"] == -32601  # no session: a modern request, and no 2026-07-28 method
    assert cold.ask(legacy(2, "initialize", INIT))["result"]["protocolVersion"] == "2025-11-25"
    cold.send(INITIALIZED)
    assert cold.ask(legacy(3, "ping"))["result"] == {}
    assert text(cold.ask(legacy(4, "tools/call", {"name": "loop_loaded"}))) == "yes"


def test_end_of_input_in_a_legacy_session_before_the_event_loop(cold):
    cold.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in [legacy(1, "initialize", INIT), INITIALIZED, legacy(2, "tools/list")]))
    code, rest, err = cold.finish()
    assert code == 0 and err == ""
    assert [orjson.loads(line)["id"] for line in rest.splitlines()] == [1, 2]


def test_concurrency_after_fused_calls(cold):
    assert text(cold.ask(call(1, "echo", {"text": "first"}))) == "first"
    cold.send(call("slow", "slow", {"seconds": 1.0}))
    started = time.monotonic()
    assert text(cold.ask(call("fast", "echo", {"text": "quick"}))) == "quick"
    assert time.monotonic() - started < 0.8
    assert cold.recv()["id"] == "slow"


def test_a_threaded_tool_moves_to_the_event_loop_and_runs_on_the_pool(cold):
    assert text(cold.ask(call(1, "echo", {"text": "x"}))) == "x"
    assert text(cold.ask(call(2, "threaded", {"text": "up"}))) == "UP"
    assert text(cold.ask(call(3, "loop_loaded"))) == "yes"


def test_lines_after_the_move_in_the_same_read_are_served_in_order(cold):
    lines = [call(1, "echo", {"text": "one"}), call(2, "slow", {"seconds": 0.3, "label": "two"}), call(3, "echo", {"text": "three"})]
    cold.send_raw(b"".join(orjson.dumps(m) + b"\n" for m in lines))
    assert [cold.recv()["id"] for _ in range(3)] == [1, 3, 2]


def test_cancellation_after_fused_calls(cold):
    assert text(cold.ask(call(1, "echo", {"text": "x"}))) == "x"
    cold.send(call("c", "slow", {"seconds": 1.0}))
    assert cold.ask(call("started", "echo", {"text": "x"}))["id"] == "started"
    cold.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c", "reason": "user"}})
    assert cold.ask(call("next", "echo", {"text": "x"}))["id"] == "next"
    cold.expect_nothing_more()
    assert cold.finish_quietly() == ""


def test_a_cancellation_of_an_answered_fused_call_is_ignored(cold):
    assert text(cold.ask(call("done", "echo", {"text": "x"}))) == "x"
    cold.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "done"}})
    assert text(cold.ask(call(2, "echo", {"text": "y"}))) == "y"
    cold.expect_nothing_more()


def test_duplicate_id_of_a_running_request_is_refused_after_fused_calls(cold):
    assert text(cold.ask(call(1, "echo", {"text": "x"}))) == "x"
    cold.send(call(5, "slow", {"seconds": 0.5, "label": "first"}))
    reply = cold.ask(call(5, "echo", {"text": "second"}))
    assert reply["id"] == 5 and reply["error"]["code"] == -32600 and "already in flight" in reply["error"]["message"]
    assert text(cold.recv()) == "first"


def test_a_malformed_line_moves_to_the_event_loop_and_gets_its_error(cold):
    assert text(cold.ask(call(1, "echo", {"text": "x"}))) == "x"
    cold.send_raw(b"{not json\n")
    reply = cold.recv()
    assert reply["error"]["code"] == -32700 and "id" not in reply
    wrong = cold.ask(call(2, "echo", {"text": 3}))  # declined by the fused path: the validator's tool error
    assert wrong["id"] == 2 and wrong["result"]["isError"] is True
    assert cold.ask(call(3, "nope"))["error"]["code"] == -32602
    assert text(cold.ask(call(4, "loop_loaded"))) == "yes"


def test_end_of_input_with_only_fused_calls(cold):
    cold.send_raw(b"".join(orjson.dumps(call(i, "echo", {"text": str(i)})) + b"\n" for i in range(50)))
    code, rest, err = cold.finish()
    assert code == 0 and err == ""
    assert [text(orjson.loads(line)) for line in rest.splitlines()] == [str(i) for i in range(50)]


def test_end_of_input_drains_what_the_event_loop_runs(cold):
    cold.send(call(1, "echo", {"text": "early"}))
    cold.send(call(2, "slow", {"seconds": 0.5, "label": "late"}))
    cold.send(call(3, "echo", {"text": "after"}))
    code, rest, _ = cold.finish()
    assert code == 0
    assert [orjson.loads(line)["id"] for line in rest.splitlines()] == [1, 3, 2]


def test_an_unterminated_last_line_is_answered(cold):
    assert text(cold.ask(call(1, "echo", {"text": "x"}))) == "x"
    cold.send_raw(orjson.dumps(call(2, "echo", {"text": "no newline"})))
    code, rest, _ = cold.finish()
    assert code == 0 and text(orjson.loads(rest)) == "no newline"


def test_a_message_split_across_writes(cold):
    line = orjson.dumps(call(1, "echo", {"text": "split"})) + b"\n"
    cold.send_raw(line[:20])
    time.sleep(0.1)  # lets the server read the first part alone (the test passes either way)
    cold.send_raw(line[20:])
    assert text(cold.recv()) == "split"


def test_stdout_closed_by_the_client_stops_the_server():
    proc = subprocess.Popen(wiremcp_cmd("run", str(SERVERS / "cold.py")), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.close()
    proc.stdin.write(orjson.dumps(call(1, "echo", {"text": "x"})) + b"\n")
    proc.stdin.flush()
    assert proc.wait(10) == 0
    proc.stdin.close()
    assert proc.stderr is not None
    proc.stderr.close()


def test_import_wiremcp_loads_no_event_loop():
    code = "import sys, wiremcp; import wiremcp.transports.stdio; assert 'asyncio' not in sys.modules and 'ssl' not in sys.modules, sorted(m for m in sys.modules if 'asyncio' in m)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_a_server_with_a_lifespan_starts_on_the_event_loop(spawn, tmp_path):
    target = tmp_path / "with_lifespan.py"
    target.write_text(
        "import contextlib, sys, wiremcp\n"
        "@contextlib.asynccontextmanager\n"
        "async def life(server):\n"
        "    yield 'ready'\n"
        "server = wiremcp.Server('life', lifespan=life)\n"
        "@server.tool(inline=True)\n"
        "def loaded() -> str:\n"
        "    return 'yes' if 'asyncio' in sys.modules else 'no'\n"
    )
    peer = spawn(*wiremcp_cmd("run", str(target)))
    assert text(peer.ask(call(1, "loaded"))) == "yes"
    assert peer.finish_quietly() == ""
