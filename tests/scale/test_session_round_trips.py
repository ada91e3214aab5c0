"""Redis round trips per legacy (2025-11-25) message, counted by Redis itself, and the claims they carry.

A round trip is one read event of Redis (INFO stats ``total_reads_processed``:
a pipeline or a script sent in one write is one), as bench/README.md counts
it ("Scale-out: per-request costs"). The worker's heartbeat (one ``SET`` a
second, with the claims released since its last round trip) is not a
message's: the ``SET`` calls of the same window (INFO commandstats) count
it out, so the figure is a count whatever the machine's speed.

Spec: 2025-11-25 basic/transports.mdx (sessions), basic/index.mdx (Requests:
an id is not used twice in a session); docs/deploy.md, "Legacy sessions".
"""

from __future__ import annotations

import re
import socket

import orjson
import pytest

from .conftest import STATE_KEY, needs_services
from .services import RedisServer, Worker
from .test_legacy_sessions import Peer, call, events, initialize, text

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"


class Stats:
    """INFO of one redis-server over one connection kept open (closing one is a read event too)."""

    def __init__(self, redis_server: RedisServer) -> None:
        self.sock = socket.create_connection(("127.0.0.1", redis_server.port), timeout=5)

    def counts(self) -> tuple[int, int]:
        """(read events, SET calls) so far, from one ``INFO everything`` (itself one read event)."""
        self.sock.sendall(b"*2\r\n$4\r\nINFO\r\n$10\r\neverything\r\n")
        data = b""
        while b"\r\n" not in data or len(data) < data.index(b"\r\n") + 2 + int(data[1 : data.index(b"\r\n")]) + 2:
            chunk = self.sock.recv(65536)
            assert chunk, data
            data += chunk
        reads = int(re.search(rb"total_reads_processed:(\d+)", data).group(1))  # type: ignore[union-attr]
        sets = re.search(rb"cmdstat_set:calls=(\d+)", data)
        return reads, int(sets.group(1)) if sets else 0

    def close(self) -> None:
        self.sock.close()


def test_a_legacy_message_costs_one_round_trip_and_its_id_can_be_used_again(redis_server: RedisServer):
    worker = Worker(WORKER, {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY})
    try:
        peer = Peer(worker.port)
        initialize(peer)
        assert text(orjson.loads(peer.post(call(1, "whoami"))[2])) == str(worker.proc.pid)  # the copy here is built
        messages = 40
        stats = Stats(redis_server)
        reads, sets = stats.counts()
        for n in range(2, 2 + messages):
            status, _, body = peer.post(call(n, "whoami"))
            assert status == 200 and orjson.loads(body)["id"] == n
        reads_after, sets_after = stats.counts()
        stats.close()
        round_trips = reads_after - reads - 1 - (sets_after - sets)  # less this INFO and the heartbeats
        assert round_trips <= messages, (round_trips, messages)
        # a claim released with the next round trip: the same id again (which MCP forbids a client,
        # but a duplicate is refused only while in flight) is served, not refused
        status, _, body = peer.post(call(2, "whoami"))
        assert status == 200 and "result" in orjson.loads(body), body
    finally:
        worker.stop()


def test_an_id_in_flight_on_one_worker_is_refused_on_the_other_that_has_a_copy(redis_server: RedisServer):
    env = {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}
    a = Worker(WORKER, env)
    b = Worker(WORKER, env)
    try:
        on_a = Peer(a.port)
        initialize(on_a)
        on_b = Peer(b.port, on_a.session)
        assert on_b.post(call(1, "whoami"))[0] == 200  # b has its copy: its claims go with the renewal
        conn, resp = on_a.open("POST", call(7, "steps", {"n": 1}, progressToken="p7"))
        stream = events(resp)
        next(stream)  # primed
        _, progress = next(stream)
        assert progress["method"] == "notifications/progress"
        status, _, body = on_b.post(call(7, "whoami"))
        refused = orjson.loads(body)
        assert status == 200 and refused["id"] == 7 and refused["error"]["code"] == -32600, refused
        assert "already in flight" in refused["error"]["message"]
        conn.close()
    finally:
        a.stop()
        b.stop()
