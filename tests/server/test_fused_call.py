"""The fused ``tools/call`` path gives the general path's reply, byte for byte.

`FastPath.check` (a fused call decoded and checked in one msgspec pass,
`server/_fused_call.py`) and `FastPath.answer` (`server/_intake.py`) answer a fused call
in two functions; `Server.handle` through a
`ServerConnection` is the general path every other request takes. For the
same input both must write the same bytes (server/tools.mdx, basic/index.mdx
``_meta``, JSON-RPC 2.0 §5), and the fused path must leave everything it is
not sure of to the general one. The transports' tests run both over real
processes and real HTTP.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wiremcp
from wiremcp import Context, ToolError, ToolResult
from wiremcp.jsonrpc import MCP, Decoder, InvalidParams, JSONRPCError, Request
from wiremcp.server.transport import ServerConnection
from wiremcp.server._mrtr import InputRequired
from wiremcp.server._intake import FastPath
from wiremcp.transports.stdio._lines import LineServer

from conftest import META


def make_server(**options: Any) -> wiremcp.Server:
    server = wiremcp.Server("fused", version="1.0.0", **options)

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(inline=True)
    def mix(a: int, flag: bool, label: str = "none", scale: float | int = 1) -> str:
        """Several scalar arguments, two optional."""
        return f"{a}|{flag}|{label}|{scale!r}"

    @server.tool(inline=True)
    def nothing() -> None:
        """No arguments, empty content."""

    @server.tool(inline=True)
    def data(n: int) -> dict[str, int]:
        """Structured output: checked against its outputSchema."""
        return {"n": n}

    @server.tool(inline=True)
    def fails(kind: str) -> str:
        """Raises what it is asked to."""
        if kind == "tool":
            raise ToolError("told to fail")
        if kind == "protocol":
            raise InvalidParams("Invalid params: a deliberate protocol error")
        if kind == "bug":
            raise ValueError("secret internals")
        if kind == "input":
            raise InputRequired({"q": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}})
        if kind == "interrupt":
            raise KeyboardInterrupt
        return kind

    @server.tool(inline=True)
    def unsendable() -> ToolResult:
        """A result whose _meta is not JSON: the reply is -32603."""
        return ToolResult(["x"], meta={"com.example/bad": 1j})

    return server


def general(server: wiremcp.Server, id_: Any, params: Any) -> tuple[bytes, int | None]:
    """The general path's reply: a fresh connection, `Server.handle`, `reply_ok`/`reply_failed`."""
    written: list[bytes] = []
    out = ServerConnection(server, written.append).request(Request(id_, "tools/call", params))
    assert type(out) is tuple, out  # every tool here is inline: answered at once
    return out


def through_lines(server: wiremcp.Server, line: bytes) -> list[bytes]:
    written: list[bytes] = []
    LineServer(server, written.append).feed(line + b"\n")
    return written


DECODER = Decoder(MCP)


def fused(server: wiremcp.Server, id_: Any, params: Any) -> tuple[bytes, int | None] | None:
    """The fused path's reply to this request's line, or None when it declines."""
    line = orjson.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})
    return FastPath(server, DECODER).serve(line)


def call(name: str, arguments: Any, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "_meta": META if meta is None else meta}


ids = st.one_of(st.integers(min_value=-(2**63), max_value=2**64 - 1), st.text(max_size=20))
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(allow_nan=False, allow_infinity=False), texts)

SERVER = make_server()
UNMASKED = make_server(mask_errors=False)
NO_INFO = make_server(server_info_in_results=False)


@settings(max_examples=300, deadline=None)
@given(id_=ids, text=texts)
def test_echo_is_answered_by_the_fused_path_with_the_general_reply(id_: Any, text: str) -> None:
    params = call("echo", {"text": text})
    fast = fused(SERVER, id_, params)
    line = orjson.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})
    slow = general(SERVER, id_, params)
    assert through_lines(SERVER, line) == [slow[0]]
    if type(id_) is int and id_ >= 2**63:  # beyond int64, where orjson and msgspec part: the general path
        assert fast is None
        return
    assert fast is not None
    assert fast == slow
    assert orjson.loads(fast[0])["result"]["content"] == [{"type": "text", "text": text}]


@settings(max_examples=300, deadline=None)
@given(
    id_=ids,
    a=json_scalars,
    flag=json_scalars,
    label=st.one_of(st.just(None), json_scalars),
    scale=st.one_of(st.just(None), json_scalars),
    extra=st.dictionaries(st.sampled_from(["x", "label", "a"]), json_scalars, max_size=1),
)
def test_any_arguments_get_the_general_reply(id_: Any, a: Any, flag: Any, label: Any, scale: Any, extra: dict[str, Any]) -> None:
    """Right and wrong arguments alike: the fused path answers or declines; the bytes are the same."""
    arguments = {"a": a, "flag": flag}
    if label is not None:
        arguments["label"] = label
    if scale is not None:
        arguments["scale"] = scale
    arguments.update(extra)
    for server in (SERVER, NO_INFO):
        params = call("mix", arguments)
        expected = general(server, id_, params)
        fast = fused(server, id_, params)
        assert fast is None or fast == expected
        line = orjson.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})
        assert through_lines(server, line) == [expected[0]]


def test_scalar_arguments_of_exact_types_take_the_fused_path() -> None:
    assert fused(SERVER, 1, call("mix", {"a": 1, "flag": True})) is not None
    assert fused(SERVER, 1, call("mix", {"a": 1, "flag": False, "label": "x", "scale": 2.5})) is not None
    assert fused(SERVER, 1, call("nothing", {})) is not None
    assert fused(SERVER, 1, call("nothing", None)) is not None
    # JSON's integer 1.0, a bool for an int, a missing or an unknown argument: the validator decides.
    for arguments in ({"a": 1.0, "flag": True}, {"a": True, "flag": True}, {"a": 1}, {"a": 1, "flag": True, "x": 1}):
        assert fused(SERVER, 1, call("mix", arguments)) is None
        assert b'"isError":true' in general(SERVER, 1, call("mix", arguments))[0] or arguments["a"] == 1.0


@pytest.mark.parametrize("server", [SERVER, UNMASKED], ids=["masked", "unmasked"])
@pytest.mark.parametrize("kind", ["ok", "tool", "protocol", "bug", "interrupt"])
def test_failures_get_the_general_reply(server: wiremcp.Server, kind: str) -> None:
    params = call("fails", {"kind": kind})
    fast = fused(server, 7, params)
    assert fast is not None
    assert fast == general(server, 7, params)


def test_input_required_gets_the_general_result() -> None:
    params = call("fails", {"kind": "input"})
    fast = fused(SERVER, 7, params)
    assert fast is not None
    slow = general(SERVER, 7, params)
    a, b = orjson.loads(fast[0]), orjson.loads(slow[0])
    assert a["result"]["resultType"] == "input_required"
    assert type(a["result"].pop("requestState")) is str and type(b["result"].pop("requestState")) is str  # sealed, fresh nonce each
    assert a == b and fast[1] == slow[1] is None


def test_structured_and_unencodable_results() -> None:
    for name, arguments in (("data", {"n": 3}), ("unsendable", {}), ("nothing", {})):
        params = call(name, arguments)
        fast = fused(SERVER, 3, params)
        assert fast is not None and fast == general(SERVER, 3, params)
    assert general(SERVER, 3, call("unsendable", {}))[1] == -32603


@pytest.mark.parametrize(
    "params",
    [
        call("echo", {"text": "x"}, {**META, "progressToken": 1}),  # a member the fused path leaves to handle
        call("echo", {"text": "x"}, {**META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
        call("echo", {"text": "x"}, {k: v for k, v in META.items() if "Capabilities" not in k}),
        call("echo", {"text": "x"}, {**META, "io.modelcontextprotocol/clientCapabilities": []}),
        call("echo", {"text": "x"}, {**META, "io.modelcontextprotocol/clientInfo": "me"}),
        call("echo", {"text": "x"}, {**META, "io.modelcontextprotocol/logLevel": "loud"}),
        {**call("echo", {"text": "x"}), "task": {"ttl": 1000}},  # an extension's member
        {"name": "echo", "arguments": {"text": "x"}},  # no _meta
        call("echo", [1]),
        call("nope", {}),
        call(3, {}),  # type: ignore[arg-type]
        call(["echo"], {}),  # type: ignore[arg-type]
    ],
)
def test_anything_unusual_is_left_to_the_general_path(params: dict[str, Any]) -> None:
    assert fused(SERVER, 5, params) is None
    line = orjson.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params})
    assert through_lines(SERVER, line) == [general(SERVER, 5, params)[0]]


def test_tools_that_need_more_than_a_fused_call_are_not_fused() -> None:
    server = wiremcp.Server("others")

    @server.tool()
    def threaded(text: str) -> str:  # a plain def runs on the worker pool
        return text

    @server.tool()
    async def later(text: str) -> str:
        return text

    @server.tool(inline=True)
    def with_context(text: str, ctx: Context) -> str:
        return text

    @server.tool(inline=True, scopes=["read"])
    def scoped(text: str) -> str:
        return text

    @server.tool(inline=True)
    def choice(level: int = 1, mode: str = "a") -> str:
        return mode

    @server.tool(inline=True, input_schema={"type": "object", "properties": {"s": {"type": "string", "maxLength": 2}}})
    def bounded(s: str = "") -> str:
        return s

    for name in ("threaded", "later", "with_context", "scoped", "bounded"):
        assert server.get_tool(name).fused_arguments is None, name  # type: ignore[union-attr]
        assert fused(server, 1, call(name, {"text": "x"})) is None
    assert server.get_tool("choice").fused_arguments is not None  # type: ignore[union-attr]


def test_middleware_turns_the_fused_path_off() -> None:
    assert fused(make_server(), 1, call("echo", {"text": "x"})) is not None
    server = make_server()  # (a server's middleware is fixed once it serves: `Server.freeze`)
    seen: list[str] = []

    @server.middleware
    async def record(invocation: Any, call_next: Any) -> Any:
        seen.append(invocation.method)
        return await call_next(invocation)

    assert fused(server, 1, call("echo", {"text": "x"})) is None
    written: list[bytes] = []

    async def main() -> None:
        lines = LineServer(server, written.append)
        line = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("echo", {"text": "x"})})
        lines.feed(line + b"\n")
        lines.feed_eof()
        await lines.wait_closed()

    asyncio.run(main())
    assert seen == ["tools/call"] and len(written) == 1 and b'"text":"x"' in written[0]


def test_a_duplicate_id_in_flight_is_refused_on_the_fused_path_too() -> None:
    server = make_server()
    release = asyncio.Event()

    @server.tool()
    async def wait() -> str:
        await release.wait()
        return "done"

    written: list[bytes] = []

    async def main() -> None:
        lines = LineServer(server, written.append)
        held = orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call("wait", {})})
        again = orjson.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": call("echo", {"text": "x"})})
        lines.feed(held + b"\n" + again + b"\n")
        await asyncio.sleep(0)
        assert len(written) == 1 and b"already in flight" in written[0]
        release.set()
        lines.feed_eof()
        await lines.wait_closed()

    asyncio.run(main())
    assert len(written) == 2 and b'"text":"done"' in written[1]


@settings(max_examples=200, deadline=None)
@given(
    obj=st.dictionaries(
        st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "x"]),
        st.one_of(json_scalars, st.just("2.0"), st.just("tools/call"), st.just({}), st.just([]), st.just(call("echo", {"text": "y"}))),
        max_size=6,
    )
)
def test_request_dict_accepts_only_what_decode_makes_a_request_of(obj: dict[str, Any]) -> None:
    decoder = Decoder(MCP)
    data = orjson.dumps(obj)
    found = decoder.request_dict(data)
    if found is None:
        return
    message = decoder.decode(data)
    assert type(message) is Request
    assert (message.id, message.method, message.params) == (found["id"], found["method"], found["params"])


def test_request_dict_keeps_the_depth_and_size_limits() -> None:
    deep = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": {"a": [[[[[[]]]]]]}}
    data = orjson.dumps(deep)
    assert Decoder(MCP, max_depth=4).request_dict(data) is None
    assert Decoder(MCP, max_depth=8).request_dict(data) is not None
    assert Decoder(MCP, max_size=len(data) - 1).request_dict(data) is None
    big = orjson.dumps({**deep, "params": {"a": [[[[[[]]]]]], "pad": "x" * 5000}})
    assert Decoder(MCP, max_depth=4).request_dict(big) is None
    assert Decoder(MCP, max_depth=8).request_dict(big) is not None
    assert Decoder(MCP).request_dict(b"\xef\xbb\xbf" + data) is None
    assert Decoder(MCP).request_dict(b"[" + data + b"]") is None


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{},"x":1}',
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b"{",
    ],
)
def test_the_general_stage_parses_a_declined_body_once(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    from wiremcp.jsonrpc import _codec
    from wiremcp.server._intake import decode_message

    parses: list[bytes] = []
    loads = orjson.loads

    def counting(raw: Any) -> Any:
        parses.append(raw)
        return loads(raw)

    monkeypatch.setattr(orjson, "loads", counting)  # what `jsonrpc.Decoder` calls
    monkeypatch.setattr(_codec, "_loads", counting, raising=False)  # and any alias of it bound at import
    try:
        decode_message(DECODER, data)
    except JSONRPCError:
        pass
    assert len(parses) == 1
