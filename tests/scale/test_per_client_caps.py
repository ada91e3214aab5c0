"""Issue 23, item 7: behind the documented nginx, each client gets its own share of a per-client cap.

Before: every request reached the worker from nginx's address, so
``max_listens_per_client`` was one cap for all the clients together (the
257th listen from anyone got 429). Now a worker told to trust nginx
(``--trusted-proxy 127.0.0.1``, docs/deploy.md) counts each client by the
address nginx names in ``X-Forwarded-For``. Two real client addresses
(127.0.0.2 and 127.0.0.3, as sources through a real nginx running
docs/deploy.md's configuration) each open their own share; a client that
reaches the worker directly cannot pick its key with a forged header; and
the legacy sessions' cap (``--max-sessions-per-client``) counts the same way.
"""

from __future__ import annotations

import http.client
import json
from typing import Iterator

import pytest

from .conftest import needs_services
from .services import Nginx, Worker

pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"
CAP = 2
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


class Front:
    def __init__(self, worker: Worker, nginx: Nginx) -> None:
        self.worker = worker
        self.nginx = nginx


@pytest.fixture(scope="module")
def front() -> Iterator[Front]:
    worker = Worker(
        WORKER, {"WIREMCP_MAX_LISTENS_PER_CLIENT": str(CAP)},
        "--trusted-proxy", "127.0.0.1", "--max-sessions-per-client", str(CAP),
    )  # fmt: skip
    try:
        nginx = Nginx([worker.port])
    except BaseException:
        worker.stop()
        raise
    yield Front(worker, nginx)
    nginx.stop()
    worker.stop()


def listen(port: int, source: str, id_: int, headers: dict[str, str] | None = None) -> tuple[int, http.client.HTTPConnection]:
    """Open a subscriptions/listen from ``source``; its status (200: acknowledged and held open)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": id_, "method": "subscriptions/listen",
         "params": {"notifications": {"toolsListChanged": True}, "_meta": META}}
    ).encode()  # fmt: skip
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(source, 0))
    conn.request(
        "POST",
        "/mcp",
        body,
        {
            "Host": "127.0.0.1", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "subscriptions/listen", **(headers or {}),
        },
    )  # fmt: skip
    resp = conn.getresponse()
    if resp.status != 200:
        resp.read()
        return resp.status, conn
    while True:  # the acknowledgement: the stream is open and counted
        line = resp.fp.readline()
        assert line, "the stream ended before its acknowledgement"
        if line.startswith(b"data:"):
            assert b"notifications/subscriptions/acknowledged" in line, line
            return 200, conn


def test_two_clients_behind_nginx_each_get_their_own_share(front: Front) -> None:
    opened: list[http.client.HTTPConnection] = []
    try:
        for i in range(CAP):
            status, conn = listen(front.nginx.port, "127.0.0.2", i)
            opened.append(conn)
            assert status == 200
        status, conn = listen(front.nginx.port, "127.0.0.2", 10)
        opened.append(conn)
        assert status == 429  # 127.0.0.2 holds its share
        for i in range(CAP):  # before: 429 here too, every client being nginx's 127.0.0.1
            status, conn = listen(front.nginx.port, "127.0.0.3", 20 + i)
            opened.append(conn)
            assert status == 200, "127.0.0.3 was refused: the clients behind nginx share one cap"
        status, conn = listen(front.nginx.port, "127.0.0.3", 30)
        opened.append(conn)
        assert status == 429
    finally:
        for conn in opened:
            conn.close()


def test_a_client_reaching_the_worker_directly_cannot_forge_its_address(front: Front) -> None:
    opened: list[http.client.HTTPConnection] = []
    try:
        for i in range(CAP):
            status, conn = listen(front.worker.port, "127.0.0.4", 40 + i, {"X-Forwarded-For": f"10.9.9.{i}"})
            opened.append(conn)
            assert status == 200
        status, conn = listen(front.worker.port, "127.0.0.4", 50, {"X-Forwarded-For": "10.9.9.99"})
        opened.append(conn)
        assert status == 429  # 127.0.0.4 is not a trusted proxy: its header is ignored
    finally:
        for conn in opened:
            conn.close()


def initialize(port: int, source: str) -> int:
    """A 2025-11-25 ``initialize`` from ``source``: its status (200: a session opened)."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    ).encode()  # fmt: skip
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15, source_address=(source, 0))
    try:
        conn.request(
            "POST", "/mcp", body,
            {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )  # fmt: skip
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def test_legacy_sessions_behind_nginx_are_capped_per_client(front: Front) -> None:
    assert [initialize(front.nginx.port, "127.0.0.5") for _ in range(CAP + 1)] == [200] * CAP + [429]
    assert [initialize(front.nginx.port, "127.0.0.6") for _ in range(CAP + 1)] == [200] * CAP + [429]
