"""A client and an agent loop (docs/tutorials/client-agent.md): ``python examples/tutorials/agent.py "QUESTION"``.

The client starts first_server.py over stdio, lists its tools, and runs the
loop every agent runs: the model sees the conversation and the tools, asks
for tool calls, the client makes them and adds the results, until the model
answers. `plan` stands in for the model: replace it with a call to your LLM's
API (the tool definitions go in as they are: name, description, inputSchema).
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

import wiremcp

SERVER = Path(__file__).with_name("first_server.py")


def plan(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The next step: ``{"call": name, "arguments": {...}}`` or ``{"answer": text}``.

    A stand-in for the model, by rules: it converts each "N km" and "N F" of
    the question with the tool offered for it, then answers with the results.
    """
    names = {tool["name"] for tool in tools}
    question = messages[0]["content"]
    done = [m for m in messages if m["role"] == "tool"]
    wanted: list[tuple[str, dict[str, Any]]] = []
    for number, unit in re.findall(r"(-?\d+(?:\.\d+)?)\s*(km|F)\b", question):
        if unit == "km" and "km_to_miles" in names:
            wanted.append(("km_to_miles", {"km": float(number)}))
        if unit == "F" and "temperature" in names:
            wanted.append(("temperature", {"value": float(number), "to": "C"}))
    if len(done) < len(wanted):
        name, arguments = wanted[len(done)]
        return {"call": name, "arguments": arguments}
    return {"answer": "; ".join(m["content"] for m in done) or "I have no tool for that."}


async def ask(question: str) -> str:
    async with wiremcp.Client.stdio(sys.executable, ["-m", "wiremcp", "run", str(SERVER)]) as client:
        tools = await client.list_tools()
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        for _ in range(10):  # a bound on the loop: a model may never stop asking
            step = plan(messages, tools)
            if "answer" in step:
                return str(step["answer"])
            result = await client.call_tool(step["call"], step["arguments"])
            # A tool error (is_error) goes back to the model too: it may fix its arguments.
            messages.append({"role": "tool", "name": step["call"], "content": result.text, "is_error": result.is_error})
        return "Gave up after 10 steps."


if __name__ == "__main__":
    print(asyncio.run(ask(" ".join(sys.argv[1:]) or "How far is 42 km, and how warm is 98.6 F?")))
