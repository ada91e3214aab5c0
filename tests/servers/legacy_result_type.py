"""A canned 2025-11-25 stdio server, raw JSON lines, whose results carry ``resultType`` (mode ``broken``).

``resultType`` is a 2026-07-28 member; no legacy revision has it. With mode
``clean`` the same server leaves it out. For ``wiremcp tap``'s rule
``legacy-result-type``.
"""

import json
import sys

BROKEN = (sys.argv[1] if len(sys.argv) > 1 else "broken") == "broken"


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    id, method = msg.get("id"), msg.get("method")
    if id is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "canned", "version": "1"}}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "hi"}]}
        if BROKEN:
            result["resultType"] = "complete"
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
        continue
    send({"jsonrpc": "2.0", "id": id, "result": result})
