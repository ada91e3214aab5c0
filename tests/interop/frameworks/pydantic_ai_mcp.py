"""pydantic-ai: its MCPToolset (what an Agent's toolsets= takes), called directly, without an Agent."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROGRESS, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, main
from fastmcp.client.transports import StdioTransport
from fastmcp.exceptions import ToolError
from pydantic_ai.mcp import MCPToolset

SEEN: list[float] = []


async def on_progress(value: float, total: float | None, message: str | None) -> None:
    SEEN.append(value)


async def run(target: Target, report: Report) -> None:
    client: Any = target.url
    if target.kind == "stdio":
        client = StdioTransport(target.command, target.args, env=target.env, keep_alive=False)
    toolset = MCPToolset(client, tool_error_behavior="error", progress_handler=on_progress)
    async with toolset:
        report.era = str(await toolset.direct_call_tool("protocol_era", {}))

        async def tools() -> None:
            expect("test_simple_text" in {t.name for t in await toolset.list_tools()}, "not listed")

        async def call() -> None:
            got = await toolset.direct_call_tool("test_simple_text", {})
            expect(got == SIMPLE_TEXT, repr(got))

        async def error() -> None:
            try:
                await toolset.direct_call_tool("test_error_handling", {})
            except ToolError as exc:
                expect(ERROR_TEXT in str(exc), str(exc))
            else:
                raise AssertionError("no ToolError raised")

        async def progress() -> None:
            await toolset.direct_call_tool("test_tool_with_progress", {})
            expect(SEEN == PROGRESS, f"progress seen: {SEEN}")

        async def resources() -> None:
            expect("test://static-text" in {r.uri for r in await toolset.list_resources()}, "not listed")
            read = await toolset.read_resource("test://static-text")
            expect(read == STATIC_TEXT, repr(read))

        async def prompts() -> None:
            expect("test_prompt_with_arguments" in {p.name for p in await toolset.list_prompts()}, "not listed")
            got = await toolset.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            content = got.messages[0].content
            expect(getattr(content, "content", None) == PROMPT_TEXT, repr(got))

        for name, check in (("tools", tools), ("call", call), ("error", error), ("progress", progress), ("resources", resources), ("prompts", prompts)):
            await report.check(name, check)


if __name__ == "__main__":
    main("pydantic-ai-slim", run)
