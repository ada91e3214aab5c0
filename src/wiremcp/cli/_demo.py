"""``wiremcp demo``: the echo server over stdio, one envelope at a time.

It starts ``wiremcp run`` on the packaged echo example as a real subprocess
and writes raw JSON-RPC lines to its stdin, printing each request and the
reply read back from its stdout as pretty JSON: discovery, the tool list, a
tool call, a notification (which gets no reply), a request without the
required ``_meta`` and a line that is not JSON at all.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import orjson

from ..protocol import LATEST
from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION

__all__ = ["demo"]

_META = {
    PROTOCOL_VERSION: LATEST,
    CLIENT_CAPABILITIES: {},
    CLIENT_INFO: {"name": "wiremcp-demo", "version": "1"},
}

STEPS: list[tuple[str, Any]] = [
    (
        "Discovery: which versions and capabilities the server has (server/discover.mdx)",
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": _META}},
    ),
    (
        "The tools it offers, with input schemas derived from Python type hints",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": _META}},
    ),
    (
        "Call a tool: name and arguments go in params; the reply echoes the id",
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "Hello, wire!"}, "_meta": _META},
        },
    ),
    (
        "A notification has no id and gets no reply (here: cancel a request that already finished)",
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "demo"}},
    ),
    (
        "A request without params._meta is malformed in 2026-07-28: error -32602",
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ),
    (
        "A line that is not JSON gets a -32700 reply (its id unreadable, so none), never silence",
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", oops}',
    ),
]


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


def _pretty(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode()


async def _run(out: Any, style: _Style) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "wiremcp",
        "run",
        "wiremcp.examples.echo",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    print(style("1", "wiremcp demo: the echo example over stdio, one JSON-RPC envelope per line\n"), file=out)
    failures = 0
    for title, message in STEPS:
        line = message if isinstance(message, bytes) else orjson.dumps(message)
        print(style("1;36", f"# {title}"), file=out)
        shown = line.decode() if isinstance(message, bytes) else _pretty(message)
        print(style("33", "→ client sends") + "\n" + shown, file=out)
        proc.stdin.write(line + b"\n")
        await proc.stdin.drain()
        expects_reply = isinstance(message, bytes) or "id" in message
        if not expects_reply:
            try:
                extra = await asyncio.wait_for(proc.stdout.readline(), timeout=0.3)
            except asyncio.TimeoutError:
                print(style("2", "← (no reply, as the protocol requires)") + "\n", file=out)
                continue
            print(style("31", f"← unexpected reply: {extra!r}") + "\n", file=out)
            failures += 1
            continue
        reply = await asyncio.wait_for(proc.stdout.readline(), timeout=10)
        if not reply:
            print(style("31", "← the server closed its output"), file=out)
            return 1
        decoded = orjson.loads(reply)
        colour = "31" if "error" in decoded else "32"
        print(style(colour, "← server replies") + "\n" + _pretty(decoded) + "\n", file=out)
    proc.stdin.close()
    code = await asyncio.wait_for(proc.wait(), timeout=10)
    print(style("2", f"stdin closed; the server drained and exited with status {code}"), file=out)
    return 1 if failures or code else 0


def demo(color: bool | None = None) -> int:
    out = sys.stdout
    if color is None:
        color = out.isatty() and "NO_COLOR" not in os.environ
    return asyncio.run(_run(out, _Style(color)))
