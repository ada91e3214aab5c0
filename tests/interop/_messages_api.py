"""A scripted Anthropic Messages API on loopback: the model a real host talks to in the tests.

Claude Code (tests/interop/test_claude_code.py) is pointed at it with ``ANTHROPIC_BASE_URL``.
The rules it keeps:

* It serves ``POST /v1/messages`` (any query string, e.g. ``?beta=true``) and answers
  as the real API does: a JSON message, or, when the request says ``"stream": true``,
  the server-sent events ``message_start``, ``content_block_start``/``_delta``/``_stop``
  per block, ``message_delta`` (with the ``stop_reason``) and ``message_stop``.
  ``POST /v1/messages/count_tokens`` gets a count; any other path a 404 in the API's
  error shape. Nothing else is emulated.
* The script is one tool call: a request that offers the tool ``tool`` (Claude Code names
  an MCP tool ``mcp__<server>__<tool>``) and carries no ``tool_result`` yet is answered
  with a ``tool_use`` of it (``arguments`` as its input); a request carrying the
  ``tool_result`` for that call is answered with the final text ``FINAL``, and the result
  is kept (`ScriptedModel.tool_results`). Any other request (a host's side requests,
  such as a title or a quota check) gets a short text and is only recorded.
* Every request body is recorded whole (`ScriptedModel.requests`), for the test to look at.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL = "The tool answered; I am done."


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _stream(message: dict[str, Any]) -> bytes:
    """A whole message as the API streams it."""
    head = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    out = [_sse("message_start", {"type": "message_start", "message": head})]
    for index, block in enumerate(message["content"]):
        start: dict[str, Any]
        delta: dict[str, Any]
        if block["type"] == "text":
            start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        out.append(_sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    out.append(_sse("message_delta", {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 12}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):
            found += [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
    return found


class ScriptedModel:
    """The Messages API of the module docs, on ``127.0.0.1`` (a free port), in a thread."""

    def __init__(self, tool: str, arguments: dict[str, Any] | None = None) -> None:
        self.tool = tool
        self.arguments = arguments or {}
        self.requests: list[dict[str, Any]] = []
        self.tool_results: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.calls = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": 42})
                elif path == "/v1/messages":
                    message = model.answer(body)
                    if body.get("stream"):
                        self._send(200, "text/event-stream", _stream(message))
                    else:
                        self._json(200, message)
                else:
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no {path}"}})

            def do_GET(self) -> None:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no {self.path}"}})

            def _json(self, status: int, data: dict[str, Any]) -> None:
                self._send(status, "application/json", json.dumps(data).encode())

            def _send(self, status: int, kind: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", "req_scripted")
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ScriptedModel":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def offered_tools(self) -> set[str]:
        """Every tool name any request offered the model."""
        with self.lock:
            return {tool.get("name", "") for body in self.requests for tool in body.get("tools", [])}

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.requests.append(body)
            self.calls += 1
            number = self.calls
        offered = {tool.get("name") for tool in body.get("tools", [])}
        results = [r for r in _tool_results(body) if r.get("tool_use_id") == "toolu_scripted_1"]
        message: dict[str, Any] = {
            "id": f"msg_scripted_{number}", "type": "message", "role": "assistant", "model": body.get("model", "claude"),
            "usage": {"input_tokens": 100, "output_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }
        if results:
            with self.lock:
                self.tool_results += results
            return {**message, "content": [{"type": "text", "text": FINAL}], "stop_reason": "end_turn"}
        if self.tool in offered:
            use = {"type": "tool_use", "id": "toolu_scripted_1", "name": self.tool, "input": self.arguments}
            return {**message, "content": [use], "stop_reason": "tool_use"}
        return {**message, "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
