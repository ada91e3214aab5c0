"""A list change a legacy stream holds unsent is not kept twice (transports/http/_coalesce.py), in both
session stores: the in-memory one (the stream engine's `Stream.add`, transports/http/_stream_engine.py)
and the Redis one (the standalone stream's unsent notifications, backends/redis/sessions.py), the latter
against a real redis-server.

The same steps for both: two copies of a list change while nothing is delivered leave one; a resource
update is never coalesced; once what is unsent is delivered (written to a GET), the next list change is
kept again; the other lists' changes are their own.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from wiremcp.jsonrpc import encode_notification
from wiremcp.transports.http._coalesce import signal
from wiremcp.transports.http._session_rules import ENTRY_COST
from wiremcp.transports.http._stream_engine import SessionStreams

from .conftest import needs_services
from .services import RedisServer

LIMIT = 1 << 20
TOOLS = encode_notification("notifications/tools/list_changed")
PROMPTS = encode_notification("notifications/prompts/list_changed", {})
UPDATED = encode_notification("notifications/resources/updated", {"uri": "file:///a"})


class MemoryStore:
    """The standalone stream of an in-memory legacy session (the engine `_sessions` runs)."""

    def __init__(self) -> None:
        self.stream = SessionStreams(LIMIT).standalone

    async def add(self, data: bytes) -> None:
        self.stream.add(data, LIMIT)

    async def unsent(self) -> list[bytes]:
        return list(self.stream.pending)

    async def deliver(self) -> None:
        self.stream.take()

    async def close(self) -> None:
        pass


class RedisStore:
    """The standalone stream of a Redis-shared legacy session, as `SharedSessions.append_notification` writes it."""

    SID = "coalesce-session"

    def __init__(self, server: RedisServer) -> None:
        import redis.asyncio

        from wiremcp.backends.redis.sessions import RedisSessionStore

        self.client = redis.asyncio.Redis.from_url(server.url)
        self.store = RedisSessionStore(lambda: self.client, "coalesce", "w1", 60_000, ENTRY_COST)

    async def add(self, data: bytes) -> None:
        await self.store.append_notification(self.SID, data, ("", 0), LIMIT, coalesce=signal(data))

    async def _events(self) -> list[tuple[int, bytes]]:
        got = await self.client.xrange(self.store.stream_key(self.SID, 0))
        return [(int(fields[b"n"]), fields[b"d"]) for _, fields in got]

    async def unsent(self) -> list[bytes]:
        sent = await self.store.last_delivered(self.SID)
        return [data for n, data in await self._events() if n > sent]

    async def deliver(self) -> None:
        events = await self._events()
        if events:
            await self.store.delivered(self.SID, events[-1][0])

    async def close(self) -> None:
        await self.store.delete(self.SID)
        await self.client.aclose()


@pytest.fixture(params=["memory", pytest.param("redis", marks=needs_services)])
def store(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryStore
        return
    pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
    server = RedisServer()
    try:
        yield lambda: RedisStore(server)
    finally:
        server.kill()


def test_an_unsent_list_change_is_kept_once(store: Any) -> None:
    import asyncio

    async def go() -> list[list[bytes]]:
        s = store()
        try:
            seen = []
            for data in (TOOLS, UPDATED, TOOLS, UPDATED, PROMPTS, TOOLS, PROMPTS):
                await s.add(data)
            seen.append(await s.unsent())
            await s.deliver()
            seen.append(await s.unsent())
            await s.add(TOOLS)  # the copy held before was delivered: this one is new to the client
            await s.add(TOOLS)
            seen.append(await s.unsent())
            return seen
        finally:
            await s.close()

    before, delivered, after = asyncio.run(go())
    assert before == [TOOLS, UPDATED, UPDATED, PROMPTS]
    assert delivered == []
    assert after == [TOOLS]
