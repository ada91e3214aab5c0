"""An MCP server on stdio, written without any SDK, whose read-only tool returns a result breaking its own outputSchema.

It speaks 2025-11-25 (the modern probe gets -32601). Its tools:

``status``      ``readOnlyHint: true``, no arguments; its structuredContent
                ``{"state": 3}`` breaks ``{"state": string}`` (``--fixed``: ``"ok"``)
``lookup``      ``readOnlyHint: true``, requires ``key``; returns no
                structuredContent though it declares an outputSchema (``--fixed``: it does)
``wipe``        not read-only, and breaks its outputSchema: ``wiremcp check``
                must never call it unless told to (``--call wipe``)

Every call is also written to stderr as ``called NAME``.
Run by tests/check/test_check_results.py.
"""

from __future__ import annotations

import json
import sys
from typing import Any

FIXED = "--fixed" in sys.argv[1:]
NONE: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "status", "description": "The service's state.", "inputSchema": NONE,
        "outputSchema": {"type": "object", "properties": {"state": {"type": "string"}}, "required": ["state"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "lookup", "description": "Look a key up.",
        "inputSchema": {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
        "outputSchema": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "wipe", "description": "Delete every record.", "inputSchema": NONE,
        "outputSchema": {"type": "object", "properties": {"deleted": {"type": "integer"}}, "required": ["deleted"]},
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
    },
]


def structured(value: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    print(f"called {name}", file=sys.stderr, flush=True)
    if name == "status":
        return structured({"state": "ok" if FIXED else 3})
    if name == "lookup":
        value = {"value": str(arguments.get("key", ""))}
        return structured(value) if FIXED else {"content": [{"type": "text", "text": json.dumps(value)}]}
    return structured({"deleted": "everything"})


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, id = message.get("method"), message.get("id")
    if id is None:
        return None  # a notification
    if method == "initialize":
        result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "results", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and message["params"]["name"] in {t["name"] for t in TOOLS}:
        result = call(message["params"]["name"], message["params"].get("arguments") or {})
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": id, "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
