"""A raw HTTP+SSE (2024-11-05) and Streamable HTTP mock (stdlib http.server), for what the official SDK never does.

Run: ``python sse_mock.py MODE``; prints ``ready PORT`` once listening.

``GET /sse`` modes:

* ``ok``: the stream opens with a comment, CRLF line endings, an unknown
  ``event: ping`` and then ``endpoint`` (a relative path); replies follow as
  ``message`` events, their ``data`` split over two lines and the bytes
  written in small pieces. The POSTs, as a 2024-11-05 server: ``initialize``
  answers ``2024-11-05``; tools/call ``refused`` gets ``400`` with a plain
  body, ``rpc_error`` gets ``400`` with a JSON-RPC error body, ``bye``
  closes the stream after replying; any other tool echoes its arguments;
* ``offsite``: the ``endpoint`` event names another origin;
* ``no_endpoint``: the first event is a ``message``.

``/mcp`` (any mode) is a 2025-11-25 Streamable HTTP endpoint: ``initialize``
answers JSON; tools/call ``missing`` gets ``404`` with a plain body, ``stats``
answers how many GETs without ``MCP-Protocol-Version`` (fallback attempts)
reached ``/mcp``. A GET to ``/mcp`` with the header is refused 405 (no
stream); without it, it is an HTTP+SSE stream (so a fallback would work).
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
STREAMS: dict[str, "queue.Queue[bytes | None]"] = {}
STATS = {"fallback_gets": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def plain(self, status: int, text: str = "", kind: str = "text/plain") -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/mcp":
            if self.headers.get("MCP-Protocol-Version"):
                self.plain(405)
                return
            STATS["fallback_gets"] += 1
        elif self.path != "/sse":
            self.plain(404, "no such path")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        session = str(len(STREAMS) + 1)
        stream: queue.Queue[bytes | None] = queue.Queue()
        STREAMS[session] = stream
        if MODE == "offsite":
            first = b"event: endpoint\r\ndata: http://other.invalid:9/messages?s=1\r\n\r\n"
        elif MODE == "no_endpoint":
            first = b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/hello"}\r\n\r\n'
        else:
            first = b": hello\r\nevent: ping\r\ndata: x\r\n\r\nevent: endpoint\r\ndata: /messages?s=" + session.encode() + b"\r\n\r\n"
        try:
            self.wfile.write(first)
            self.wfile.flush()
            while True:
                item = stream.get()
                if item is None:
                    return
                text = json.dumps(json.loads(item), indent=1).encode()  # a multi-line JSON text
                event = b"event: message\r\n" + b"".join(b"data: " + line + b"\r\n" for line in text.split(b"\n")) + b"\r\n"
                for i in range(0, len(event), 7):  # small pieces: a CRLF may be split
                    self.wfile.write(event[i : i + 7])
                    self.wfile.flush()
        except OSError:
            return
        finally:
            self.close_connection = True

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if self.path == "/mcp":
            self.streamable(id, method, params)
            return
        stream = STREAMS.get(self.path.rpartition("=")[2])
        if not self.path.startswith("/messages?") or stream is None:
            self.plain(404, "no session")
            return
        if id is None or method is None:
            self.plain(202, "Accepted")
            return
        name = params.get("name")
        if method == "tools/call" and name == "refused":
            self.plain(400, "refused, plainly")
            return
        if method == "tools/call" and name == "rpc_error":
            error = {"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "bad arguments"}}
            self.plain(400, json.dumps(error), "application/json")
            return
        self.plain(202, "Accepted")
        if method == "initialize":
            result: Any = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": {"name": "mock", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": json.dumps(params.get("arguments") or {})}]}
        else:
            stream.put(json.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}}).encode())
            return
        stream.put(json.dumps({"jsonrpc": "2.0", "id": id, "result": result}).encode())
        if name == "bye":
            time.sleep(0.2)
            stream.put(None)

    def streamable(self, id: Any, method: Any, params: Any) -> None:
        if id is None:
            self.plain(202)
            return
        if method == "initialize":
            result: Any = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "mock", "version": "0"}}
        elif method == "tools/call" and params.get("name") == "missing":
            self.plain(404, "not here")
            return
        elif method == "tools/call" and params.get("name") == "stats":
            result = {"content": [{"type": "text", "text": str(STATS["fallback_gets"])}]}
        else:
            self.plain(400, "unexpected")
            return
        self.plain(200, json.dumps({"jsonrpc": "2.0", "id": id, "result": result}), "application/json")


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print("ready", server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        sys.stdin.read()  # until the test closes our stdin
    finally:
        for stream in STREAMS.values():
            stream.put(None)
        server.shutdown()


if __name__ == "__main__":
    main()
