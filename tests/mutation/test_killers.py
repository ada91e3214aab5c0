"""Tests written for mutants that survived the mutation runs (tests/mutation/run.py).

Each names the rule it holds; docs/testing-hardening.md lists the survivors
that are equivalent (no behaviour to tell apart) and those left open.
"""

from __future__ import annotations

import pytest

from wiremcp.jsonrpc import MCP, Decoder, InvalidRequest, JSONRPCError, PendingRequests, Request, Response


def test_the_deadline_heap_stays_proportional_to_what_is_in_flight() -> None:
    """jsonrpc/_pending.py: settled requests' deadlines are dropped, so memory is O(in flight).

    Kills: `resolve` and `abandon` not compacting (``deadline is None`` for ``is not None``)
    and a compaction threshold moved.
    """
    pending: PendingRequests[None] = PendingRequests()
    for i in range(1000):
        pending.add(i, "ping", deadline=1e9 + i)
        assert pending.resolve(Response(i, {})) is not None
    assert len(pending) == 0
    assert len(pending._deadlines) <= 64  # the bound `_compact` keeps: 64 + 2 * in flight
    for i in range(1000, 2000):
        pending.add(i, "ping", deadline=1e9 + i)
        assert pending.abandon(i) is not None
    assert len(pending._deadlines) <= 64
    pending.add("live", "ping", deadline=5.0)
    assert pending.next_deadline() == 5.0
    assert [e.id for e in pending.expire(5.0)] == ["live"]


def test_the_deadline_heap_is_rebuilt_only_past_its_bound() -> None:
    """The heap is rebuilt when it holds more than 64 + 2 x in-flight entries, not at exactly that many."""
    pending: PendingRequests[None] = PendingRequests()
    for i in range(64):
        pending.add(i, "ping", deadline=1e9 + i)
    for i in range(64):
        pending.resolve(Response(i, {}))
    assert len(pending._deadlines) == 64  # exactly at the bound: kept as is (dropped lazily)
    pending.add(64, "ping", deadline=2e9)
    pending.resolve(Response(64, {}))
    assert len(pending._deadlines) == 0  # 65 > 64: rebuilt from what is in flight


def test_abandoned_memory_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="^abandoned_memory must not be negative$"):
        PendingRequests(abandoned_memory=-1)
    PendingRequests(abandoned_memory=0)  # zero is allowed: remember nothing


def test_the_smallest_decoder_limits_are_one() -> None:
    """A Decoder with max_size=1 and max_depth=1 is valid; 0 is not (jsonrpc/_codec.py)."""
    decoder = Decoder(MCP, max_size=1, max_depth=1)
    with pytest.raises(InvalidRequest, match="must be an object, not an integer"):
        decoder.decode(b"1")
    with pytest.raises(InvalidRequest, match="the message is 2 bytes; the limit is 1"):
        decoder.decode(b"{}")
    for bad in ({"max_size": 0}, {"max_depth": 0}):
        with pytest.raises(ValueError, match="^max_size and max_depth must be positive$"):
            Decoder(MCP, **bad)


def test_messages_are_unhashable_by_their_own_name() -> None:
    with pytest.raises(TypeError, match="^unhashable type: 'Request'$"):
        hash(Request(1, "ping"))


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "Parse error: the message is empty"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
         "Invalid Request: batches (JSON arrays) are not allowed in MCP; send one message per line"),
        (b'{"jsonrpc":"2.0","id":1,"error":"bad"}', "Invalid Request: 'error' must be an object, not a string"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}', "Invalid Request: 'error.code' must be an integer"),
        (b'{"jsonrpc":"2.0","result":{}}', "Invalid Request: a response must carry the 'id' of its request"),
        (b'{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}',
         "Invalid Request: a response must carry exactly one of 'result' and 'error', not both"),
    ],
)
def test_error_messages_say_what_is_wrong(data: bytes, message: str) -> None:
    """The message of each refusal names the rule broken (jsonrpc/_codec.py, the decoding table).

    Kills the mutants that blank or garble a message: a peer reads these to fix its input.
    """
    with pytest.raises(JSONRPCError) as info:
        Decoder(MCP).decode(data)
    assert info.value.message == message
