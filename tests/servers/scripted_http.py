"""A scripted Streamable HTTP server (stdlib http.server) for the client's fault tests.

Modes (argv[1]):

* ``slow-discover``: ``server/discover`` is answered only after 30 s (a slow
  modern server); anything else is served as a 2025-11-25 server would
  (``initialize`` assigns a session), so a client that mistook the slow probe
  for a legacy server would get through, and its test would notice.
* ``legacy-sse-drop``: a 2025-11-25 server whose ``tools/call`` replies with
  a resumable SSE stream (streamable-http.mdx 2025-11-25, Resumability and
  Redelivery): the first event (``id: ev-1``, ``retry: 50``) is a progress
  notification, then the server closes the stream before the response (the
  body is delimited by the close). A ``GET`` with ``Last-Event-ID: ev-1``
  replays what followed: the response (``id: ev-2``). The tool ``resumes``
  answers with every ``Last-Event-ID`` received.
* ``legacy-sse-reset``: the same, but the stream is chunked and the
  connection is cut mid-body (no last chunk): a dropped connection, which
  the client sees as an error, not as the end of the stream.

Prints ``listening on http://127.0.0.1:PORT/mcp`` to stderr once bound.
"""

import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

MODE = sys.argv[1]
SESSION = "sess-scripted"
last_event_ids: list[str] = []
pending: dict[str, dict[str, Any]] = {}  # event id -> the message to replay after it
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def reply(self, status: int, obj: Any = None, headers: Iterable[tuple[str, str]] = ()) -> None:
        body = json.dumps(obj).encode() if obj is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if obj is not None else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_DELETE(self) -> None:
        self.reply(200)

    def do_GET(self) -> None:
        last = self.headers.get("Last-Event-ID")
        with lock:
            replay = pending.pop(last, None) if last is not None else None
            if last is not None:
                last_event_ids.append(last)
        if not MODE.startswith("legacy-sse") or replay is None:
            self.reply(405)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"id: ev-2\ndata: " + json.dumps(replay).encode() + b"\n\n")
        self.wfile.flush()
        self.close_connection = True

    def do_POST(self) -> None:
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if id is None:
            self.reply(202)
            return

        def result(r: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
            self.reply(200, {"jsonrpc": "2.0", "id": id, "result": r}, headers)

        if method == "server/discover":
            if MODE == "slow-discover":
                time.sleep(30)
                result({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}})
            else:
                self.reply(400)
            return
        if method == "initialize":
            result({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "scripted-http", "version": "1"}},
                   [("Mcp-Session-Id", SESSION)])
            return
        if self.headers.get("Mcp-Session-Id") != SESSION:
            self.reply(400)
            return
        name = params.get("name")
        if method == "tools/call" and name == "resumes":
            with lock:
                seen = list(last_event_ids)
            result({"content": [{"type": "text", "text": json.dumps(seen)}]})
        elif method == "tools/call" and MODE.startswith("legacy-sse"):
            token = (params.get("_meta") or {}).get("progressToken")
            response = {"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "resumed " + str(name)}]}}
            with lock:
                pending["ev-1"] = response
            first = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}
            event = b"retry: 50\nid: ev-1\ndata: " + json.dumps(first).encode() + b"\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            if MODE == "legacy-sse-reset":
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)  # cut: no last chunk
            else:
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(event)
                self.wfile.flush()
            self.close_connection = True  # the stream ends before the response
        elif method == "tools/list":
            result({"tools": [{"name": "work", "inputSchema": {"type": "object"}}, {"name": "resumes", "inputSchema": {"type": "object"}}]})
        else:
            self.reply(200, {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
server.serve_forever()
