"""A modern (2026-07-28) stdio server in raw JSON lines that misbehaves on request.

Each tool exercises one client rule the well-behaved wiremcp server never
triggers: an unknown resultType, an InputRequiredResult with only a
requestState, one that never completes, a result without resultType, a log
message that names no request. It also serves resources, prompts and
completion with fixed answers, and records every message it received
(tool ``received``).
"""

import json
import sys
from typing import Any

received: list[Any] = []
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}}
STATE = "opaque \u00e9=+/ \"quoted\" state"


def send(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def result(id: Any, value: dict[str, Any]) -> None:
    value.setdefault("_meta", SERVER_INFO)
    send({"jsonrpc": "2.0", "id": id, "result": value})


def error(id: Any, code: int, message: str, data: Any = None) -> None:
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": id, "error": err})


def text(t: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": t}]}


for line in sys.stdin:
    msg = json.loads(line)
    received.append(msg)
    id = msg.get("id")
    method = msg.get("method")
    params = msg.get("params") or {}
    meta = params.get("_meta") or {}
    if id is None:
        continue
    if meta.get("io.modelcontextprotocol/protocolVersion") != "2026-07-28":
        error(id, -32022, "Unsupported protocol version", {"supported": ["2026-07-28"], "requested": meta.get("io.modelcontextprotocol/protocolVersion")})
        continue
    if method == "server/discover":
        result(id, {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}, "resources": {}, "prompts": {}}, "ttlMs": 0, "cacheScope": "public"})
    elif method == "tools/list":
        result(id, {"resultType": "complete", "tools": [{"name": "weird", "inputSchema": {"type": "object"}}], "ttlMs": 0, "cacheScope": "public"})
    elif method == "resources/list":
        cursor = params.get("cursor")
        if cursor is None:
            result(id, {"resultType": "complete", "resources": [{"uri": "mem://a", "name": "a"}], "nextCursor": "page2", "ttlMs": 60000, "cacheScope": "private"})
        else:
            result(id, {"resultType": "complete", "resources": [{"uri": "mem://b", "name": "b"}], "ttlMs": 60000, "cacheScope": "private"})
    elif method == "resources/templates/list":
        result(id, {"resultType": "complete", "resourceTemplates": [{"uriTemplate": "mem://{x}", "name": "x"}], "ttlMs": 0, "cacheScope": "public"})
    elif method == "resources/read":
        uri = params["uri"]
        if uri == "mem://ask" and "inputResponses" not in params:
            result(id, {"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list", "params": {}}}})
        elif uri == "mem://ask":
            roots = params["inputResponses"]["r"]["roots"]
            result(id, {"resultType": "complete", "contents": [{"uri": uri, "text": json.dumps(roots)}], "ttlMs": 60000, "cacheScope": "public"})
        else:
            result(id, {"resultType": "complete", "contents": [{"uri": uri, "mimeType": "text/plain", "text": "content of " + uri}], "ttlMs": 60000, "cacheScope": "public"})
    elif method == "prompts/list":
        result(id, {"resultType": "complete", "prompts": [{"name": "greet", "arguments": [{"name": "who"}]}], "ttlMs": 0, "cacheScope": "public"})
    elif method == "prompts/get":
        who = (params.get("arguments") or {}).get("who", "?")
        result(id, {"resultType": "complete", "description": "greeting", "messages": [{"role": "user", "content": {"type": "text", "text": "hello " + who}}]})
    elif method == "completion/complete":
        value = params["argument"]["value"]
        result(id, {"resultType": "complete", "completion": {"values": [value + "1", value + "2"], "total": 2, "hasMore": False}})
    elif method == "tools/call":
        name = params.get("name")
        if name == "weird":
            result(id, {"resultType": "banana", "content": []})
        elif name == "no_result_type":
            send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "final"}]}})
        elif name == "state_only":
            if "requestState" in params:
                result(id, text(json.dumps({"state": params["requestState"], "inputResponses": params.get("inputResponses")})))
            else:
                result(id, {"resultType": "input_required", "requestState": STATE})
        elif name == "forever":
            result(id, {"resultType": "input_required", "requestState": "again"})
        elif name == "empty_input":
            result(id, {"resultType": "input_required"})
        elif name == "undeclared":
            result(id, {"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}})
        elif name == "shout_log":
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}})
            result(id, text("logged"))
        elif name == "received":
            result(id, text(json.dumps(received)))
        else:
            error(id, -32602, "Unknown tool: %s" % name)
    else:
        error(id, -32601, "Method not found")
