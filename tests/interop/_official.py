"""Starting official `mcp` 1.x peers (tests/peers.py environments) for the interop tests.

Rules: a peer runs under its own pinned Python (`peers.python_peer`), never wiremcp's; an HTTP peer
listens on a free loopback port and is stopped (SIGTERM, then SIGKILL) when the block ends; the
peer's request log (see peers/official_server.py) is read back as JSON lines.
"""

from __future__ import annotations

import json
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from _servers import free_port, stop, wait_listening
from peers import python_peer

PEERS = Path(__file__).resolve().parent / "peers"
OFFICIAL_SERVER = str(PEERS / "official_server.py")


def official_stdio(release: str) -> tuple[str, list[str]]:
    """The command of an official mcp *release* server over stdio (``mcp-1.20.0`` etc.)."""
    return str(python_peer(release)), [OFFICIAL_SERVER, "stdio"]


class HTTPPeer:
    """An official server over HTTP: its endpoint URL and what its request log says."""

    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log

    def exchanges(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]


@contextmanager
def official_http(release: str, tmp: Path) -> Iterator[HTTPPeer]:
    python = python_peer(release)
    port = free_port()
    log = tmp / f"{release}-requests.jsonl"
    err = open(tmp / f"{release}-stderr.txt", "wb")
    proc = subprocess.Popen([str(python), OFFICIAL_SERVER, "http", str(port), str(log)], stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_listening(port, proc)
        yield HTTPPeer(f"http://127.0.0.1:{port}/mcp", log)
    finally:
        stop(proc)
        err.close()


OFFICIAL_CLIENT = str(PEERS / "official_client.py")


def official_client(
    release: str, kind: str, target: str, tool: str, arguments: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run an official mcp *release* client once (see peers/official_client.py); what it printed.

    A client that fails fails the test, with its stderr in the message.
    """
    argv = [str(python_peer(release)), OFFICIAL_CLIENT, kind, target, tool, json.dumps(arguments or {})]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=90, env=env)
    if done.returncode != 0:
        raise AssertionError(f"the {release} client failed ({done.returncode}):\n{done.stderr[-4000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out
