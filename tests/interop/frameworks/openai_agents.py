"""openai-agents: its MCPServerStdio / MCPServerStreamableHttp (the layer an Agent uses, without an Agent)."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, first_text, is_error, main
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp


async def run(target: Target, report: Report) -> None:
    server: Any
    if target.kind == "stdio":
        server = MCPServerStdio(params={"command": target.command, "args": target.args, "env": target.env})
    else:
        server = MCPServerStreamableHttp(params={"url": target.url})
    async with server:
        report.era = first_text((await server.call_tool("protocol_era", {})).content)

        async def tools() -> None:
            expect("test_simple_text" in {t.name for t in await server.list_tools()}, "not listed")

        async def call() -> None:
            result = await server.call_tool("test_simple_text", {})
            expect(not is_error(result) and first_text(result.content) == SIMPLE_TEXT, repr(result))

        async def error() -> None:
            result = await server.call_tool("test_error_handling", {})
            expect(is_error(result) and ERROR_TEXT in first_text(result.content), repr(result))

        async def resources() -> None:
            listed = await server.list_resources()
            expect("test://static-text" in {str(r.uri) for r in listed.resources}, "not listed")
            read = await server.read_resource("test://static-text")
            expect(first_text(read.contents) == STATIC_TEXT, repr(read))

        async def prompts() -> None:
            expect("test_prompt_with_arguments" in {p.name for p in (await server.list_prompts()).prompts}, "not listed")
            got = await server.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            expect(got.messages[0].content.text == PROMPT_TEXT, repr(got))

        for name, check in (("tools", tools), ("call", call), ("error", error), ("resources", resources), ("prompts", prompts)):
            await report.check(name, check)
        report.not_offered("progress")  # MCPServer.call_tool takes no progress callback


if __name__ == "__main__":
    main("openai-agents", run)
