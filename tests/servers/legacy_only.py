"""A tiny legacy-only (2025-11-25) MCP server over stdio, raw JSON lines, no wiremcp.

It stands in for the servers written before 2026-07-28: it answers
``initialize`` and refuses everything before it, so ``server/discover``
gets -32601 (mode ``error``, the default) or no reply at all (mode
``silent``). After the handshake it serves tools/list, tools/call (``echo``;
``ask``, which sends the client an ``elicitation/create`` request and
answers with what came back; ``delay`` seconds first, when given), ``ping`` and records what it received, which
the ``received`` tool returns.
"""

import json
import sys
import time
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "error"
received: list[Any] = []
initialized = False
waiting: dict[Any, Any] = {}  # our request id -> the tools/call id to answer
next_id = 0


def send(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def result(id: Any, value: Any) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": value})


def error(id: Any, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


TOOLS = [
    {"name": "echo", "description": "Echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "ask", "inputSchema": {"type": "object"}},
    {"name": "received", "inputSchema": {"type": "object"}},
]

for line in sys.stdin:
    msg = json.loads(line)
    received.append(msg)
    method = msg.get("method")
    id = msg.get("id")
    if method is None:  # a response to our elicitation request
        call_id = waiting.pop(msg.get("id"), None)
        if call_id is not None:
            answer = msg.get("result") or msg.get("error")
            result(call_id, {"content": [{"type": "text", "text": json.dumps(answer)}]})
        continue
    if method == "initialize":
        result(id, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1.0"},
            "instructions": "old school",
        })
        continue
    if method == "notifications/initialized":
        initialized = True
        continue
    if id is None:
        continue
    if not initialized:
        if MODE == "silent":
            continue
        error(id, -32601, "Method not found")
        continue
    if method == "ping":
        result(id, {})
    elif method == "tools/list":
        result(id, {"tools": TOOLS})
    elif method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments") or {}
        if name == "echo":
            result(id, {"content": [{"type": "text", "text": args.get("text", "")}]})
        elif name == "ask":
            time.sleep(float(args.get("delay", 0)))  # the proxy meanwhile sends what else it has
            next_id += 1
            waiting[f"s{next_id}"] = id
            send({"jsonrpc": "2.0", "id": f"s{next_id}", "method": "elicitation/create",
                  "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
        elif name == "received":
            result(id, {"content": [{"type": "text", "text": json.dumps(received)}]})
        else:
            error(id, -32602, f"Unknown tool: {name}")
    else:
        error(id, -32601, "Method not found")
