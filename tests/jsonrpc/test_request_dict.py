"""`Decoder.request_dict`, the fast path for a plain request: a dict exactly when `decode` gives a
`Request` of the four members ``jsonrpc``, ``id``, ``method``, ``params`` and nothing else, and
None (never an exception) for everything else, at and around every limit `decode` keeps.

Written for the mutation run of ``jsonrpc`` (tests/mutation/run.py): no test of its subset reached
this method.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from wiremcp.jsonrpc import Decoder, JSONRPCError, Request


def _agrees(decoder: Decoder, data: bytes) -> dict[str, Any] | None:
    """request_dict's answer, checked against decode's."""
    fast = decoder.request_dict(data)
    try:
        msg: Any = decoder.decode(data)
    except JSONRPCError:
        msg = None
    plain = type(msg) is Request and len(orjson.loads(data)) == 4
    if fast is None:
        assert not plain, data
    else:
        assert plain, data
        assert (fast["id"], fast["method"], fast["params"]) == (msg.id, msg.method, msg.params)
    return fast


def _request(**members: Any) -> bytes:
    doc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}
    doc.update(members)
    return orjson.dumps({k: v for k, v in doc.items() if v is not _GONE})


_GONE = object()


@pytest.mark.parametrize(
    "data, plain",
    [
        (_request(), True),
        (_request(id="a-1"), True),
        (_request(id=0), True),
        (_request(id=1.5), False),
        (_request(id=True), False),
        (_request(id=None), False),
        (_request(id=[1]), False),
        (_request(jsonrpc="1.0"), False),
        (_request(jsonrpc=2.0), False),
        (_request(method=5), False),
        (_request(method=None), False),
        (_request(params=[1]), False),
        (_request(params="x"), False),
        (_request(params=_GONE), False),  # three members
        (_request(id=_GONE), False),  # a notification
        (orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}, "extra": 1}), False),
        (orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {}, "x": 1}), False),
        (orjson.dumps([{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}}]), False),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}', False),  # not JSON
        (b"", False),
        (b'"a string"', False),
    ],
)
def test_a_dict_exactly_for_a_plain_request(data: bytes, plain: bool) -> None:
    assert (_agrees(Decoder(), data) is not None) is plain


def test_the_size_limit_holds_to_the_byte() -> None:
    data = _request()
    assert _agrees(Decoder(max_size=len(data)), data) is not None
    assert _agrees(Decoder(max_size=len(data) - 1), data) is None


def _nested(levels: int, pad: int = 0) -> bytes:
    """A plain request whose params nest ``levels`` objects deep (the message itself is one more)."""
    inner: Any = {"pad": "p" * pad}
    for _ in range(levels - 1):
        inner = {"a": inner}
    return orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": inner})


@pytest.mark.parametrize("pad", [0, 5000])  # under and over the size below which brackets are counted first
@pytest.mark.parametrize("max_depth", [3, 8])
def test_the_depth_limit_holds_to_the_level(max_depth: int, pad: int) -> None:
    decoder = Decoder(max_depth=max_depth)
    at = _nested(max_depth - 1, pad)  # the message and its params: max_depth levels
    over = _nested(max_depth, pad)
    assert _agrees(decoder, at) is not None
    assert _agrees(decoder, over) is None


def test_arrays_count_towards_the_depth() -> None:
    decoder = Decoder(max_depth=3)
    assert _agrees(decoder, orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": [1]}})) is not None
    assert _agrees(decoder, orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": [[1]]}})) is None
    # brackets inside strings are not levels
    assert _agrees(decoder, orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": "[[[{{{"}})) is not None
