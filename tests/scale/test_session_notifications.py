"""A shared legacy session keeps its notifications while no GET stream is open, as one process does.

Spec: 2025-11-25 basic/transports.mdx ("Listening for Messages from the
Server": the server sends notifications on the GET stream), server/tools.mdx
and server/resources.mdx (list changes, resource updates). The rules are
those of docs/deploy.md ("Legacy sessions") and
transports/http/_shared_sessions.py: a notification published by any
worker is written once, whatever the number of workers holding a copy of the
session, and kept until a GET on any worker carries it, up to
``replay_buffer`` bytes, the oldest dropped first with a log line.

Two workers share one real redis-server; nginx (docs/deploy.md, round robin)
sends each request to either.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import orjson
import pytest

from .conftest import STATE_KEY, needs_services
from .services import Nginx, RedisServer, Script, Worker
from .test_legacy_sessions import Peer, call, events, initialize, text

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")

pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"
CAPPED = "tests/scale/capped_worker.py"
#: What one kept message counts besides its length (transports/http/_sessions.py, ENTRY_COST).
ENTRY_COST = 128


def updated(uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}


def subscribe(peer: Peer, id: int, uri: str) -> None:
    status, _, body = peer.post({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}})
    assert status == 200 and orjson.loads(body)["result"] == {}, body


def written(redis_server: RedisServer, session: str, count: int) -> None:
    """Wait until ``count`` events are in the session's standalone stream in Redis (its event counter)."""
    deadline = time.monotonic() + 20
    while (got := redis_server.command("INCRBY", f"wiremcp:ls:{session}:n:0", "0")) != f":{count}":
        assert time.monotonic() < deadline, f"the standalone stream holds {got} events, not {count}"
        time.sleep(0.02)


@pytest.fixture
def behind_nginx(redis_server: RedisServer) -> Iterator[tuple[list[Worker], Nginx]]:
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers = [Worker(WORKER, env), Worker(WORKER, env)]
    nginx = Nginx([w.port for w in workers])
    try:
        yield workers, nginx
    finally:
        nginx.stop()
        for w in workers:
            w.stop()


def test_notifications_made_on_both_workers_without_a_get_reach_the_next_get_once(behind_nginx, redis_server):
    workers, nginx = behind_nginx
    peer = Peer(nginx.port)
    initialize(peer)
    # both workers serve the session (round robin), so both hold a copy of it
    served = {text(orjson.loads(peer.post(call(n, "whoami"))[2])) for n in range(1, 5)}
    assert served == {str(w.proc.pid) for w in workers}
    uris = [f"file:///kept/{i}" for i in range(6)]
    for n, uri in enumerate(uris, 10):
        subscribe(peer, n, uri)
    # no GET stream is open: changes made on both workers, a resource update each and a list change
    made = set()
    for n, uri in enumerate(uris, 20):
        status, _, body = peer.post(call(n, "touch", {"uri": uri}))
        assert status == 200
        made.add(text(orjson.loads(body)))
    status, _, body = peer.post(call(30, "retool"))
    assert status == 200
    assert made == {str(w.proc.pid) for w in workers}, "every change was made on one worker"
    written(redis_server, peer.session, len(uris) + 1)  # once each, though both workers got every change
    # a GET, on whichever worker nginx picks, gets them all, each once
    conn, resp = peer.open("GET", headers={"Accept": "text/event-stream"})
    assert resp.status == 200
    stream = events(resp)
    prime_id, primed = next(stream)
    assert primed is None and prime_id == "0-0"
    got = [next(stream) for _ in range(len(uris) + 1)]
    notes = [note for _, note in got]
    # changes made on two workers arrive in the order Redis got them
    assert sorted(orjson.dumps(n) for n in notes) == sorted(
        orjson.dumps(n) for n in [*map(updated, uris), {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}]
    )
    assert [event_id for event_id, _ in got] == [f"0-{i}" for i in range(1, len(uris) + 2)]
    # and the stream goes on with the next change, nothing else in between
    assert peer.post(call(31, "touch", {"uri": uris[0]}))[0] == 200
    assert next(stream) == (f"0-{len(uris) + 2}", updated(uris[0]))
    conn.close()
    # what a GET carried is not kept for the next one: a new GET starts after it
    conn, resp = peer.open("GET", headers={"Accept": "text/event-stream"})
    stream = events(resp)
    assert next(stream) == (f"0-{len(uris) + 2}", None)
    assert peer.post(call(32, "touch", {"uri": uris[1]}))[0] == 200
    assert next(stream) == (f"0-{len(uris) + 3}", updated(uris[1]))
    conn.close()


def test_unsent_notifications_are_bounded_by_the_replay_buffer_oldest_dropped_first(redis_server: RedisServer):
    uris = [f"file:///kept/{i}" for i in range(10)]
    size = len(orjson.dumps(updated(uris[0]))) + ENTRY_COST
    keep = 4
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    workers = [Script(CAPPED, env, "100", "600", str(keep * size + size // 2)) for _ in range(2)]
    try:
        a, b = (Peer(w.port) for w in workers)
        initialize(a)
        b.session = a.session
        for n, uri in enumerate(uris, 10):
            subscribe(a, n, uri)
        assert b.post(call(1, "whoami"))[0] == 200  # b holds a copy too
        for n, uri in enumerate(uris, 20):  # made on a, in this order
            assert a.post(call(n, "touch", {"uri": uri}))[0] == 200
        written(redis_server, a.session, len(uris))
        logs = "".join(w.log() for w in workers)
        assert "dropped 1 unsent messages of stream 0" in logs
        conn, resp = b.open("GET", headers={"Accept": "text/event-stream"})
        stream = events(resp)
        assert next(stream)[1] is None
        # the newest ones, in order; the oldest were dropped
        assert [next(stream) for _ in range(keep)] == [
            (f"0-{i + 1}", updated(uris[i])) for i in range(len(uris) - keep, len(uris))
        ]
        assert a.post(call(40, "touch", {"uri": uris[0]}))[0] == 200
        assert next(stream) == (f"0-{len(uris) + 1}", updated(uris[0]))
        conn.close()
    finally:
        for w in workers:
            w.stop()
