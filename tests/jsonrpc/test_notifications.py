"""A notification is never answered, whatever is wrong with it.

Spec: JSON-RPC 2.0 §4.1 ("A Notification is a Request object without an
"id" member ... The Server MUST NOT reply to a Notification, including those
that are within a batch request"); MCP 2026-07-28 basic/index.mdx,
Notifications ("The receiver MUST NOT send a response"). The decoder decides
that a message is a notification before it checks anything else about it:
every problem with one raises `InvalidNotification`, which a receiver logs
and never answers.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiremcp.jsonrpc import (
    INVALID_REQUEST,
    JSONRPC_2_0,
    MCP,
    Batch,
    Decoder,
    InvalidNotification,
    InvalidRequest,
    Notification,
)

from .strategies import assert_good_error, envelope_like, json_values, method_values, mostly_valid, params_values

DECODERS = {"mcp": Decoder(MCP), "jsonrpc2": Decoder(JSONRPC_2_0)}

#: Objects with a ``method`` member and no ``id``: notifications, right or wrong in every other way.
notification_like = st.one_of(mostly_valid, envelope_like).filter(lambda o: "id" not in o).map(
    lambda o: o if "method" in o else {**o, "method": "notifications/x"}
)


def _outcome(decoder: Decoder, obj: dict[str, Any]) -> Any:
    try:
        return decoder.decode(orjson.dumps(obj))
    except InvalidRequest as exc:
        return exc


def _never_answered(out: Any, obj: dict[str, Any]) -> None:
    """A notification decodes to a `Notification`, or fails with `InvalidNotification` (no reply)."""
    if isinstance(out, InvalidRequest):
        assert type(out) is InvalidNotification, (obj, out)
        assert out.code == INVALID_REQUEST and out.id is None
        method = obj["method"]
        assert out.method == (method if type(method) is str else None)
        assert_good_error(out)
    else:
        assert type(out) is Notification, (obj, out)


@pytest.mark.parametrize("profile", DECODERS)
@settings(max_examples=150, deadline=None)
@given(obj=notification_like)
def test_a_notification_is_never_answered(profile: str, obj: dict[str, Any]) -> None:
    _never_answered(_outcome(DECODERS[profile], obj), obj)


@settings(max_examples=80, deadline=None)
@given(items=st.lists(notification_like, min_size=1, max_size=4))
def test_nor_inside_a_batch(items: list[dict[str, Any]]) -> None:
    """JSON-RPC 2.0 §6: notifications in a batch get no reply either."""
    out = DECODERS["jsonrpc2"].decode(orjson.dumps(items))
    assert type(out) is Batch and len(out.items) == len(items)
    for item, obj in zip(out.items, items):
        _never_answered(item, obj)


@given(method=method_values, params=params_values, jsonrpc=st.one_of(st.just("2.0"), json_values))
def test_the_decision_comes_before_any_other_check(method: Any, params: Any, jsonrpc: Any) -> None:
    """Whatever the method, params and jsonrpc members hold, no id means a notification."""
    obj = {"jsonrpc": jsonrpc, "method": method, "params": params}
    _never_answered(_outcome(DECODERS["mcp"], obj), obj)


@pytest.mark.parametrize(
    "obj, problem",
    [
        ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1, 2]}, "'params' must be an object, not an array"),
        ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}, "'params' must be an object, not a string"),
        ({"jsonrpc": "2.0", "method": "notifications/progress", "params": None}, "'params' must be an object, not null"),
        ({"jsonrpc": "2.0", "method": "notifications/progress", "params": 5}, "'params' must be an object, not an integer"),
        ({"jsonrpc": "1.0", "method": "notifications/initialized"}, '"jsonrpc" must be the string "2.0"'),
        ({"method": "notifications/initialized"}, '"jsonrpc" member is missing'),
        ({"jsonrpc": "2.0", "method": 7}, "'method' must be a string, not an integer"),
        ({"jsonrpc": "2.0", "method": "notifications/x", "result": {}}, "must not carry 'result' or 'error'"),
    ],
)
def test_each_problem_is_named_and_answered_by_nobody(obj: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidNotification) as info:
        DECODERS["mcp"].decode(orjson.dumps(obj))
    assert problem in info.value.message and info.value.id is None
    # The same object with an id is a request: the same -32600, and that one is answered with its id.
    with pytest.raises(InvalidRequest) as request:
        DECODERS["mcp"].decode(orjson.dumps({**obj, "id": 3}))
    assert type(request.value) is InvalidRequest and request.value.id == 3 and problem in request.value.message
