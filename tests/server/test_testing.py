"""wiremcp.testing: in-memory calls in both eras, and the envelopes exchanged."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Annotated, Any

import pytest

from wiremcp import Context, Elicit, Server
from wiremcp.testing import ERAS, Wire, call_tool, connect, strip_meta
from wiremcp.testing.plugin import mcp_era  # noqa: F401  # the plugin's fixture, used as a plugin would be

server = Server("testing-demo", version="1.0.0")


@server.tool
def echo(text: str) -> str:
    return text


@dataclasses.dataclass
class Person:
    name: str
    age: int


@server.tool
def greet(person: Annotated[Person, Elicit("Who are you?")]) -> str:
    return f"Hello, {person.name} ({person.age})!"


@server.tool
async def ask(ctx: Context) -> str:
    answer = await ctx.elicit("Name?", str)
    return answer.value if answer.accepted and answer.value is not None else answer.action


async def _fill(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "Who are you?"
    return {"action": "accept", "content": {"name": "Ada", "age": 36}}


def test_the_plugin_runs_a_test_once_per_era(mcp_era: Any) -> None:
    assert mcp_era in ERAS

    async def main() -> None:
        async with connect(server, era=mcp_era) as mcp:
            assert (await mcp.call_tool("echo", {"text": "hi"})).text == "hi"
            assert await mcp.tool_text("echo", {"text": "again"}) == "again"
            first = mcp.wire.sent[0]
            if mcp_era == "modern":  # no handshake: the version travels in every request's _meta
                assert first["method"] == "tools/call"
                assert first["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            else:
                assert first["method"] == "initialize" and first["params"]["protocolVersion"] == "2025-11-25"

    asyncio.run(main())


def test_modern_era_envelopes_show_the_mrtr_rounds() -> None:
    async def main() -> Wire:
        async with connect(server, era="modern", elicitation=_fill) as mcp:
            assert (await mcp.call_tool("greet")).text == "Hello, Ada (36)!"
            return mcp.wire

    wire = asyncio.run(main())
    (first, first_reply), (retry, done) = wire.exchanges("tools/call")
    assert first_reply["result"]["resultType"] == "input_required"
    assert strip_meta(first_reply["result"]["inputRequests"]) == {
        "person": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Who are you?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name", "age"],
                },
            },
        }
    }
    assert retry["params"]["inputResponses"] == {"person": {"action": "accept", "content": {"name": "Ada", "age": 36}}}
    assert retry["id"] != first["id"]
    assert strip_meta(done) == {
        "jsonrpc": "2.0",
        "id": retry["id"],
        "result": {"resultType": "complete", "content": [{"type": "text", "text": "Hello, Ada (36)!"}]},
    }
    assert not wire.requests(direction="recv")  # the modern server never sends requests
    assert "→" in wire.transcript() and "←" in wire.transcript()


def test_legacy_era_envelopes_show_the_server_request() -> None:
    async def main() -> Wire:
        async with connect(server, era="legacy", elicitation=_fill) as mcp:
            assert (await mcp.call_tool("greet")).text == "Hello, Ada (36)!"
            return mcp.wire

    wire = asyncio.run(main())
    (asked,) = wire.requests("elicitation/create", direction="recv")
    answer = wire.reply_to(asked)
    assert answer["result"] == {"action": "accept", "content": {"name": "Ada", "age": 36}}
    assert len(wire.requests("tools/call")) == 1  # one request, the body ran once


@pytest.mark.parametrize("era", ERAS)
def test_call_tool_from_sync_code(era: Any) -> None:
    result, wire = call_tool(server, "ask", era=era, elicitation=lambda params: {"action": "decline"})
    assert result.text == "decline"
    assert len(wire) >= 4


def test_connect_refuses_an_unknown_era() -> None:
    async def main() -> None:
        async with connect(server, era="future"):  # type: ignore[arg-type]
            pass

    with pytest.raises(ValueError, match="era must be"):
        asyncio.run(main())
