"""llama-index-tools-mcp: BasicMCPClient, and McpToolSpec's FunctionTools (what an agent gets), without a model."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROGRESS, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, first_text, is_error, main
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec


def _items(listed: Any, field: str) -> list[Any]:
    return list(getattr(listed, field, listed))


async def run(target: Target, report: Report) -> None:
    if target.kind == "stdio":
        client = BasicMCPClient(target.command, args=target.args, env=target.env)
    else:
        client = BasicMCPClient(target.url)
    report.era = first_text((await client.call_tool("protocol_era", {})).content)

    async def tools() -> None:
        names = {tool.metadata.name for tool in await McpToolSpec(client=client).to_tool_list_async()}
        expect("test_simple_text" in names, "not listed")

    async def call() -> None:
        result = await client.call_tool("test_simple_text", {})
        expect(not is_error(result) and first_text(result.content) == SIMPLE_TEXT, repr(result))

    async def error() -> None:
        result = await client.call_tool("test_error_handling", {})
        expect(is_error(result) and ERROR_TEXT in first_text(result.content), repr(result))

    async def progress() -> None:
        seen: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(value)

        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        expect(seen == PROGRESS, f"progress seen: {seen}")

    async def resources() -> None:
        listed = _items(await client.list_resources(), "resources")
        expect("test://static-text" in {str(r.uri) for r in listed}, "not listed")
        read = await client.read_resource("test://static-text")  # type: ignore[arg-type]  # its mcp 2.x takes a str
        expect(first_text(read.contents) == STATIC_TEXT, repr(read))

    async def prompts() -> None:
        listed = _items(await client.list_prompts(), "prompts")
        expect("test_prompt_with_arguments" in {p.name for p in listed}, "not listed")
        messages = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        expect(messages[0].content == PROMPT_TEXT, repr(messages))

    for name, check in (("tools", tools), ("call", call), ("error", error), ("progress", progress), ("resources", resources), ("prompts", prompts)):
        await report.check(name, check)


if __name__ == "__main__":
    main("llama-index-tools-mcp", run)
