"""The request engine (wiremcp.server._engine), driven with plain messages and no event loop.

Each request is bytes decoded by `jsonrpc.Decoder` into a `Request`, handed to
the engine; the outcome is a result dict (or the `JSONRPCError` it raises),
made into a reply with `reply_ok`/`reply_failed` as a transport would. No
asyncio: every handler here answers at once (inline tools, synchronous
resources and prompts), which is what lets the engine be tested as a pure
function of the registry and the message. The rules are those in
`_engine`'s docstring; the transports' tests check the same over real
processes and real HTTP.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import wiremcp
from wiremcp import Context
from wiremcp.jsonrpc import Decoder, InvalidParams, JSONRPCError, MethodNotFound, Request
from wiremcp.protocol.meta import parse_request_meta
from wiremcp.server._engine import Engine
from wiremcp.server._mrtr import InputRequired
from wiremcp.server._reply import reply_failed, reply_ok

from conftest import META

DECODER = Decoder()


def decoded(id: Any, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] | None = META) -> Request:
    """The `Request` a transport hands on: bytes through the one decoder."""
    body: dict[str, Any] = dict(params or {})
    if meta is not None:
        body["_meta"] = meta
    message = DECODER.decode(orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": body}))
    assert type(message) is Request
    return message


def answer(engine: Engine, request: Request) -> dict[str, Any]:
    """The reply a transport writes for ``request``: the result, or the error through the one funnel."""
    try:
        out = engine.dispatch(request)
    except JSONRPCError as exc:
        data, _ = reply_failed(request.id, exc)
    else:
        assert type(out) is dict, "answered at once: no event loop needed"
        data, _ = reply_ok(request.id, out)
    reply: dict[str, Any] = orjson.loads(data)
    return reply


def make_server() -> wiremcp.Server:
    server = wiremcp.Server("engine", version="1.2.3", instructions="Be brief.", page_size=2)

    @server.tool(inline=True)
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool(inline=True)
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(inline=True)
    def confirm(ctx: Context) -> str:
        if not ctx.meta.inputs or "ok" not in ctx.meta.inputs:
            raise InputRequired({"ok": {"method": "elicitation/create", "params": {"message": "Sure?"}}}, {"asked": 1})
        return f"confirmed: {ctx.meta.inputs['ok']['action']}"

    return server


@pytest.fixture
def engine() -> Engine:
    return make_server()._engine


def test_discover_states_versions_capabilities_and_instructions(engine):
    reply = answer(engine, decoded(1, "server/discover"))
    result = reply["result"]
    assert reply["id"] == 1 and result["resultType"] == "complete"
    assert "2026-07-28" in result["supportedVersions"]
    assert result["capabilities"] == {"tools": {"listChanged": True}}
    assert result["instructions"] == "Be brief."
    assert result["ttlMs"] == wiremcp.server.DEFAULT_LIST_TTL_MS and result["cacheScope"] == "public"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "engine", "version": "1.2.3"}


def test_tools_list_pages_the_definitions(engine):
    first = answer(engine, decoded(1, "tools/list"))["result"]
    assert [t["name"] for t in first["tools"]] == ["echo", "add"]
    assert first["tools"][0]["description"] == "Say it back."
    second = answer(engine, decoded(2, "tools/list", {"cursor": first["nextCursor"]}))["result"]
    assert [t["name"] for t in second["tools"]] == ["confirm"] and "nextCursor" not in second


def test_a_tool_list_change_is_seen_by_the_next_list(engine):
    answer(engine, decoded(1, "tools/list"))  # the definitions are built and kept
    engine.server.remove_tool("echo")
    listed = answer(engine, decoded(2, "tools/list"))["result"]["tools"]
    assert [t["name"] for t in listed] == ["add", "confirm"]


def test_tools_call_runs_the_tool_and_adds_the_shared_meta(engine):
    reply = answer(engine, decoded(7, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    result = reply["result"]
    assert reply["id"] == 7 and result["content"] == [{"type": "text", "text": "5"}]
    assert result["structuredContent"] == {"result": 5}
    assert result["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "engine", "version": "1.2.3"}}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"arguments": {}}, "tools/call needs 'name'"),
        ({"name": "nope"}, "Unknown tool: nope"),
        ({"name": "echo", "arguments": [1]}, "'arguments' must be an object"),
    ],
)
def test_tools_call_params_are_checked_by_the_handler(engine, params, message):
    error = answer(engine, decoded(3, "tools/call", params))["error"]
    assert error["code"] == InvalidParams.code and message in error["message"]


def test_bad_arguments_are_a_tool_execution_error_not_a_protocol_error(engine):
    result = answer(engine, decoded(3, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}}))["result"]
    assert result["isError"] is True and "Invalid arguments for tool 'add'" in result["content"][0]["text"]


def test_an_unknown_method_is_method_not_found_before_anything_else(engine):
    error = answer(engine, decoded(4, "nope/nope", meta=None))["error"]  # no _meta either: the method decides first
    assert error["code"] == MethodNotFound.code and error["message"] == "Method not found: 'nope/nope'"


def test_a_removed_method_names_the_supported_versions(engine):
    error = answer(engine, decoded(5, "initialize"))["error"]
    assert error["code"] == MethodNotFound.code and error["data"] == {"supported": list(engine.server.supported_versions)}


def test_meta_is_checked_before_the_handlers_own_params(engine):
    missing = answer(engine, decoded(6, "tools/call", {"arguments": []}, meta=None))["error"]
    assert missing["code"] == InvalidParams.code and "_meta" in missing["message"]
    unsupported = {**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}
    assert answer(engine, decoded(7, "tools/list", meta=unsupported))["error"]["code"] == -32022


def test_a_method_is_served_exactly_while_something_of_its_kind_is_registered(engine):
    server = engine.server
    assert "resources/read" not in engine.methods and "prompts/get" not in engine.methods
    assert answer(engine, decoded(1, "resources/list"))["error"]["code"] == MethodNotFound.code

    @server.resource("note://one", inline=True)
    def one() -> str:
        return "first"

    @server.prompt(inline=True)
    def greet(name: str) -> str:
        return f"Hello {name}"

    listed = answer(engine, decoded(2, "resources/list"))["result"]
    assert listed["resources"] == [{"uri": "note://one", "name": "one"}]
    read = answer(engine, decoded(3, "resources/read", {"uri": "note://one"}))["result"]
    assert read["contents"][0]["text"] == "first" and read["cacheScope"] == "public"
    got = answer(engine, decoded(4, "prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}))["result"]
    assert got["messages"][0]["content"] == {"type": "text", "text": "Hello Ada"}
    assert "completion/complete" not in engine.methods  # no completer registered
    server.remove_resource("note://one")
    assert answer(engine, decoded(5, "resources/read", {"uri": "note://one"}))["error"]["code"] == MethodNotFound.code


def test_input_required_becomes_a_sealed_result_and_the_retry_carries_the_answer(engine):
    first = answer(engine, decoded(1, "tools/call", {"name": "confirm"}))["result"]
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["ok"]
    retry = {"name": "confirm", "requestState": first["requestState"], "inputResponses": {"ok": {"action": "accept"}}}
    done = answer(engine, decoded(2, "tools/call", retry))["result"]
    assert done["content"] == [{"type": "text", "text": "confirmed: accept"}]
    tampered = {**retry, "requestState": first["requestState"][:-4] + "AAAA"}
    assert answer(engine, decoded(3, "tools/call", tampered))["error"]["code"] == InvalidParams.code


def test_a_session_request_uses_the_same_table_and_the_legacy_only_methods(engine):
    # A 2025-11-25 session hands on the params and the `RequestMeta` it made from its handshake.
    request = decoded(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}, meta=None)
    meta = parse_request_meta({"_meta": META}, engine.server.supported_versions)
    out = engine.dispatch_in_session(request, request.params, meta, None)
    assert type(out) is dict and out["content"] == [{"type": "text", "text": "hi"}]
    with pytest.raises(MethodNotFound):
        engine.dispatch_in_session(decoded(2, "tasks/list", meta=None), {}, meta, None)  # tasks are off
    engine.server.enable_tasks()
    assert "tasks/list" in engine.legacy_methods and "tasks/list" not in engine.methods
