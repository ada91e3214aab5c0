"""Capture the envelopes of one exchange with the wire tour server: ``python examples/tutorials/wire_capture.py SCENARIO``.

docs/wire.md shows what this printed (docs/hooks/generated.py runs it, and
tests/test_docs_generated.py runs it again to check the page), so every
envelope on that page is what wiremcp really sent and received. Each envelope is printed
as indented JSON under an arrow: ``→`` from the client, ``←`` from the server.

Scenarios: ``discover``, ``call``, ``progress``, ``tool-error``, ``mrtr``,
``subscribe``, ``tasks``, ``legacy`` (a client of the initialize era), and ``raw`` (lines
written as they are to the server's stdin: the errors malformed input gets).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import wiremcp

HERE = Path(__file__).resolve().parent
SERVER = ["-m", "wiremcp", "run", str(HERE / "wire_tour.py")]


def show(direction: str, data: bytes) -> None:
    arrow = "→ client" if direction == "send" else "← server"
    print(arrow)
    print(json.dumps(json.loads(data), indent=2))


def client(**options: Any) -> wiremcp.Client:
    # Tasks in memory: `wiremcp run` would otherwise keep them in $XDG_STATE_HOME (docs/tasks.md).
    env = {**os.environ, "WIREMCP_TASK_STORE": "memory"}
    return wiremcp.Client.stdio(sys.executable, SERVER, on_wire=show, name="docs", version="1.0", env=env, **options)


async def discover() -> None:
    async with client() as c:
        await c.discover()


async def call() -> None:
    async with client() as c:
        await c.call_tool("add", {"a": 2, "b": 3})


async def progress() -> None:
    async with client() as c:
        await c.discover()
        print("# (the discovery above; the call follows)")
        await c.call_tool("count", {"to": 2}, on_progress=lambda *a: None, log_level="info")


async def tool_error() -> None:
    async with client() as c:
        await c.discover()
        print("# (the discovery above; the call follows)")
        await c.call_tool("divide", {"a": 1, "b": 0})


async def mrtr() -> None:
    async def answer(params: dict[str, object]) -> dict[str, object]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with client(elicitation=answer) as c:
        await c.discover()
        print("# (the discovery above; the call follows)")
        await c.call_tool("ask_name")


async def subscribe() -> None:
    async with client() as c:
        await c.discover()
        print("# (the discovery above; the subscription follows)")
        async with c.listen(resources=["note://today"]) as sub:
            await c.call_tool("touch", {"text": "buy milk"})
            async for _note in sub:
                break


async def tasks() -> None:
    async with client(tasks=True) as c:
        await c.discover()
        print("# (the discovery above; the task follows)")
        handle = await c.call_tool("slow_square", {"n": 7}, task=True)
        assert isinstance(handle, wiremcp.TaskHandle)  # slow_square is task="always"
        await handle.result()


async def legacy() -> None:
    async with client(era="legacy") as c:
        await c.call_tool("add", {"a": 2, "b": 3})


async def raw() -> None:
    """Each line of stdin goes to the server as it is; each reply is printed."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *SERVER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    for line in sys.stdin.read().splitlines():
        if not line.strip():
            continue
        print("→ client")
        print(line)
        proc.stdin.write(line.encode() + b"\n")
        await proc.stdin.drain()
        if '"id"' not in line and line.startswith('{"jsonrpc":"2.0","method"'):
            print("← server\n(nothing: a notification gets no reply)")
            continue
        reply = await asyncio.wait_for(proc.stdout.readline(), 10)
        print("← server")
        print(json.dumps(json.loads(reply), indent=2))
    proc.stdin.close()
    await proc.wait()


SCENARIOS = {
    "discover": discover, "call": call, "progress": progress, "tool-error": tool_error,
    "mrtr": mrtr, "subscribe": subscribe, "tasks": tasks, "legacy": legacy, "raw": raw,
}

if __name__ == "__main__":
    asyncio.run(SCENARIOS[sys.argv[1]]())
