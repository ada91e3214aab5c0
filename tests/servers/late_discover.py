"""A 2026-07-28 stdio server in raw JSON lines that answers requests concurrently, the probe last.

It stands in for a modern server that handles each request in its own task
(fastmcp does) on a loaded machine: its ``server/discover`` answer takes
``DELAY`` seconds (argv[1], default 1.5), and a request on the modern
connection that comes meanwhile is answered at once, so the fallback
``initialize`` gets -32022 (the connection serves 2026-07-28) before the probe
gets its DiscoverResult. It also answers ``tools/call`` (``echo``).
"""

import json
import sys
import threading
from typing import Any

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
lock = threading.Lock()
META = {"io.modelcontextprotocol/serverInfo": {"name": "late-discover", "version": "1"}}


def send(obj: Any) -> None:
    with lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def discover(id: Any) -> None:
    send({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
        "serverInfo": {"name": "late-discover", "version": "1"}, "_meta": META,
    }})


sys.stderr.write("late-discover: up\n")
sys.stderr.flush()
for line in sys.stdin:
    msg = json.loads(line)
    id, method = msg.get("id"), msg.get("method")
    if id is None:
        continue
    if method == "server/discover":
        threading.Timer(DELAY, discover, (id,)).start()
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32022, "message": "connection is serving the 2026-07-28 era; initialize is not accepted",
            "data": {"supported": ["2026-07-28"], "requested": msg["params"].get("protocolVersion")},
        }})
    elif method == "tools/call":
        text = msg["params"]["arguments"]["text"]
        send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": [{"type": "text", "text": text}], "_meta": META}})
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
