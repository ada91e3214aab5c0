"""Unit tests of `PendingRequests`.

Spec: MCP 2026-07-28 ``basic/index.mdx`` § Messages > Requests: "The request ID MUST
NOT match the ID of any other request the sender has issued and not yet received a
response for"; § Result/Error Responses: a response "MUST include the same ID as the
request"; JSON-RPC 2.0 §5: a response's id "MUST be the same as the value of the id
member in the Request Object".
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiremcp.jsonrpc import (
    DEFAULT_ABANDONED_MEMORY,
    ErrorResponse,
    LocalProtocolError,
    Pending,
    PendingRequests,
    RemoteProtocolError,
    Response,
)


def ok(id: Any) -> Response:
    return Response(id, {})


def test_new_id_is_fresh_and_increasing() -> None:
    p: PendingRequests[None] = PendingRequests()
    ids = [p.new_id() for _ in range(100)]
    assert ids == list(range(1, 101))
    assert PendingRequests(first_id=0).new_id() == 0


def test_new_id_skips_ids_in_flight() -> None:
    """MCP § Requests: an id is never reused while its request is in flight."""
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "a")
    p.add(2, "b")
    p.add("3", "c")  # a string "3" is a different id from the integer 3
    assert p.new_id() == 3
    p.add(5, "d")
    assert [p.new_id(), p.new_id()] == [4, 6]


def test_new_id_never_collides() -> None:
    p: PendingRequests[None] = PendingRequests()
    for _ in range(50):
        p.add(p.new_id(), "m")
    assert len(p) == 50 and len({e.id for e in p}) == 50


def test_add_and_lookup() -> None:
    p: PendingRequests[str] = PendingRequests()
    entry = p.add("abc", "tools/call", deadline=10.0, context="future")
    assert isinstance(entry, Pending)
    assert (entry.id, entry.method, entry.deadline, entry.context) == ("abc", "tools/call", 10.0, "future")
    assert "abc" in p and 1 not in p and len(p) == 1
    assert p.get("abc") is entry and p.get("zzz") is None
    assert list(p) == [entry]
    assert repr(entry) == "Pending(id='abc', method='tools/call', deadline=10.0)"
    assert p.add(2, "m").context is None


def test_duplicate_in_flight_id() -> None:
    """MCP § Requests: "The request ID MUST NOT match the ID of any other request the
    sender has issued and not yet received a response for" -> LocalProtocolError."""
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "a")
    with pytest.raises(LocalProtocolError, match="already in flight"):
        p.add(1, "b")
    assert p.get(1).method == "a"  # the first one is untouched
    p.resolve(ok(1))
    p.add(1, "c")  # settled: the id may be used again


@pytest.mark.parametrize("bad", [None, 1.0, True, [], {}])
def test_add_refuses_non_mcp_ids(bad: Any) -> None:
    """MCP § Requests: "a string or integer ID"."""
    with pytest.raises(LocalProtocolError, match="string or an integer"):
        PendingRequests().add(bad, "m")


def test_out_of_order_replies() -> None:
    """Replies settle their own request whatever the order (JSON-RPC 2.0 §5: by id)."""
    p: PendingRequests[int] = PendingRequests()
    for i in range(5):
        p.add(i, f"m{i}", context=i)
    for i in (3, 0, 4, 1, 2):
        entry = p.resolve(ok(i) if i % 2 else ErrorResponse.build(i, -32603, "x"))
        assert entry is not None and entry.id == i and entry.context == i
    assert len(p) == 0


@settings(max_examples=50, deadline=None)
@given(st.permutations(list(range(8))))
def test_any_reply_order(order: list[int]) -> None:
    p: PendingRequests[None] = PendingRequests()
    ids = [p.new_id() for _ in range(8)]
    for i in ids:
        p.add(i, "m")
    for k in order:
        assert p.resolve(ok(ids[k])).id == ids[k]
    assert len(p) == 0


def test_unknown_id() -> None:
    """A reply for an id never in flight: RemoteProtocolError (no wire reply is owed)."""
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "m")
    for reply in (ok(2), ok("1"), ErrorResponse(None, {"code": -32700, "message": "x"})):
        with pytest.raises(RemoteProtocolError, match="not in flight"):
            p.resolve(reply)
    p.resolve(ok(1))
    with pytest.raises(RemoteProtocolError):  # a second reply to the same request
        p.resolve(ok(1))


def test_abandon_then_late_reply() -> None:
    """A reply racing a cancellation is expected: reported as late (None), once."""
    p: PendingRequests[None] = PendingRequests()
    entry = p.add(7, "slow")
    assert p.abandon(7) is entry
    assert 7 not in p and len(p) == 0
    assert p.resolve(ok(7)) is None
    with pytest.raises(RemoteProtocolError):  # only one late reply is excused
        p.resolve(ok(7))
    assert p.abandon(7) is None  # nothing in flight: nothing remembered
    with pytest.raises(RemoteProtocolError):
        p.resolve(ok(7))


def test_abandon_then_reuse_the_id() -> None:
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "old")
    p.abandon(1)
    new = p.add(1, "new")
    assert p.resolve(ok(1)) is new  # the reply belongs to the request now in flight
    with pytest.raises(RemoteProtocolError):
        p.resolve(ok(1))


def test_abandoned_memory_is_bounded() -> None:
    p: PendingRequests[None] = PendingRequests(abandoned_memory=3)
    for i in range(5):
        p.add(i, "m")
        p.abandon(i, "cancelled")
    for forgotten in (0, 1):
        with pytest.raises(RemoteProtocolError):
            p.resolve(ok(forgotten))
    for remembered in (2, 3, 4):
        assert p.resolve(ok(remembered)) is None
    assert DEFAULT_ABANDONED_MEMORY == 1024


def test_abandoned_memory_zero_and_negative() -> None:
    p: PendingRequests[None] = PendingRequests(abandoned_memory=0)
    p.add(1, "m")
    p.abandon(1)
    with pytest.raises(RemoteProtocolError):
        p.resolve(ok(1))
    with pytest.raises(ValueError):
        PendingRequests(abandoned_memory=-1)


def test_deadlines_expire_in_order() -> None:
    """Deadlines are plain numbers on the caller's clock (no clock is read)."""
    p: PendingRequests[None] = PendingRequests()
    assert p.next_deadline() is None and p.expire(1e9) == []
    p.add(1, "a", deadline=30.0)
    p.add(2, "b", deadline=10.0)
    p.add(3, "c", deadline=20.0)
    p.add(4, "d")  # no deadline: never expires
    p.add(5, "e", deadline=10.0)  # same deadline as 2: both go
    assert p.next_deadline() == 10.0
    assert p.expire(9.999) == []
    assert sorted(e.id for e in p.expire(10.0)) == [2, 5]  # "at or before now"
    assert p.next_deadline() == 20.0
    assert [e.id for e in p.expire(100.0)] == [3, 1]
    assert p.next_deadline() is None
    assert [e.id for e in p] == [4]
    # expired requests are abandoned: their late replies are excused once
    assert p.resolve(ok(2)) is None and p.resolve(ok(1)) is None
    with pytest.raises(RemoteProtocolError):
        p.resolve(ok(2))


def test_settled_requests_leave_the_deadline_heap() -> None:
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "a", deadline=1.0)
    p.add(2, "b", deadline=2.0)
    p.add(3, "c", deadline=3.0)
    p.resolve(ok(1))
    p.abandon(2)
    assert p.next_deadline() == 3.0
    p.resolve(ok(3))
    assert p.next_deadline() is None
    assert p.expire(10.0) == []


def test_expire_skips_settled_entries() -> None:
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "a", deadline=1.0)
    p.add(2, "b", deadline=2.0)
    p.resolve(ok(1))
    assert [e.id for e in p.expire(5.0)] == [2]


def test_reused_id_with_a_new_deadline() -> None:
    """A stale heap entry for a reused id must not expire the new request early."""
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "old", deadline=5.0)
    p.resolve(ok(1))
    p.add(1, "new", deadline=50.0)
    assert p.expire(10.0) == []
    assert p.next_deadline() == 50.0
    assert [e.method for e in p.expire(50.0)] == ["new"]


def test_reused_id_with_the_same_deadline() -> None:
    p: PendingRequests[None] = PendingRequests()
    p.add(1, "old", deadline=5.0)
    p.resolve(ok(1))
    p.add(1, "new", deadline=5.0)
    assert p.next_deadline() == 5.0
    assert [e.method for e in p.expire(5.0)] == ["new"]
    assert p.next_deadline() is None


def test_drain() -> None:
    """The connection is gone: everything in flight comes back, nothing stays."""
    p: PendingRequests[str] = PendingRequests()
    p.add(1, "a", deadline=1.0, context="x")
    p.add("two", "b", context="y")
    drained = p.drain()
    assert [(e.id, e.context) for e in drained] == [(1, "x"), ("two", "y")]
    assert len(p) == 0 and p.next_deadline() is None and p.expire(100.0) == []
    assert p.drain() == []
    with pytest.raises(RemoteProtocolError):
        p.resolve(ok(1))


def test_iteration_is_a_snapshot() -> None:
    p: PendingRequests[None] = PendingRequests()
    for i in range(3):
        p.add(i, "m")
    for entry in p:  # settling while iterating is fine
        p.resolve(ok(entry.id))
    assert len(p) == 0


def test_the_deadline_heap_stays_proportional_to_what_is_in_flight() -> None:
    """Settled requests do not pile up in the deadline heap (a client with a timeout on every call)."""
    pending: PendingRequests[None] = PendingRequests()
    for i in range(1000):
        pending.add(i, "m", deadline=1000.0 + i)
        if i >= 10:
            if i % 2:
                pending.resolve(Response(i - 10, {}))
            else:
                pending.abandon(i - 10)
    assert len(pending) == 10
    assert len(pending._deadlines) <= 64 + 2 * len(pending)
    assert pending.next_deadline() == 1990.0
    assert [e.id for e in pending.expire(2000.0)] == list(range(990, 1000))
