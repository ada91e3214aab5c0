"""The backend setting, the shared requestState keys, and the Redis change bus in one process.

Spec: basic/patterns/subscriptions.mdx (every listener gets the changes it
asked for), basic/patterns/mrtr.mdx (Server Requirements: the state is
verified by whichever instance gets the retry). The rules tested are those of
wiremcp/backends/__init__.py, backends/redis/__init__.py and server/_backend.py.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import wiremcp
from wiremcp.backends import BackendUnavailable, InProcessBackend, LocalBus
from wiremcp.jsonrpc import InvalidParams
from wiremcp.protocol.state import StateSealer

from .conftest import STATE_KEY, needs_services, sync
from .services import RedisServer, free_port

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
from wiremcp.backends.redis import RedisBackend  # noqa: E402

pytestmark = [pytest.mark.slow, needs_services]


def test_without_redis_the_backend_is_in_process_and_redis_is_never_imported():
    code = (
        "import sys, wiremcp;"
        "s = wiremcp.Server('x');"
        "from wiremcp.backends import InProcessBackend;"
        "assert isinstance(s.backend, InProcessBackend) and not s.backend.shared, s.backend;"
        "bad = [m for m in sys.modules if m == 'redis' or m.startswith(('redis.', 'wiremcp.backends.redis'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("WIREMCP_REDIS_URL", "WIREMCP_STATE_KEY")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_given_bus_is_kept_and_cannot_be_mixed_with_a_backend():
    bus = LocalBus()
    assert wiremcp.Server("x", bus=bus).bus is bus
    with pytest.raises(ValueError, match="either backend= or bus="):
        wiremcp.Server("x", bus=bus, backend=InProcessBackend())


def test_the_redis_url_setting_selects_the_redis_backend(monkeypatch):
    monkeypatch.setenv("WIREMCP_REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("WIREMCP_STATE_KEY", STATE_KEY)
    server = wiremcp.Server("x")
    assert isinstance(server.backend, RedisBackend) and server.backend.url == "redis://127.0.0.1:1/0"
    assert server.bus is server.backend.bus


def test_a_shared_backend_without_a_state_key_is_refused_at_start_up(monkeypatch):
    monkeypatch.delenv("WIREMCP_STATE_KEY", raising=False)
    with pytest.raises(ValueError, match="set WIREMCP_STATE_KEY"):
        wiremcp.Server("x", backend=RedisBackend("redis://127.0.0.1:1/0"))
    monkeypatch.setenv("WIREMCP_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(ValueError, match="set WIREMCP_STATE_KEY"):
        wiremcp.Server("x")
    assert wiremcp.Server("x", state_keys=[STATE_KEY]).backend.shared


def test_a_redis_url_must_be_one():
    with pytest.raises(ValueError, match="is not a Redis URL"):
        RedisBackend("http://user:secret@127.0.0.1:6379")
    with pytest.raises(ValueError) as caught:
        RedisBackend("http://user:secret@127.0.0.1:6379")
    assert "secret" not in str(caught.value)


def test_state_keys_rotate_through_the_environment(monkeypatch):
    digest = "d"
    old = StateSealer(["old-key-0123456789"])
    monkeypatch.setenv("WIREMCP_STATE_KEY", "new-key-0123456789,old-key-0123456789")
    both = StateSealer()
    assert both.configured
    assert both.open(old.seal(digest, [1]), digest) == [1]  # any key opens
    sealed_new = both.seal(digest, [2])  # the first seals
    assert StateSealer(["new-key-0123456789"]).open(sealed_new, digest) == [2]
    with pytest.raises(InvalidParams, match="failed verification"):
        old.open(sealed_new, digest)
    monkeypatch.setenv("WIREMCP_STATE_KEY", "new-key-0123456789,short")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        StateSealer()
    monkeypatch.setenv("WIREMCP_STATE_KEY", "new-key-0123456789,,old-key-0123456789")
    with pytest.raises(ValueError, match="WIREMCP_STATE_KEY=.*empty key"):
        wiremcp.Server("x")
    monkeypatch.delenv("WIREMCP_STATE_KEY")
    assert not StateSealer().configured


@sync
async def test_redis_unreachable_at_start_is_a_clear_error():
    port = free_port()  # nothing listens there
    server = wiremcp.Server("x", backend=RedisBackend(f"redis://:pw@127.0.0.1:{port}/0"), state_keys=[STATE_KEY])
    with pytest.raises(BackendUnavailable, match=rf"cannot reach Redis at redis://:\*\*\*@127.0.0.1:{port}/0") as caught:
        async with server.lifespan:
            pass
    assert "pw" not in str(caught.value)
    assert not server.lifespan.running


async def _until(predicate, what: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def _markers_in(seen: list, *servers: str) -> bool:
    """Whether the marker change of each of ``servers`` has been delivered to the listener that saw ``seen``."""
    return all(("updated", f"marker:{name}") in seen for name in servers)


@sync
async def test_a_change_on_one_server_reaches_the_listeners_of_another_once(redis_server: RedisServer):
    a = wiremcp.Server("a", backend=RedisBackend(redis_server.url), state_keys=[STATE_KEY])
    b = wiremcp.Server("b", backend=RedisBackend(redis_server.url), state_keys=[STATE_KEY])
    seen_a: list = []
    seen_b: list = []
    a.bus.subscribe(seen_a.append)
    b.bus.subscribe(seen_b.append)
    async with a.lifespan, b.lifespan:
        a.notify_resource_updated("file:///one")
        b.notify_tools_changed()
        # then a marker from each server: a server's changes arrive in the order it made them, so a
        # second delivery of either change would arrive before its server's marker
        a.notify_resource_updated("marker:a")
        b.notify_resource_updated("marker:b")
        await _until(lambda: all(_markers_in(seen, "a", "b") for seen in (seen_a, seen_b)), "both markers on both servers")
        expected = sorted([("updated", "file:///one"), ("tools", None), ("updated", "marker:a"), ("updated", "marker:b")], key=str)
        assert sorted(seen_a, key=str) == sorted(seen_b, key=str) == expected
        # close_subscriptions stays in its own process: b's listeners keep their streams
        a.close_subscriptions()
        assert seen_a[-1] is None and None not in seen_b


@sync
async def test_redis_lost_while_serving_degrades_to_this_worker_then_reconnects(redis_server: RedisServer, caplog):
    a = wiremcp.Server("a", backend=RedisBackend(redis_server.url), state_keys=[STATE_KEY])
    b = wiremcp.Server("b", backend=RedisBackend(redis_server.url), state_keys=[STATE_KEY])
    seen_a: list = []
    seen_b: list = []
    a.bus.subscribe(seen_a.append)
    b.bus.subscribe(seen_b.append)
    async with a.lifespan, b.lifespan:
        redis_server.kill()
        await _until(lambda: not a.backend.connected and not b.backend.connected, "both see Redis gone")
        a.notify_resource_updated("file:///during")
        await _until(lambda: seen_a == [("updated", "file:///during")], "local delivery while Redis is gone")
        assert seen_b == []
        assert "delivered to this worker's listeners only" in caplog.text
        redis_server.restart()
        await _until(lambda: a.backend.connected and b.backend.connected, "both reconnect by themselves", 20)
        a.notify_resource_updated("file:///after")
        a.notify_resource_updated("marker:a")  # after it on the same server: the synchronisation point
        await _until(lambda: _markers_in(seen_a, "a") and _markers_in(seen_b, "a"), "shared again")
        assert seen_a == [("updated", "file:///during"), ("updated", "file:///after"), ("updated", "marker:a")]
        assert seen_b == [("updated", "file:///after"), ("updated", "marker:a")]
