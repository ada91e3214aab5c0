"""Fuzz `wiremcp.jsonrpc.Decoder` under both profiles.

Invariants (jsonrpc/_codec.py, the decoding table): ``decode`` returns a
message (or, in JSON-RPC 2.0, a batch) or raises exactly `ParseError` (-32700)
or `InvalidRequest` (-32600, `InvalidResponse` included), whatever the bytes;
the id an error carries is one the profile accepts (or ``None``); the error
reply built from it encodes to one line the decoder reads back as an error
response; a decoded message encodes and decodes back to itself.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from wiremcp.jsonrpc import (
    JSONRPC_2_0,
    MCP,
    Batch,
    Decoder,
    ErrorResponse,
    InvalidRequest,
    ParseError,
    encode,
    encode_error,
)

from ._budget import fuzz_settings, run_for
from .strategies import message_lines, message_objects

DECODERS = [Decoder(MCP), Decoder(JSONRPC_2_0), Decoder(MCP, max_size=64, max_depth=3)]

inputs = st.one_of(
    st.binary(max_size=200),
    message_lines(),
    st.lists(message_objects(), max_size=3).map(orjson.dumps),
    st.integers(1, 140).map(lambda n: b"[" * n + b"]" * n),
    st.integers(1, 140).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
)


def check_decode(decoder: Decoder, data: bytes | str) -> None:
    try:
        msg = decoder.decode(data)
    except (ParseError, InvalidRequest) as exc:
        assert type(exc).__name__ in ("ParseError", "InvalidRequest", "InvalidResponse", "InvalidNotification")
        assert exc.code in (-32700, -32600)
        reply_id: Any = getattr(exc, "id", None)
        assert reply_id is None or decoder.profile.valid_id(reply_id), reply_id
        line = encode_error(reply_id, exc.to_error(), profile=decoder.profile)
        assert b"\n" not in line
        back = Decoder(decoder.profile).decode(line)
        assert type(back) is ErrorResponse and back.code == exc.code
        return
    if type(msg) is Batch:
        assert decoder.profile.batches
        return
    again = Decoder(decoder.profile).decode(encode(msg, profile=decoder.profile))
    assert again == msg


@fuzz_settings()
@given(data=inputs)
def fuzz_decoder(data: bytes) -> None:
    for decoder in DECODERS:
        check_decode(decoder, data)
    check_decode(DECODERS[0], data.decode("utf-8", "replace"))  # the str path


def test_decoder() -> None:
    run_for(fuzz_decoder)
