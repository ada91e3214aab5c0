"""mcp-use: MCPClient.from_dict and its MCPSession (the layer its agent uses, without an agent)."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, first_text, is_error, main
from mcp_use import MCPClient
from pydantic import AnyUrl


async def run(target: Target, report: Report) -> None:
    server: dict[str, Any]
    if target.kind == "stdio":
        server = {"command": target.command, "args": target.args, "env": target.env}
    else:
        server = {"url": target.url}
    client = MCPClient.from_dict({"mcpServers": {"s": server}})
    session = await client.create_session("s")
    assert session is not None
    try:
        report.era = first_text((await session.call_tool("protocol_era", {})).content)

        async def tools() -> None:
            expect("test_simple_text" in {t.name for t in await session.list_tools()}, "not listed")

        async def call() -> None:
            result = await session.call_tool("test_simple_text", {})
            expect(not is_error(result) and first_text(result.content) == SIMPLE_TEXT, repr(result))

        async def error() -> None:
            result = await session.call_tool("test_error_handling", {})
            expect(is_error(result) and ERROR_TEXT in first_text(result.content), repr(result))

        async def resources() -> None:
            expect("test://static-text" in {str(r.uri) for r in await session.list_resources()}, "not listed")
            read = await session.read_resource(AnyUrl("test://static-text"))
            expect(first_text(read.contents) == STATIC_TEXT, repr(read))

        async def prompts() -> None:
            expect("test_prompt_with_arguments" in {p.name for p in await session.list_prompts()}, "not listed")
            got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            expect(got.messages[0].content.text == PROMPT_TEXT, repr(got))  # type: ignore[union-attr]

        for name, check in (("tools", tools), ("call", call), ("error", error), ("resources", resources), ("prompts", prompts)):
            await report.check(name, check)
        report.not_offered("progress")  # MCPSession.call_tool takes no progress callback
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    main("mcp-use", run)
