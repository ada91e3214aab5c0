"""`Decoder.decode_common`: `decode`'s verdict from one parse, the common request taken on four checks.

The server's general stage (`server/_intake.decode_message`) decodes every
body the fused stage declines with it, so a declined body is parsed once
(before, `request_dict` parsed it and `decode` parsed it again).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiremcp.jsonrpc import MCP, Decoder, JSONRPCError, Request, _codec

DECODER = Decoder(MCP)

scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1), st.floats(allow_nan=False), st.text(max_size=10))
members = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
    st.one_of(scalars, st.just("2.0"), st.just("tools/call"), st.just({}), st.just([]), st.just({"a": [1, {"b": None}]})),
    max_size=6,
)


def verdict(decode: Any, data: bytes) -> Any:
    """What ``decode`` makes of ``data``: the message, or the error's class, code, message and id."""
    try:
        return decode(data)
    except JSONRPCError as exc:
        return (type(exc), exc.code, exc.message, getattr(exc, "id", None))


@settings(max_examples=300, deadline=None)
@given(obj=st.one_of(members, st.lists(members, max_size=2), scalars))
def test_decode_common_gives_decodes_verdict(obj: Any) -> None:
    data = orjson.dumps(obj)
    assert verdict(DECODER.decode_common, data) == verdict(DECODER.decode, data)


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',  # the common request
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',  # a request without params
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',  # a notification
        b'{"jsonrpc":"2.0","id":1,"result":{}}',  # a response
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{},"x":1}',  # an extra member
        b'{"jsonrpc":"2.0","id":null,"method":"m","params":{}}',  # a bad id: refused
        b'[{"jsonrpc":"2.0","id":1,"method":"m"}]',  # a batch: refused
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[[[[[[[[[]]]]]]]]]]}}',  # too deep
        b"\xef\xbb\xbf{}",  # a byte-order mark
        b"{",  # no JSON
    ],
)
def test_a_declined_body_is_parsed_once(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    parses = []
    loads = orjson.loads

    def counting(raw: Any) -> Any:
        parses.append(raw)
        return loads(raw)

    decoder = Decoder(MCP, max_depth=8)
    expected = verdict(decoder.decode, data)
    monkeypatch.setattr(orjson, "loads", counting)  # what `jsonrpc.Decoder` calls
    monkeypatch.setattr(_codec, "_loads", counting, raising=False)  # and any alias of it bound at import
    assert verdict(decoder.decode_common, data) == expected
    assert len(parses) == 1


def test_the_common_request_is_a_request() -> None:
    message = DECODER.decode_common(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"k":1}}')
    assert type(message) is Request
    assert (message.id, message.method, message.params) == ("a", "m", {"k": 1})
