"""Hardening of the stdio transport, over a real server subprocess (issue 13, server side).

``wiremcp run tests/servers/hardening.py`` on a pipe, spoken to line by line.

* At the in-flight cap (256 asynchronous requests, defect 2) the server still
  reads its input: cancellations, the client's answers to the server's own
  requests and the end of input are acted on; new requests wait in a bounded
  queue; ``subscriptions/listen`` streams past their own cap are refused with a
  clear error instead of taking the last slots.
* A handler that raises ``CancelledError`` without being cancelled gets one
  -32603 reply (defect 4).
"""

from __future__ import annotations

import os
import select
import time
from typing import Any

import pytest

from conftest import SERVERS, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow

LISTEN = {"notifications": {"toolsListChanged": True}}


@pytest.fixture
def hard(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "hardening.py")))


def legacy(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def cancel(id_: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id_}}


def read_until(peer, predicate, limit: int = 5000) -> list[dict[str, Any]]:
    """Messages up to and including the first that ``predicate`` accepts."""
    seen = []
    for _ in range(limit):
        msg = peer.recv()
        seen.append(msg)
        if predicate(msg):
            return seen
    raise AssertionError(f"not found in {limit} messages")


def is_reply(id_: Any):
    return lambda m: m.get("id") == id_ and "method" not in m


def open_listens(peer, count: int, first_id: int = 1000) -> tuple[list[int], list[dict[str, Any]]]:
    """Send ``count`` listens; the ids acknowledged, and the replies that refused the others."""
    for i in range(count):
        peer.send(request(first_id + i, "subscriptions/listen", LISTEN))
    acked: list[int] = []
    refused: list[dict[str, Any]] = []
    while len(acked) + len(refused) < count:
        msg = peer.recv()
        if msg.get("method") == "notifications/subscriptions/acknowledged":
            acked.append(msg["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"])
        elif "error" in msg:
            refused.append(msg)
        else:
            raise AssertionError(f"unexpected {msg}")
    return acked, refused


def test_listens_past_their_cap_are_refused_and_other_requests_still_served(hard):
    """300 listens: the first 128 (max_listens) are acknowledged, the rest refused at once with a clear
    error; a tools/list sent after them is answered."""
    acked, refused = open_listens(hard, 300)
    assert len(acked) == 128 and len(refused) == 172
    for reply in refused:
        assert reply["error"]["code"] == -32000
        assert "subscriptions/listen" in reply["error"]["message"] and "128" in reply["error"]["message"]
    assert "tools" in hard.ask(request(1, "tools/list"))["result"]


def test_cancelling_listens_frees_their_slots(hard):
    acked, _ = open_listens(hard, 300)
    for id_ in acked[:100]:
        hard.send(cancel(id_))
    more, refused = open_listens(hard, 100, first_id=5000)
    assert len(more) == 100 and not refused
    assert "tools" in hard.ask(request(1, "tools/list"))["result"]


def test_the_server_exits_at_end_of_input_with_listens_open(hard):
    open_listens(hard, 300)
    code, _, err = hard.finish()
    assert code == 0, err


def stderr_until(peer, text: str, count: int, timeout: float = 20.0) -> str:
    """Read the server's stderr until ``text`` has appeared ``count`` times (a synchronisation point)."""
    fd = peer.proc.stderr.fileno()
    got = b""
    deadline = time.monotonic() + timeout
    while got.decode(errors="replace").count(text) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} seen {got.decode(errors='replace').count(text)} times, not {count}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server's stderr ended"
            got += chunk
    return got.decode(errors="replace")


def test_at_the_in_flight_cap_the_server_still_reads_cancellations_and_end_of_input(hard):
    """256 waiting calls fill the in-flight cap; 50 more wait their turn; cancelling 100 running ones
    lets the waiting ones start; the end of input still ends the process."""
    for i in range(306):
        hard.send(call(i, "wait", {"label": str(i)}))
    seen = stderr_until(hard, ": started", 256)  # the cap is reached: the other 50 wait
    hard.send(request(9999, "tools/list"))  # behind the waiting ones
    for i in range(100):
        hard.send(cancel(i))
    reply = hard.recv()  # tools/list: it started once slots were freed
    assert reply["id"] == 9999 and "tools" in reply["result"], reply
    for i in range(100, 306):
        hard.send(cancel(i))
    assert hard.ask(request(10000, "tools/list"))["id"] == 10000
    code, rest, err = hard.finish()
    err = seen + err
    assert code == 0, err
    assert rest == b""  # cancelled calls get no reply
    assert err.count(": started") == 306 and err.count(": cancelled") == 306


def test_three_hundred_legacy_calls_that_each_ask_the_client_all_complete(hard):
    """300 calls that each send the client a sampling request: the client's answers are read while the
    in-flight cap is reached, so every call completes."""
    hard.ask(legacy(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"sampling": {}},
                                      "clientInfo": {"name": "old", "version": "1"}}))
    hard.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, 301):
        hard.send(legacy(i, "tools/call", {"name": "sample_once", "arguments": {}}))
    done = set()
    while len(done) < 300:
        msg = hard.recv()
        if msg.get("method") == "sampling/createMessage":
            hard.send({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}})
        else:
            assert msg["result"]["content"] == [{"type": "text", "text": "hi"}], msg
            done.add(msg["id"])
    assert done == set(range(1, 301))


def test_a_handler_raising_cancelled_error_gets_one_internal_error(hard):
    reply = hard.ask(call(1, "rogue"))
    assert reply["id"] == 1 and reply["error"]["code"] == -32603, reply
    assert hard.ask(call(2, "stats"))["id"] == 2  # exactly one reply: the next one is the next request's


def test_a_waiting_request_that_is_cancelled_never_starts(hard):
    """cancellation.mdx: a request cancelled before it started is dropped: never run, never answered."""
    for i in range(256):
        hard.send(call(i, "wait", {"label": str(i)}))
    seen = stderr_until(hard, ": started", 256)
    for i in range(256, 266):  # no slot: they wait
        hard.send(call(i, "wait", {"label": str(i)}))
    for i in range(256, 266):
        hard.send(cancel(i))
    hard.send(request(9999, "tools/list"))  # waits too: every slot is taken
    hard.send(cancel(0))  # one slot frees: the next waiting request is tools/list, not a cancelled one
    assert hard.recv()["id"] == 9999
    for i in range(1, 256):
        hard.send(cancel(i))
    code, rest, err = hard.finish()
    err = seen + err
    assert code == 0 and rest == b"", err
    assert err.count(": started") == 256 and err.count(": cancelled") == 256
