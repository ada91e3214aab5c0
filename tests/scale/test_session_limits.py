"""``max_sessions`` on Redis counts the legacy sessions of every worker (docs/deploy.md, "Legacy sessions").

Two worker processes (tests/scale/capped_worker.py) share one real
redis-server; raw HTTP to each worker's own port chooses which worker opens
each session. The cap's refusal is the one a single process gives (503, a
JSON-RPC error ``SERVER_BUSY``: `wiremcp.server.transport.ServerBusy`); a deleted
session, an expired one and the sessions of a worker that died free their
slots.

Spec: 2025-11-25 basic/transports.mdx ("Session Management").
"""

from __future__ import annotations

import asyncio
import time
from typing import Iterator

import orjson
import pytest

from wiremcp.client import Client
from wiremcp.server.transport import ServerBusy

from .conftest import STATE_KEY, needs_services
from .services import RedisServer, Script
from .test_legacy_sessions import LEGACY, Peer, initialize

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

CAPPED = "tests/scale/capped_worker.py"


def pair_of(redis_server: RedisServer, max_sessions: int, idle: float) -> tuple[Script, Script]:
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    a = Script(CAPPED, env, str(max_sessions), str(idle))
    try:
        return a, Script(CAPPED, env, str(max_sessions), str(idle))
    except BaseException:
        a.stop()
        raise


@pytest.fixture
def capped(redis_server: RedisServer) -> Iterator[tuple[Script, Script]]:
    a, b = pair_of(redis_server, 2, 600)
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def opening(peer: Peer) -> tuple[int, dict[str, str], bytes]:
    return peer.post({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    })


async def whoami(url: str) -> str:
    async with Client.http(url, era="modern", timeout=20) as client:
        return (await client.call_tool("whoami")).text


def assert_refused(reply: tuple[int, dict[str, str], bytes], held: int) -> None:
    status, _, body = reply
    assert status == 503, body
    error = orjson.loads(body)
    assert error["id"] == 1 and error["error"]["code"] == ServerBusy.code
    assert error["error"]["message"] == (
        f"Server busy: {held} sessions are open, the most this server keeps; try again later "
        "(MCP 2026-07-28 clients need no session)"
    )


def test_the_cap_counts_the_sessions_of_both_workers_and_a_delete_frees_a_slot(capped):
    a, b = capped
    on_a, on_b = Peer(a.port), Peer(b.port)
    initialize(on_a)
    initialize(on_b)
    # each worker holds one session; the third is refused on either worker
    assert_refused(opening(Peer(a.port)), 2)
    assert_refused(opening(Peer(b.port)), 2)
    # 2026-07-28 requests need no session: still served
    assert asyncio.run(whoami(a.url)) == str(a.proc.pid)
    # the session opened on a, deleted through b: its slot is free for a new one on a
    conn, resp = Peer(b.port, on_a.session).open("DELETE")
    assert resp.status == 204
    conn.close()
    again = Peer(a.port)
    initialize(again)
    assert_refused(opening(Peer(b.port)), 2)
    # the session opened on b still works on a (its slot is its own)
    status, _, _ = Peer(a.port, on_b.session).post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert status == 200


def test_an_expired_session_and_a_dead_workers_sessions_free_their_slots(redis_server: RedisServer):
    a, b = pair_of(redis_server, 1, 1.0)
    try:
        initialize(Peer(a.port))
        a.kill()  # dies holding the only slot
        assert_refused(opening(Peer(b.port)), 1)
        # the session expires (idle timeout: 1 s, by Redis's clock); its slot is free again
        deadline = time.monotonic() + 20
        while True:
            reply = opening(Peer(b.port))
            if reply[0] == 200:
                break
            assert_refused(reply, 1)
            assert time.monotonic() < deadline, "the dead worker's session never freed its slot"
            time.sleep(0.1)
        # that one expires too when unused
        deadline = time.monotonic() + 20
        while opening(Peer(b.port))[0] != 200:
            assert time.monotonic() < deadline, "an expired session never freed its slot"
            time.sleep(0.1)
    finally:
        a.stop()
        b.stop()
