"""`HeaderRules.check_call` (the fused tools/call path's header check) against `check_fields`.

streamable-http.mdx, "Server Validation": the fused path may only accept a
request whose routing headers `check_fields` accepts; whatever it declines
goes to the general path, which checks again and gives the exact error. So:
``check_call`` True implies ``check_fields`` passes, and for the headers a
conforming client sends it is True.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import wiremcp
from wiremcp.protocol.errors import HeaderMismatch
from wiremcp.transports.http._headers import HeaderRules
from wiremcp.server.transport import FusedCall

VERSION = "2026-07-28"

server = wiremcp.Server("verdicts")


@server.tool(inline=True)
def echo(text: str) -> str:
    return text


@server.tool(
    inline=True,
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
        },
        "required": ["region"],
    },
)
def regional(region: str, count: int = 0) -> str:
    return region


def passes(rules: HeaderRules, headers: dict[bytes, bytes], params: dict[str, Any]) -> bool:
    try:
        rules.check_fields(headers, "tools/call", params)
    except HeaderMismatch:
        return False
    return True


raw_values = st.sampled_from(
    [
        None,
        b"2026-07-28",
        b" 2026-07-28\t",
        b"2025-11-25",
        b"tools/call",
        b"tools/call ",
        b"Tools/Call",
        b"prompts/get",
        b"echo",
        b"regional",
        b"=?base64?ZWNobw==?=",  # "echo"
        b"=?base64?not base64?=",
        b"ech\xc3\xb6",
        b"eu-west",
        b"=?base64?ZXUtd2VzdA==?=",  # "eu-west"
        b"7",
        b"7.0",
        b"x",
    ]
)
body_values = st.one_of(
    st.none(), st.sampled_from(["2026-07-28", "2025-11-25", "echo", "regional", "eu-west", "ech\u00f6", ""]), st.integers(-1, 8)
)


def ask(rules: HeaderRules, headers: dict[bytes, bytes], params: dict[str, Any]) -> bool:
    """`check_call` as the fused stage asks it: only for a fused call (a `FusedCall`)."""
    meta = params.get("_meta")
    version = meta.get("io.modelcontextprotocol/protocolVersion") if type(meta) is dict else None
    name = params.get("name")
    tool = server.get_tool(name) if type(name) is str else None
    if type(version) is not str or tool is None:
        return False  # not a fused call of a tool: the fused path never asks
    return rules.check_call(headers, FusedCall(1, tool, params.get("arguments") or {}, version, b""))


@settings(max_examples=400)
@given(
    version=raw_values,
    method=raw_values,
    name=raw_values,
    region=raw_values,
    count=raw_values,
    body_version=body_values,
    body_name=body_values,
    arguments=st.dictionaries(st.sampled_from(["region", "count", "text"]), body_values, max_size=3),
    with_meta=st.booleans(),
)
def test_check_call_accepts_only_what_check_fields_accepts(
    version: Any, method: Any, name: Any, region: Any, count: Any, body_version: Any, body_name: Any,
    arguments: dict[str, Any], with_meta: bool,
) -> None:
    headers = {
        key: value
        for key, value in (
            (b"mcp-protocol-version", version),
            (b"mcp-method", method),
            (b"mcp-name", name),
            (b"mcp-param-region", region),
            (b"mcp-param-count", count),
        )
        if value is not None
    }
    params: dict[str, Any] = {"arguments": arguments}
    if body_name is not None:
        params["name"] = body_name
    if with_meta:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": body_version}
    rules = HeaderRules(server)
    for _ in range(2):  # the second time from the remembered verdict
        if ask(rules, headers, params):
            assert passes(HeaderRules(server), headers, params), (headers, params)


def test_check_call_accepts_a_conforming_clients_headers() -> None:
    rules = HeaderRules(server)
    meta = {"io.modelcontextprotocol/protocolVersion": VERSION}
    headers = {b"mcp-protocol-version": b"2026-07-28", b"mcp-method": b"tools/call", b"mcp-name": b"echo"}
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}
    assert ask(rules, headers, params) and ask(rules, headers, params)
    encoded = {**headers, b"mcp-name": b"=?base64?ZWNobw==?="}
    assert ask(rules, encoded, params)
    regional_headers = {**headers, b"mcp-name": b"regional", b"mcp-param-region": b"eu-west"}
    regional_params = {"name": "regional", "arguments": {"region": "eu-west"}, "_meta": meta}
    assert ask(rules, regional_headers, regional_params)
    # and what it must decline: each routing header wrong in turn
    assert not ask(rules, {**headers, b"mcp-method": b"prompts/get"}, params)
    assert not ask(rules, {**headers, b"mcp-protocol-version": b"2025-11-25"}, params)
    assert not ask(rules, {**headers, b"mcp-name": b"other"}, params)
    assert not ask(rules, {**regional_headers, b"mcp-param-region": b"us-east"}, regional_params)
    assert not ask(rules, {k: v for k, v in headers.items() if k != b"mcp-name"}, params)
