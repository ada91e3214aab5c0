"""A raw Streamable HTTP mock (stdlib http.server) that serves what wiremcp's server refuses to.

Modes (argv[1]):

* ``modern``: answers 2026-07-28 requests; tools/list includes tools whose
  x-mcp-header annotations are invalid; tools/call answers with the request
  headers it received (so a test can see Mcp-Param-*). Tool ``mismatch``
  answers -32020 the first time, then succeeds.
* ``legacy``: a 2025-11-25 server: anything before ``initialize`` gets
  ``400`` with a plain-text body; ``initialize`` assigns a session id.

Prints ``listening on http://127.0.0.1:PORT/mcp`` to stderr once bound.
"""

import json
import sys
from typing import Any, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1] if len(sys.argv) > 1 else "modern"
STATE = {"mismatch": 0}

TOOLS = [
    {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "query": {"type": "string"}}}},
    {"name": "invalid_number_header", "inputSchema": {"type": "object", "properties": {"v": {"type": "number", "x-mcp-header": "V"}}}},
    {"name": "invalid_duplicate_diff_case", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dup"}}}},
    {"name": "invalid_space_in_name", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}},
    {"name": "mismatch", "inputSchema": {"type": "object"}},
]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, obj: Any = None, text: str | None = None, headers: Iterable[tuple[str, str]] = ()) -> None:
        body = json.dumps(obj).encode() if obj is not None else (text or "").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if obj is not None else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self.reply(200, text="")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        msg = json.loads(body)
        id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if id is None:
            self.reply(202, text="")
            return
        def result(r: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
            self.reply(200, {"jsonrpc": "2.0", "id": id, "result": r}, headers=headers)
        if MODE == "legacy":
            if method == "initialize":
                result({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mock-legacy", "version": "1"}},
                       headers=[("Mcp-Session-Id", "sess-1")])
            elif self.headers.get("Mcp-Session-Id") != "sess-1":
                self.reply(400, text="Bad Request: No valid session ID provided")
            elif method == "tools/list":
                result({"tools": [{"name": "hello", "inputSchema": {"type": "object"}}]})
            elif method == "tools/call":
                result({"content": [{"type": "text", "text": "hello from legacy " + self.headers.get("MCP-Protocol-Version", "")}]})
            else:
                self.reply(200, {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
            return
        if method == "server/discover":
            result({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"})
        elif method == "tools/list":
            result({"resultType": "complete", "tools": TOOLS, "ttlMs": 0, "cacheScope": "public"})
        elif method == "tools/call":
            if params.get("name") == "mismatch" and STATE["mismatch"] == 0:
                STATE["mismatch"] += 1
                self.reply(400, {"jsonrpc": "2.0", "id": id, "error": {"code": -32020, "message": "Header mismatch"}})
                return
            seen = {k: v for k, v in self.headers.items() if k.lower().startswith("mcp")}
            result({"resultType": "complete", "content": [{"type": "text", "text": json.dumps(seen)}]})
        else:
            self.reply(404, {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
server.serve_forever()
