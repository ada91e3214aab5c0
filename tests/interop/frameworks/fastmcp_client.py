"""fastmcp 4.x's ``Client`` (its own client layer, on the official SDK's session)."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROGRESS, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, main
from fastmcp import Client
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
from fastmcp.exceptions import ToolError


async def run(target: Target, report: Report) -> None:
    transport: Any
    if target.kind == "stdio":
        transport = StdioTransport(target.command, target.args, env=target.env, keep_alive=False)
    else:
        transport = StreamableHttpTransport(target.url)
    async with Client(transport) as client:
        report.era = (await client.call_tool("protocol_era", {})).content[0].text  # type: ignore[union-attr]

        async def tools() -> None:
            expect("test_simple_text" in {t.name for t in await client.list_tools()}, "not listed")

        async def call() -> None:
            result = await client.call_tool("test_simple_text", {})
            expect(result.content[0].text == SIMPLE_TEXT, repr(result))  # type: ignore[union-attr]

        async def error() -> None:
            result = await client.call_tool("test_error_handling", {}, raise_on_error=False)
            expect(result.is_error and ERROR_TEXT in result.content[0].text, repr(result))  # type: ignore[union-attr]
            try:
                await client.call_tool("test_error_handling", {})
            except ToolError as exc:
                expect(ERROR_TEXT in str(exc), str(exc))
            else:
                raise AssertionError("no ToolError raised")

        async def progress() -> None:
            seen: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                seen.append(value)

            await client.call_tool("test_tool_with_progress", {}, progress_handler=on_progress)
            expect(seen == PROGRESS, f"progress seen: {seen}")

        async def resources() -> None:
            expect("test://static-text" in {str(r.uri) for r in await client.list_resources()}, "not listed")
            read = await client.read_resource("test://static-text")
            expect(read[0].text == STATIC_TEXT, repr(read))  # type: ignore[union-attr]

        async def prompts() -> None:
            expect("test_prompt_with_arguments" in {p.name for p in await client.list_prompts()}, "not listed")
            got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            expect(got.messages[0].content.text == PROMPT_TEXT, repr(got))  # type: ignore[union-attr]

        for name, check in (("tools", tools), ("call", call), ("error", error), ("progress", progress), ("resources", resources), ("prompts", prompts)):
            await report.check(name, check)


if __name__ == "__main__":
    main("fastmcp", run)
