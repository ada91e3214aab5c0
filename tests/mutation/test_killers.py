"""Tests written for mutants that survived the mutation runs (tests/mutation/run.py).

Each names the rule it holds; docs/testing-hardening.md lists the survivors
that are equivalent (no behaviour to tell apart) and those left open.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

import orjson
import pytest

from wiremcp.jsonrpc import (
    JSONRPC_2_0,
    MCP,
    Batch,
    Decoder,
    LocalProtocolError,
    Profile,
    InvalidParams,
    InvalidNotification,
    InvalidRequest,
    JSONRPCError,
    PendingRequests,
    Request,
    Response,
    encode_error,
    encode_request,
)
from wiremcp.protocol.state import STATE_KEY_ENV, StateSealer


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


# -- jsonrpc, the rest of the run (mutants of Decoder.decode and the encoders) -------------


def test_the_heap_rebuilt_with_requests_in_flight_keeps_their_deadlines() -> None:
    """jsonrpc/_pending.py `_compact`: the rebuilt heap holds the live requests' deadlines, and the
    rebuild comes at exactly 64 + 2 x in flight entries.

    Kills: the rebuild keeping the entries *without* a deadline (every live deadline lost: those
    requests would never time out) and the factor 2 moved; the earlier tests only compacted with
    nothing in flight.
    """
    pending: PendingRequests[None] = PendingRequests()
    for i in range(10):
        pending.add(f"live-{i}", "ping", deadline=float(i))
    pending.add("no-deadline", "ping")
    in_flight = 11
    settled = 0
    while len(pending._deadlines) < 64 + 2 * in_flight:  # each settled request leaves its deadline behind
        pending.add(settled, "ping", deadline=1e9)
        pending.resolve(Response(settled, {}))
        settled += 1
    assert len(pending._deadlines) == 64 + 2 * in_flight  # at the bound: not rebuilt yet
    pending.add(settled, "ping", deadline=1e9)
    pending.resolve(Response(settled, {}))
    assert len(pending._deadlines) == 10  # past it: rebuilt from the live requests that have a deadline
    assert pending.next_deadline() == 0.0
    assert sorted(str(e.id) for e in pending.expire(9.0)) == [f"live-{i}" for i in range(10)]
    assert [e.id for e in pending.drain()] == ["no-deadline"]


def test_the_general_profile_takes_batches_float_ids_and_positional_params() -> None:
    """jsonrpc/_codec.py `Profile`: each flag is honoured, in the built-in JSON-RPC 2.0 profile and in
    one made here (kills them set to None: the built-in profiles are made at import, before a mutant runs)."""
    permissive = Profile("permissive", batches=True, null_id=True, float_id=True, positional_params=True)
    assert (permissive.batches, permissive.float_id, permissive.positional_params) == (True, True, True)
    for decoder in (Decoder(JSONRPC_2_0), Decoder(permissive)):
        assert isinstance(decoder.decode(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]'), Batch)
        assert decoder.decode(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}') == Request(1.5, "ping")
        assert decoder.decode(b'{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}') == Request(1, "x", [1])
    decoder = Decoder(JSONRPC_2_0)
    batch = decoder.decode(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')
    assert isinstance(batch, Batch) and batch.items == (Request(1, "ping"),)
    assert decoder.decode(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}') == Request(1.5, "ping")
    assert decoder.decode(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[1,2]}') == Request(1, "ping", [1, 2])
    assert repr(JSONRPC_2_0) == "<Profile JSON-RPC 2.0>" and repr(MCP) == "<Profile MCP>"
    custom = Profile("strict", batches=False, null_id=False, float_id=False, positional_params=False)
    with pytest.raises(InvalidRequest, match="^Invalid Request: batches \\(JSON arrays\\) are not allowed in strict; "):
        Decoder(custom).decode(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]')


def test_a_short_message_nesting_too_deep_is_refused() -> None:
    """jsonrpc/_codec.py `Decoder.decode`: a message of more than 2 x max_depth bytes is checked.

    Kills the bound moved to 3 x max_depth: ``[[[[[[]]]]]]`` nests 6 levels in 12 bytes.
    (The other mutants of that test only check more messages than needed: equivalent.)
    """
    with pytest.raises(InvalidRequest) as info:
        Decoder(JSONRPC_2_0, max_depth=5).decode(b"[[[[[[]]]]]]")
    assert info.value.message == "Invalid Request: the message nests deeper than 5 levels"


def test_a_notification_nesting_too_deep_is_refused_as_a_notification() -> None:
    """jsonrpc/_codec.py `Decoder.decode`: past the depth limit, a message with a method and no id is
    an `InvalidNotification` (never answered) naming its method; with an id, an `InvalidRequest`.

    Kills the mutants of that branch (the dict test inverted, the member names garbled, the
    arguments of `_refused` dropped or swapped).
    """
    deep = b'{"a":{"b":{"c":{}}}}'
    decoder = Decoder(MCP, max_depth=3)
    with pytest.raises(InvalidNotification) as note:
        decoder.decode(b'{"jsonrpc":"2.0","method":"n","params":' + deep + b"}")
    assert note.value.message == "Invalid Request: the message nests deeper than 3 levels"
    assert note.value.method == "n"
    with pytest.raises(InvalidRequest) as req:
        decoder.decode(b'{"jsonrpc":"2.0","id":7,"method":"n","params":' + deep + b"}")
    assert type(req.value) is InvalidRequest
    assert req.value.message == "Invalid Request: the message nests deeper than 3 levels"


@pytest.mark.parametrize(
    "profile, data, message",
    [
        (JSONRPC_2_0, b"[]", "Invalid Request: a batch must not be empty"),
        (MCP, b'{"jsonrpc":"2.0","id":1}',
         "Invalid Request: the object has neither 'method' (a request or notification) nor 'result'/'error' (a response)"),
        (MCP, b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
         "Invalid Request: 'id' must be a string or an integer, not a number"),
        (MCP, b'{"jsonrpc":"2.0","id":[],"method":"ping"}',
         "Invalid Request: 'id' must be a string or an integer, not an array"),
        (JSONRPC_2_0, b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
         "Invalid Request: 'id' must be a string, a number or null, not an object"),
        (JSONRPC_2_0, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
         "Invalid Request: 'params' must be an object or an array, not a string"),
        (MCP, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}',
         "Invalid Request: 'params' must be an object, not a string"),
        (MCP, b'{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}',
         "Invalid Request: a request must not carry 'result' or 'error'"),
        (MCP, b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":5}}',
         "Invalid Request: 'error.message' must be a string"),
        (MCP, b'{"jsonrpc":"2.0","id":1,"result":[]}', "Invalid Request: 'result' must be an object, not an array"),
        (MCP, b'{"jsonrpc":"2.0","id":[],"result":{}}',
         "Invalid Request: a response 'id' must be a valid request id, not an array"),
        (MCP, b'{"id":1,"method":"ping"}',
         'Invalid Request: the "jsonrpc" member is missing; it must be the string "2.0"'),
        # a wrong value is shown in full up to 32 characters, then cut short
        (MCP, b'{"jsonrpc":"' + b"a" * 32 + b'","id":1,"method":"ping"}',
         'Invalid Request: "jsonrpc" must be the string "2.0", not "' + "a" * 32 + '"'),
        (MCP, b'{"jsonrpc":"' + b"a" * 33 + b'","id":1,"method":"ping"}',
         'Invalid Request: "jsonrpc" must be the string "2.0", not "' + "a" * 32 + '..."'),
    ],
)
def test_more_error_messages_say_what_is_wrong(profile: Profile, data: bytes, message: str) -> None:
    """The rest of the refusals' messages, pinned (kills the mutants that garble them or name no type)."""
    with pytest.raises(JSONRPCError) as info:
        Decoder(profile).decode(data)
    assert info.value.message == message


def test_encoders_keep_the_line_option_and_name_the_wrong_id_type() -> None:
    """jsonrpc/_codec.py: `encode_error` without an id honours ``line`` (kills it dropped);
    `encode_request` names the type of a wrong id."""
    error = {"code": -32600, "message": "m"}
    assert encode_error(None, error, line=True) == b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}\n'
    assert encode_error(None, error) == b'{"jsonrpc":"2.0","error":{"code":-32600,"message":"m"}}'
    with pytest.raises(LocalProtocolError, match="^a request id must be a string or an integer, not a number$"):
        encode_request(1.5, "ping", {})  # type: ignore[arg-type]  # the wrong type is the point


# -- protocol/state.py (requestState) ----------------------------------------------------


def _sealer(now: list[float], keys: list[str] | None = None) -> StateSealer:
    return StateSealer(keys or ["k" * 16], ttl=10, clock=lambda: now[0])


def test_a_state_is_bound_to_the_principal_it_was_sealed_for() -> None:
    """protocol/state.py: a state sealed for a principal opens only for that principal (and one
    sealed for nobody only for nobody). Kills the mutants that drop or rename the binding."""
    now = [1000.0]
    sealer = _sealer(now)
    state = sealer.seal("digest", {"a": 1}, principal="alice")
    assert sealer.open(state, "digest", principal="alice") == {"a": 1}
    for other in ("bob", None):
        with pytest.raises(InvalidParams, match="^Invalid params: requestState was issued to a different principal$"):
            sealer.open(state, "digest", principal=other)
    anonymous = sealer.seal("digest", 2)
    assert sealer.open(anonymous, "digest") == 2
    with pytest.raises(InvalidParams, match="different principal"):
        sealer.open(anonymous, "digest", principal="alice")


def test_a_state_expires_after_its_ttl_and_not_before() -> None:
    now = [1000.0]
    sealer = _sealer(now)
    state = sealer.seal("digest", 1)  # expires at 1010
    now[0] = 1010.0
    assert sealer.open(state, "digest") == 1
    now[0] = 1010.5
    with pytest.raises(InvalidParams, match="^Invalid params: requestState has expired; send the request again without it$"):
        sealer.open(state, "digest")


def _forge(key: bytes, payload: dict[str, object]) -> str:
    """A state with a valid tag over any payload (what a holder of the key could make)."""
    body = orjson.dumps(payload)
    tag = hmac.new(key, body, hashlib.sha256).digest()
    return f"{_b64(body)}.{_b64(tag)}"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def test_a_state_without_an_expiry_or_with_another_version_is_refused() -> None:
    now = [1000.0]
    sealer = _sealer(now)
    with pytest.raises(InvalidParams, match="has expired"):
        sealer.open(_forge(b"k" * 16, {"v": 1, "d": "digest", "s": 1}), "digest")
    with pytest.raises(InvalidParams, match="^Invalid params: requestState has an unknown version$"):
        sealer.open(_forge(b"k" * 16, {"v": 99, "d": "digest", "x": 2000, "s": 1}), "digest")
    with pytest.raises(InvalidParams, match="^Invalid params: requestState belongs to a different request$"):
        sealer.open(sealer.seal("digest", 1), "other digest")
    with pytest.raises(InvalidParams, match="^Invalid params: requestState must be a string$"):
        sealer.open(5, "digest")
    with pytest.raises(InvalidParams, match=r"^Invalid params: requestState is malformed \(not the payload and the full tag, "
                       r"each in unpadded base64url\); it was altered or not issued here$"):
        sealer.open("no-dot-here", "digest")
    with pytest.raises(InvalidParams, match=r"^Invalid params: requestState failed verification \(it was altered or not issued here\)$"):
        sealer.open(_forge(b"another key, 16+", {"v": 1, "d": "digest", "x": 2000, "s": 1}), "digest")


def test_state_keys_are_at_least_16_bytes_and_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    StateSealer(["x" * 16])
    with pytest.raises(ValueError, match="^a requestState key must be at least 16 bytes$"):
        StateSealer(["x" * 15])
    monkeypatch.setenv(STATE_KEY_ENV, "e" * 16)
    assert StateSealer().open(StateSealer().seal("d", 1), "d") == 1  # one key shared through the environment
    with pytest.raises(InvalidParams, match="failed verification"):
        StateSealer(["o" * 16]).open(StateSealer().seal("d", 1), "d")
    monkeypatch.setenv(STATE_KEY_ENV, "short")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        StateSealer()
    monkeypatch.delenv(STATE_KEY_ENV)
    with pytest.raises(InvalidParams, match="failed verification"):  # no key: a random one per sealer
        StateSealer().open(StateSealer().seal("d", 1), "d")
