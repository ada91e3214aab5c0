"""A raw Streamable HTTP server (stdlib http.server) for the client transport's edges: auth and SSE framing.

2026-07-28 only. Every request needs ``Authorization: Bearer fresh`` and a
``DPoP`` header never seen before; each response carries ``DPoP-Nonce:
n<count>``:

* ``Bearer stale`` (or none): ``401`` with ``WWW-Authenticate: Bearer
  error="invalid_token"`` and a plain-text body;
* a reused ``DPoP`` value: ``401`` with ``WWW-Authenticate: DPoP
  error="invalid_dpop_proof"``;
* ``Bearer forbidden``: ``403`` with ``WWW-Authenticate: Bearer
  error="insufficient_scope", scope="admin"``.

Tools: ``whoami`` answers (JSON) with the Authorization and DPoP headers it
got; ``sse`` answers with an SSE stream written in pieces, with CRLF, CR and
LF line ends split across writes, a comment, an ``event:`` and an ``id:``
line, a progress notification and a reply whose JSON spans two ``data:``
lines; ``big`` answers over SSE with ``size`` bytes of text on one
``data:`` line, written 4 KiB at a time.

Prints ``listening on http://127.0.0.1:PORT/mcp`` to stderr once bound.
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"proofs": set(), "count": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def head(self, status, kind, length=None, headers=()):
        STATE["count"] += 1
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("DPoP-Nonce", f"n{STATE['count']}")
        if length is None:
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()

    def reply(self, status, obj=None, text="", headers=()):
        body = json.dumps(obj).encode() if obj is not None else text.encode()
        self.head(status, "application/json" if obj is not None else "text/plain", len(body), headers)
        self.wfile.write(body)

    def pieces(self, *parts):
        for part in parts:
            self.wfile.write(part)
            self.wfile.flush()
            time.sleep(0.02)  # separate writes, so that the client reads separate chunks

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        auth = self.headers.get("Authorization", "")
        proof = self.headers.get("DPoP", "")
        if auth == "Bearer forbidden":
            self.reply(403, text="forbidden", headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="admin"')])
            return
        if auth != "Bearer fresh":
            self.reply(401, text="unauthorized", headers=[("WWW-Authenticate", 'Bearer error="invalid_token"')])
            return
        if not proof or proof in STATE["proofs"]:
            self.reply(401, text="bad proof", headers=[("WWW-Authenticate", 'DPoP error="invalid_dpop_proof"')])
            return
        STATE["proofs"].add(proof)
        msg = json.loads(body)
        id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if id is None:
            self.reply(202)
            return

        def result(r):
            return {"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", **r}}

        if method == "server/discover":
            self.reply(200, result({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "edges", "version": "1"}, "ttlMs": 0, "cacheScope": "public"}))
        elif method == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("whoami", "sse", "big")]
            self.reply(200, result({"tools": tools, "ttlMs": 0, "cacheScope": "public"}))
        elif method == "tools/call" and params.get("name") == "whoami":
            self.reply(200, result({"content": [{"type": "text", "text": json.dumps([auth, proof])}]}))
        elif method == "tools/call" and params.get("name") == "sse":
            token = json.dumps(params.get("_meta", {}).get("progressToken"))
            progress = ('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,'
                        '"progress":1,"total":2}}' % token).encode()
            reply = json.dumps(result({"content": [{"type": "text", "text": "sse ok"}]})).encode()
            first, second = reply.split(b",", 1)
            self.head(200, "text/event-stream")
            self.pieces(
                b": keep-alive\r\n\r\n",
                b"event: message\r\nid: 7\r\ndata: " + progress + b"\r\n\r",  # CRLF, then a CR ...
                b"\ndata: " + first + b",\r",  # ... whose LF comes in the next write; CR-only ends
                b"data: " + second + b"\r\r",
            )
        elif method == "tools/call" and params.get("name") == "big":
            text = "x" * int(params.get("arguments", {}).get("size", 0))
            data = b"data: " + json.dumps(result({"content": [{"type": "text", "text": text}]})).encode() + b"\n\n"
            self.head(200, "text/event-stream")
            for i in range(0, len(data), 4096):
                self.wfile.write(data[i:i + 4096])
                self.wfile.flush()
        else:
            self.reply(404, {"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on http://127.0.0.1:{server.server_address[1]}/mcp", file=sys.stderr, flush=True)
server.serve_forever()
