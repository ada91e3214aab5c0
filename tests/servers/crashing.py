"""A modern (2026-07-28) stdio server in raw JSON lines that crashes mid-request.

``server/discover`` is answered; ``tools/call`` ``hold`` gets no reply (a
call in flight); ``tools/call`` ``crash`` writes a long stderr (many lines,
one of them 20,000 characters, the last ``fatal: out of cheese``) and exits
with status 7 while the held calls are still waiting; ``tools/call`` ``pid``
answers with the process id.
"""

import json
import os
import sys

INFO = {"io.modelcontextprotocol/serverInfo": {"name": "crashing", "version": "1"}}


def send(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    id, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
    if id is None:
        continue
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "_meta": INFO}})
    elif params.get("name") == "pid":
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": str(os.getpid())}], "_meta": INFO}})
    elif params.get("name") == "crash":
        for i in range(100):
            sys.stderr.write(f"log line {i}\n")
        sys.stderr.write("x" * 20000 + "\n")
        sys.stderr.write("Traceback (most recent call last):\n  the cheese module\nfatal: out of cheese\n")
        sys.stderr.flush()
        os._exit(7)
