"""`FastPath.check` (the fused stage, `server/_intake.py`) accepts only what the general path makes the same request of.

The fused call is decoded by msgspec (`server/_fused_call.py`), the general
path by orjson (`jsonrpc.Decoder.decode`). For any bytes, when `FastPath.check`
accepts them, `Decoder.decode` must give a `Request` with the same id, of the
same type, and the same ``params``, value for value and type for type; and
the size and depth limits must hold (JSON-RPC 2.0 §4, §5.1; basic/index.mdx
``_meta``). Byte-level cases cover where two JSON parsers can part: a BOM,
repeated members, integers beyond 64 bits, escapes, surrogates, NaN,
trailing data.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wiremcp
from wiremcp.jsonrpc import MCP, Decoder, JSONRPCError, Request
from wiremcp.server._fused_call import MAX_FUSED_DEPTH
from wiremcp.server._intake import FastPath

from conftest import META

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"


def make_server() -> wiremcp.Server:
    server = wiremcp.Server("plain", version="1.0.0")

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(inline=True)
    def mix(a: int, flag: bool, label: str = "none", scale: float | int = 1) -> str:
        """Several scalar arguments, two optional."""
        return f"{a}|{flag}|{label}|{scale!r}"

    return server


SERVER = make_server()
DECODER = Decoder(MCP)


def same(a: Any, b: Any) -> bool:
    """Equal, and of the same type at every level (1 is not 1.0, True is not 1)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b) or (a != a and b != b)


def check(data: bytes, decoder: Decoder = DECODER, server: wiremcp.Server = SERVER) -> bool:
    """Whether `FastPath.check` accepted ``data``; when it did, the general decoder agrees on everything."""
    found = FastPath(server, decoder).check(data)
    if found is None:
        return False
    id_, tool, arguments, version, raw = found.id, found.tool, found.arguments, found.version, found.data
    assert raw is data
    message = decoder.decode(data)
    assert type(message) is Request
    assert same(message.id, id_) and message.method == "tools/call"
    params = message.params
    assert type(params) is dict and params["name"] == tool.name
    assert same(params.get("arguments") or {}, arguments)
    assert params["_meta"][VERSION] == version
    assert set(params) <= {"name", "arguments", "_meta"}
    return True


def line(id_: Any = 1, name: Any = "echo", arguments: Any = None, meta: Any = None, **extra: Any) -> bytes:
    params: dict[str, Any] = {"name": name, "_meta": META if meta is None else meta}
    params["arguments"] = {"text": "hi"} if arguments is None else arguments
    return orjson.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params, **extra})


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70).filter(lambda n: -(2**63) <= n < 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)), max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(
    id_=st.one_of(values, st.just(None)),
    name=st.one_of(st.sampled_from(["echo", "mix", "nope"]), values),
    arguments=st.one_of(
        st.none(),
        st.dictionaries(st.sampled_from(["text", "a", "flag", "label", "scale", "x"]), values, max_size=4),
        values,
    ),
    meta=st.one_of(
        st.just(META),
        st.dictionaries(st.sampled_from([VERSION, CAPS, INFO, "progressToken"]), st.one_of(values, st.just("2026-07-28"), st.just({})), max_size=4),
    ),
    extra=st.dictionaries(st.sampled_from(["x", "result", "error"]), values, max_size=1),
)
def test_what_fused_call_accepts_the_general_decoder_reads_the_same(
    id_: Any, name: Any, arguments: Any, meta: Any, extra: dict[str, Any]
) -> None:
    try:
        data = line(id_, name, arguments, meta, **extra)
    except TypeError:  # orjson: an integer beyond 64 bits
        return
    check(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40), st.integers(min_value=0, max_value=400))
def test_bytes_spliced_into_a_fused_call_never_make_it_accepted_wrongly(junk: bytes, at: int) -> None:
    data = line(7, "mix", {"a": 3, "flag": True, "scale": 2.5})
    at = min(at, len(data))
    for variant in (data[:at] + junk + data[at:], data[:at] + junk, junk + data[at:]):
        check(variant)


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + line(),  # a byte-order mark
        line() + b"x",  # trailing data
        line()[:-1],  # truncated
        line(arguments={"text": float("nan")}).replace(b"null", b"NaN"),
        line(arguments={"text": "x"}).replace(b'"x"', b'"\xed\xa0\x80"'),  # a surrogate, UTF-8 encoded
        line(arguments={"text": "x"}).replace(b'"x"', b'"\\ud800"'),  # a lone surrogate, escaped
        line(arguments={"text": "x"}).replace(b'"x"', b'"\xff"'),  # invalid UTF-8
        line(arguments={"text": "x"}).replace(b'"x"', b'"a\x01"'),  # a control character
        line(arguments={"a": 1, "flag": True}, name="mix").replace(b'"a":1', b'"a":99999999999999999999999'),
        line(arguments={"a": 1, "flag": True}, name="mix").replace(b'"a":1', b'"a":18446744073709551615'),
        line(arguments={"a": 1, "flag": True}, name="mix").replace(b'"a":1', b'"a":1.0'),
        line(arguments={"a": 1, "flag": True}, name="mix").replace(b'"a":1', b'"a":true'),
        line(id_=2**63),  # beyond int64: orjson and msgspec part there
        line(id_=None),
        line(id_=1.5),
        line(id_=True),
        line(meta={**META, INFO: None}),
        line(meta={**META, CAPS: []}),
        line(meta={VERSION: "2026-07-28", INFO: {}}),
        line(meta={**META, VERSION: "2025-11-25"}),
        line(arguments={"text": {"nested": 1}}),
        line(arguments={"text": None}),
        line(arguments=[1]),
        line(name=1),
        line(task={"ttl": 1}),
    ],
)
def test_where_two_json_parsers_can_part_the_general_path_decides(data: bytes) -> None:
    assert not check(data)
    try:
        message = DECODER.decode(data)
    except JSONRPCError:
        return
    assert type(message) is Request  # decided, with its exact error if any, by `handle`


def test_repeated_members_keep_the_last_as_orjson_does() -> None:
    data = line().replace(b'"text":"hi"', b'"text":"first","text":"hi"')
    assert check(data)
    data = line().replace(b'"id":1', b'"id":"one","id":1')
    found = FastPath(SERVER, DECODER).check(data)
    assert found is not None and found.id == 1


def test_whitespace_key_order_and_escapes_are_json() -> None:
    assert check(line().replace(b'"tools/call"', b'"tools\\/call"'))  # the same method, escaped
    assert check(line().replace(b'"text":"hi"', b'"\\u0074ext":"h\\u0069"'))
    data = b' {"params": {"_meta": ' + orjson.dumps(META) + b', "arguments": {"text": "hi"}, "name": "echo"}, "method": "tools/call", "id": "x", "jsonrpc": "2.0"} \n'
    assert check(data)
    assert check(line(arguments={}, name="echo")) is False  # text is required: the validator decides
    assert check(line(arguments={"a": 1, "flag": False}, name="mix"))
    data = line(name="mix", arguments={"a": 1, "flag": False}).replace(b'"arguments":{"a":1,"flag":false}', b'"arguments":null')
    assert not check(data)  # required arguments missing


def test_the_size_and_depth_limits_hold() -> None:
    data = line()
    assert check(data, Decoder(MCP, max_size=len(data)))
    assert not check(data, Decoder(MCP, max_size=len(data) - 1))
    # What a client's capabilities hold (extensions nest three levels below them): plain.
    extensions = {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}
    usual = line(meta={**META, CAPS: {"roots": {"listChanged": True}, "sampling": {}, **extensions}})
    assert check(usual)
    # A fused call nests at most MAX_FUSED_DEPTH levels, so the default limit (128) always holds;
    # under a lower limit the general path decides, and deeper capabilities are no fused call.
    assert MAX_FUSED_DEPTH == 7
    assert not check(usual, Decoder(MCP, max_depth=MAX_FUSED_DEPTH - 1))
    assert check(usual, Decoder(MCP, max_depth=MAX_FUSED_DEPTH))
    deep: Any = {}
    for _ in range(5):
        deep = {"x": deep}  # six levels of its own
    assert not check(line(meta={**META, CAPS: {"experimental": deep}}))
    assert not check(line(meta={**META, INFO: {"name": "n", "version": "1", "x": deep}}))
    assert check(line(meta={**META, CAPS: {"experimental": {"a": {"b": [1]}}}}))  # three levels below
    assert not check(line(meta={**META, CAPS: {"experimental": {"a": {"b": [[1]]}}}}))  # four
    nested = line(meta={**META, CAPS: {"experimental": deep}})
    with pytest.raises(JSONRPCError):
        Decoder(MCP, max_depth=9).decode(nested)  # ten levels: the general path's limit, with its error
    assert type(Decoder(MCP, max_depth=10).decode(nested)) is Request


def test_a_server_with_middleware_or_an_upstream_never_takes_it() -> None:
    assert check(line(), server=make_server())
    server = make_server()  # (a server's middleware is fixed once it serves: `Server.freeze`)

    @server.middleware
    async def passthrough(invocation: Any, call_next: Any) -> Any:
        return await call_next(invocation)

    assert not check(line(), server=server)
