"""A stdio server that breaks one rule, for the inspector's problems column.

It answers ``server/discover`` and ``tools/list`` correctly (tools
``ping_back`` and ``die``), and ``tools/call ping_back`` with a 2026-07-28
result that has no ``resultType``: the client reads it as complete (mrtr.mdx
allows it to), and the tap checker reports ``missing-result-type``.
``tools/call die`` exits with status 3 without answering. Anything else
gets -32601.
"""

import sys

import orjson

DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "sloppy", "version": "0"}},
}
TOOLS = {
    "resultType": "complete",
    "tools": [
        {"name": "ping_back", "inputSchema": {"type": "object", "properties": {}}},
        {"name": "die", "inputSchema": {"type": "object", "properties": {}}},
    ],
    "ttlMs": 0,
    "cacheScope": "private",
}


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        msg = orjson.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "server/discover":
            reply = {"result": DISCOVER}
        elif method == "tools/list":
            reply = {"result": TOOLS}
        elif method == "tools/call" and msg["params"]["name"] == "die":
            sys.exit(3)
        elif method == "tools/call":
            reply = {"result": {"content": [{"type": "text", "text": "pong"}]}}  # no resultType
        else:
            reply = {"error": {"code": -32601, "message": f"no {method}"}}
        out.write(orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], **reply}) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
