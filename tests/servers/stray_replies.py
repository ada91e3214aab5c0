"""A modern (2026-07-28) stdio server in raw JSON lines that sends replies the client never asked for.

Tools (``tools/call`` by name):

* ``hold`` ``{"label": L}``: no reply until ``release`` names L;
* ``release`` ``{"label": L, "text": T}``: answer the held call L with T, then this one;
* ``stray`` ``{"ids": [...]}``: first a result and an error for each id in
  ``ids`` (ids this client never sent), then this call's own reply;
* ``twice``: two replies to the same request, ``first`` then ``second``;
* ``late``: no reply until ``notifications/cancelled`` names this request,
  then the reply anyway (a reply to a request that timed out);
* ``received``: every message received so far.
"""

import json
import sys
from typing import Any

received: list[Any] = []
held: dict[str, Any] = {}
late: set[Any] = set()
INFO = {"io.modelcontextprotocol/serverInfo": {"name": "stray", "version": "1"}}


def send(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def text(id: Any, t: str) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": [{"type": "text", "text": t}], "_meta": INFO}})


for line in sys.stdin:
    msg = json.loads(line)
    received.append(msg)
    id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
    if method == "notifications/cancelled":
        target = params.get("requestId")
        if target in late:
            late.discard(target)
            text(target, "late")
        continue
    if id is None:
        continue
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "_meta": INFO}})
        continue
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "hold":
        held[args["label"]] = id
    elif name == "release":
        text(held.pop(args["label"]), args["text"])
        text(id, "released")
    elif name == "stray":
        for stray in args["ids"]:
            text(stray, "STRAY")
            send({"jsonrpc": "2.0", "id": stray, "error": {"code": -32603, "message": "stray error"}})
        text(id, "after stray")
    elif name == "twice":
        text(id, "first")
        text(id, "second")
    elif name == "late":
        late.add(id)
    elif name == "received":
        text(id, json.dumps(received))
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "Unknown tool: %s" % name}})
