"""langchain-mcp-adapters: MultiServerMCPClient's tools, resources and prompts (LangChain objects, no model)."""

from __future__ import annotations

from typing import Any

from _harness import ERROR_TEXT, PROGRESS, PROMPT_TEXT, SIMPLE_TEXT, STATIC_TEXT, Report, Target, expect, main
from langchain_core.tools import ToolException
from langchain_mcp_adapters.callbacks import CallbackContext, Callbacks
from langchain_mcp_adapters.client import MultiServerMCPClient

SEEN: list[float] = []


async def on_progress(value: float, total: float | None, message: str | None, context: CallbackContext) -> None:
    SEEN.append(value)


async def run(target: Target, report: Report) -> None:
    connection: dict[str, Any]
    if target.kind == "stdio":
        connection = {"transport": "stdio", "command": target.command, "args": target.args, "env": target.env}
    else:
        connection = {"transport": "streamable_http", "url": target.url}
    client = MultiServerMCPClient({"s": connection}, callbacks=Callbacks(on_progress=on_progress), handle_tool_errors=False)  # type: ignore[dict-item]
    by_name = {tool.name: tool for tool in await client.get_tools()}
    report.era = _text(await by_name["protocol_era"].ainvoke({}))

    async def tools() -> None:
        expect("test_simple_text" in by_name, "not listed")

    async def call() -> None:
        expect(_text(await by_name["test_simple_text"].ainvoke({})) == SIMPLE_TEXT, "wrong text")

    async def error() -> None:
        try:
            await by_name["test_error_handling"].ainvoke({})
        except ToolException as exc:
            expect(ERROR_TEXT in str(exc), str(exc))
        else:
            raise AssertionError("no ToolException raised")

    async def progress() -> None:
        await by_name["test_tool_with_progress"].ainvoke({})
        expect(SEEN == PROGRESS, f"progress seen: {SEEN}")

    async def resources() -> None:
        blobs = await client.get_resources("s", uris=["test://static-text"])
        expect(blobs[0].as_string() == STATIC_TEXT, repr(blobs))

    async def prompts() -> None:
        messages = await client.get_prompt("s", "test_prompt_with_arguments", arguments={"arg1": "a", "arg2": "b"})
        expect(messages[0].content == PROMPT_TEXT, repr(messages))

    for name, check in (("tools", tools), ("call", call), ("error", error), ("progress", progress), ("resources", resources), ("prompts", prompts)):
        await report.check(name, check)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in content)


if __name__ == "__main__":
    main("langchain-mcp-adapters", run)
