"""The official Python SDK 1.x (``mcp``) client: ClientSession over stdio_client / streamablehttp_client."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROGRESS, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, main
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from pydantic import AnyUrl


async def checks(session: ClientSession, report: Report) -> None:
    await session.initialize()
    era = await session.call_tool("protocol_era", {})
    report.era = era.content[0].text  # type: ignore[union-attr]

    async def tools() -> None:
        expect("test_simple_text" in {t.name for t in (await session.list_tools()).tools}, "test_simple_text not listed")

    async def call() -> None:
        result = await session.call_tool("test_simple_text", {})
        expect(not result.isError and result.content[0].text == SIMPLE_TEXT, repr(result))  # type: ignore[union-attr]

    async def error() -> None:
        result = await session.call_tool("test_error_handling", {})
        expect(result.isError is True and ERROR_TEXT in result.content[0].text, repr(result))  # type: ignore[union-attr]

    async def progress() -> None:
        seen: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(value)

        await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        expect(seen == PROGRESS, f"progress seen: {seen}")

    async def resources() -> None:
        expect("test://static-text" in {str(r.uri) for r in (await session.list_resources()).resources}, "not listed")
        read = await session.read_resource(AnyUrl("test://static-text"))
        expect(read.contents[0].text == STATIC_TEXT, repr(read))  # type: ignore[union-attr]

    async def prompts() -> None:
        expect("test_prompt_with_arguments" in {p.name for p in (await session.list_prompts()).prompts}, "not listed")
        got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        expect(got.messages[0].content.text == PROMPT_TEXT, repr(got))  # type: ignore[union-attr]

    for name, run in (("tools", tools), ("call", call), ("error", error), ("progress", progress), ("resources", resources), ("prompts", prompts)):
        await report.check(name, run)


async def run(target: Target, report: Report) -> None:
    streams: Any
    if target.kind == "stdio":
        streams = stdio_client(StdioServerParameters(command=target.command, args=target.args, env=target.env))
    else:
        streams = streamablehttp_client(target.url)
    async with streams as opened:
        async with ClientSession(opened[0], opened[1]) as session:
            await checks(session, report)


if __name__ == "__main__":
    main("mcp", run)
