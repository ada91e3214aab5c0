"""Spans of a legacy session shared by two workers: each message traced once, where it arrived.

When a 2025-11-25 session opened on worker A gets a message on worker B, B
rebuilds its copy of the session by answering the recorded ``initialize``
and ``notifications/initialized`` again (`_shared_sessions._restore`).
Those are the client's messages of long ago, traced by A when they arrived:
B must not export a second SERVER span for them (OpenTelemetry semantic
conventions for MCP, docs/gen-ai/mcp.md: a server span covers "the
processing of the MCP request or notification initiated by the peer").
Both workers export over OTLP/HTTP to one real receiver on loopback.
"""

from __future__ import annotations

import time
from typing import Any

import orjson
import pytest

from .conftest import STATE_KEY, needs_services
from .services import RedisServer, Worker
from .test_legacy_sessions import WORKER, Peer, call, initialize

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("opentelemetry.sdk", reason="the telemetry tests need the [otel] extra")

from otlp_receiver import SERVER_KIND, Receiver  # noqa: E402

pytestmark = [pytest.mark.slow, needs_services]


def _names(receiver: Receiver) -> list[str]:
    return sorted(span.name for span in receiver.spans if span.kind == SERVER_KIND)


def test_a_restored_session_does_not_trace_its_replayed_initialize_again(redis_server: RedisServer) -> None:
    receiver = Receiver()
    env = {
        "WIREMCP_REDIS_URL": redis_server.url,
        "WIREMCP_STATE_KEY": STATE_KEY,
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
    }
    a = b = None
    try:
        a = Worker(WORKER, env)
        b = Worker(WORKER, env)
        on_a = Peer(a.port)
        initialize(on_a)  # initialize and notifications/initialized, on a
        on_b = Peer(b.port, on_a.session)
        status, _, body = on_b.post(call(1, "whoami"))  # b restores the session, then serves the call
        assert status == 200 and orjson.loads(body)["result"]["content"][0]["text"] == str(b.proc.pid)
        # the synchronisation point: a ping to each worker, the last message each handles. A
        # worker's batch span processor exports spans in the order they end, so once both pings'
        # spans are in, every span either worker made before them (a replayed one too) is in.
        for id_, peer in ((2, on_b), (3, Peer(a.port, on_a.session))):
            status, _, _ = peer.post({"jsonrpc": "2.0", "id": id_, "method": "ping"})
            assert status == 200
        expected = sorted(["initialize", "notifications/initialized", "tools/call whoami", "ping", "ping"])
        deadline = time.monotonic() + 20
        while _names(receiver).count("ping") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        got: list[Any] = _names(receiver)
        assert got == expected, got
    finally:
        for worker in (a, b):
            if worker is not None:
                worker.stop()
        receiver.close()
