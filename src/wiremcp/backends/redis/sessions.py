"""The Redis side of legacy (2025-11-25) sessions shared by every worker: keys, Lua scripts, round trips.

`wiremcp.transports.http._shared_sessions` keeps the wire rules (docs/deploy.md,
"Legacy sessions"); this module keeps what lives in Redis and how it is
written, and knows nothing of HTTP nor of JSON-RPC (it moves bytes). Rules
kept here:

* every key of a session sits under ``{prefix}:ls:{id}``; the live-session
  slots (``{prefix}:sessions``, a sorted set: id -> expiry in ms by Redis's
  clock) and the worker heartbeats (``{prefix}:worker:{w}``) sit outside it,
  where no session id can name them;
* every key a message touches expires ``idle_timeout`` after it (`ttl_ms`):
  a session whose workers all died leaves nothing behind for long;
* an event's number comes from ``INCR`` in the same Lua call as its
  ``XADD`` (`append`), so numbers are unique whichever worker writes; a
  stream ends with an error at most once (`append_final_once`);
* a session notification is written once whatever the number of workers
  holding a copy (``SET NX`` on the change's name, in the same call:
  `append_notification`), and what no GET carried yet is bounded in bytes
  and count, the oldest dropped first (`delivered` marks what a GET took);
  a list change is not written again while an unsent copy of it is kept
  (``coalesce``; the rule of transports/http/_coalesce.py, as the engine's
  `Stream.add` keeps it for the in-memory store);
* a live session holds one slot; `open_slot` drops the expired slots and
  takes one in the same call, or reports the cap reached.

`REDIS_ERRORS` are the exceptions that mean "Redis cannot be reached or
failed" (redis-py is imported with this module).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import orjson
import redis.exceptions

from .. import BackendUnavailable

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["RedisSessionStore", "REDIS_ERRORS", "MAX_EVENTS", "MAX_UNSENT"]

#: Redis unreachable or failing.
REDIS_ERRORS: tuple[type[BaseException], ...] = (redis.exceptions.RedisError, OSError, BackendUnavailable)
#: Events one stream keeps in Redis for resumption (the oldest are trimmed past it).
MAX_EVENTS = 1000
#: Session notifications kept unsent for a later GET, at most (besides the byte bound):
#: fewer than `MAX_EVENTS`, so that trimming a stream never takes one of them silently.
MAX_UNSENT = MAX_EVENTS // 2
#: Milliseconds during which a change written to a session's stream is known (every worker
#: holding a copy of the session gets the change within it, and the first one writes it).
_SEEN_MS = 60_000
#: Milliseconds one XREAD waits before the reader looks around (keep-alive, a dead worker).
POLL_MS = 1000

#: XADD one event with the next number of its stream; returns the number.
_APPEND = """
local n = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'n', n, 'd', ARGV[2], 'f', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return n
"""
#: The same, unless the stream already holds its final event (ends a dead worker's stream once).
_APPEND_FINAL_ONCE = """
if redis.call('SISMEMBER', KEYS[3], ARGV[5]) == 1 then return 0 end
redis.call('SADD', KEYS[3], ARGV[5])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
local n = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'n', n, 'd', ARGV[2], 'f', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return n
"""
#: A session notification for the standalone (GET) stream, written once whatever the number of
#: workers holding a copy of the session (the first to write a change wins: ``seen``), kept
#: until a GET carries it, at most ARGV[6] bytes and ARGV[8] notifications of them (the
#: oldest dropped first); returns {its number (0: not written), how many were dropped}.
#: ARGV[9] '1': a list change (transports/http/_coalesce.py), not written when an unsent copy
#: of the same bytes is kept (KEYS[6]: unsent list change -> its number).
_NOTIFY = """
if ARGV[4] ~= '' and not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[5]) then return {0, 0} end
if ARGV[9] == '1' and redis.call('HEXISTS', KEYS[6], ARGV[2]) == 1 then return {0, 0} end
local n = redis.call('INCR', KEYS[2])
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'n', n, 'd', ARGV[2], 'f', '0')
local size = string.len(ARGV[2]) + tonumber(ARGV[7])
redis.call('RPUSH', KEYS[4], n .. ' ' .. id .. ' ' .. size)
if ARGV[9] == '1' then redis.call('HSET', KEYS[6], ARGV[2], n) end
local bytes = redis.call('INCRBY', KEYS[5], size)
local limit, most, dropped = tonumber(ARGV[6]), tonumber(ARGV[8]), 0
local kept = redis.call('LLEN', KEYS[4])
local oldest = 0
while (bytes > limit or kept > most) and kept > 1 do
  local m, eid, sz = string.match(redis.call('LPOP', KEYS[4]), '(%d+) (%S+) (%d+)')
  redis.call('XDEL', KEYS[1], eid)
  bytes = redis.call('DECRBY', KEYS[5], sz)
  kept = kept - 1
  dropped = dropped + 1
  oldest = tonumber(m)
end
if dropped > 0 then
  local signals = redis.call('HGETALL', KEYS[6])
  for i = 1, #signals, 2 do
    if tonumber(signals[i + 1]) <= oldest then redis.call('HDEL', KEYS[6], signals[i]) end
  end
end
for _, key in ipairs({KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[6]}) do redis.call('PEXPIRE', key, ARGV[3]) end
return {n, dropped}
"""
#: A GET carried the standalone stream's events up to ARGV[1]: no longer unsent (nor are the
#: list changes among them, KEYS[4]).
_DELIVERED = """
local n = tonumber(ARGV[1])
if n > tonumber(redis.call('GET', KEYS[1]) or '0') then redis.call('SET', KEYS[1], n, 'PX', ARGV[2]) end
while true do
  local head = redis.call('LINDEX', KEYS[2], 0)
  if not head then break end
  local m, eid, sz = string.match(head, '(%d+) (%S+) (%d+)')
  if tonumber(m) > n then break end
  redis.call('LPOP', KEYS[2])
  redis.call('DECRBY', KEYS[3], sz)
end
local signals = redis.call('HGETALL', KEYS[4])
for i = 1, #signals, 2 do
  if tonumber(signals[i + 1]) <= n then redis.call('HDEL', KEYS[4], signals[i]) end
end
return 0
"""
#: Take a slot among the live sessions of every worker (a sorted set: session id -> expiry in ms, by
#: Redis's clock), after dropping the expired ones; returns {1, live} or, at the cap, {0, live}.
_OPEN = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local live = redis.call('ZCARD', KEYS[1])
if live >= tonumber(ARGV[1]) then return {0, live} end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
return {1, live + 1}
"""
#: Claim request id ARGV[3] for worker ARGV[4] unless it is in flight already (KEYS[3]: the session's
#: calls, id -> "worker stream"; KEYS[4]: its stream counter; ARGV[2]: the idle timeout in ms); sets n to
#: the stream's number, 0 when the id is in flight already.
_CLAIM_N = """
local n = redis.call('INCR', KEYS[4])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
if redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4] .. ' ' .. n) == 0 then n = 0 end
redis.call('PEXPIRE', KEYS[3], ARGV[2])
"""
#: `_CLAIM_N` alone (the same keys and arguments as `_RENEW`); returns n.
_CLAIM = _CLAIM_N + "return n\n"
#: A message of a live session (KEYS[1]: its record, KEYS[2]: the live slots, ARGV[1]: its id): the record
#: and its slot last another idle timeout, or the slot is freed when the record is gone; with a request
#: id (ARGV[3] not empty), also `_CLAIM_N` it, in the same call. Returns {record or nil, n (-1: no claim)}.
_RENEW = """
local raw = redis.call('GET', KEYS[1])
if not raw then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return {false, -1}
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[1])
if ARGV[3] == '' then return {raw, -1} end
""" + _CLAIM_N + "return {raw, n}\n"
#: Released claims kept for the next round trip, at most (past it they are sent at once).
MAX_RELEASES = 256


def text(value: Any) -> str:
    """A value redis-py handed back (bytes: the clients here do not decode)."""
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisSessionStore:
    """What the shared legacy sessions keep in Redis, for one worker (``worker``) of one deployment (``prefix``)."""

    __slots__ = ("client", "prefix", "worker", "ttl_ms", "entry_cost", "releases")

    def __init__(self, client: Callable[[], redis.asyncio.Redis], prefix: str, worker: str, ttl_ms: int, entry_cost: int) -> None:
        self.client = client  # the backend's client, while it is started
        self.prefix = prefix
        self.worker = worker
        self.ttl_ms = ttl_ms
        self.entry_cost = entry_cost  # what one kept message counts besides its length
        # Answered requests whose claims go with this worker's next round trip (`release_later`).
        self.releases: list[tuple[str, bytes]] = []

    @property
    def conn(self) -> redis.asyncio.Redis:
        """The shared client (the backend's, while it is started)."""
        return self.client()

    @property
    def live_key(self) -> str:
        """The sorted set of every worker's live sessions; outside ``{p}:ls:``, which any id may name."""
        return f"{self.prefix}:sessions"

    def key(self, sid: str, *parts: object) -> str:
        """The key of session ``sid``'s ``parts`` (``{prefix}:ls:{sid}:...``)."""
        return ":".join((f"{self.prefix}:ls:{sid}", *map(str, parts)))

    def inbox(self, worker: str) -> str:
        """The pub/sub channel of a worker (forwarded answers and cancellations)."""
        return f"{self.prefix}:worker:{worker}:inbox"

    # -- workers ------------------------------------------------------------------------------

    async def beat(self, ttl_ms: int) -> None:
        """Renew this worker's heartbeat (the claims released since the last round trip go with it)."""
        releases = self._take_releases()
        try:
            async with self.conn.pipeline(transaction=False) as pipe:
                self._send_releases(pipe, releases)
                pipe.set(f"{self.prefix}:worker:{self.worker}", b"1", px=ttl_ms)
                await pipe.execute()
        except BaseException:
            self._keep_releases(releases)
            raise

    async def alive(self, worker: str) -> bool:
        """Whether ``worker``'s heartbeat is in Redis."""
        return bool(await self.conn.exists(f"{self.prefix}:worker:{worker}"))

    async def publish(self, worker: str, message: dict[str, Any]) -> None:
        """Send ``message`` to ``worker``'s inbox."""
        await self.conn.publish(self.inbox(worker), orjson.dumps(message))

    # -- the session's record and slot -----------------------------------------------------------

    async def open_slot(self, sid: str, most: int) -> tuple[bool, int]:
        """Take a live-session slot for ``sid`` unless ``most`` are taken; (taken, how many are taken now)."""
        taken, count = await self.conn.eval(_OPEN, 1, self.live_key, most, sid, self.ttl_ms)
        return bool(taken), int(count)

    async def release_slot(self, sid: str) -> None:
        """Free the live-session slot of ``sid``."""
        await self.conn.zrem(self.live_key, sid)

    async def create(self, sid: str, record: dict[str, Any]) -> None:
        """Write a new session's record (unless one exists), expiring after the idle timeout."""
        await self.conn.set(self.key(sid), orjson.dumps(record), px=self.ttl_ms, nx=True)

    async def renew(self, sid: str, claim: bytes | None = None) -> tuple[dict[str, Any] | None, int]:
        """The session's record, its lease and its slot renewed (None, and its slot freed, when it is gone);
        with ``claim`` (a request id, JSON), also `claim_call` in the same round trip: the stream's
        number, 0 when the id is in flight already (-1: nothing claimed). One round trip, with the
        claims released since the last one (`release_later`)."""
        keys = [self.key(sid), self.live_key] + ([] if claim is None else [self.key(sid, "calls"), self.key(sid, "streams")])
        words: list[Any] = [*keys, sid, self.ttl_ms, b"" if claim is None else claim, self.worker]
        releases = self._take_releases()
        try:
            if releases:
                async with self.conn.pipeline(transaction=False) as pipe:
                    self._send_releases(pipe, releases)
                    pipe.eval(_RENEW, len(keys), *words)
                    raw, stream = (await pipe.execute())[-1]
            else:
                raw, stream = await self.conn.eval(_RENEW, len(keys), *words)
        except BaseException:
            self._keep_releases(releases)
            raise
        if raw is None:
            return None, -1
        record: dict[str, Any] = orjson.loads(raw)
        return record, int(stream)

    async def update(self, sid: str, **fields: Any) -> bool:
        """Change fields of the record; whether it still exists."""
        raw = await self.conn.get(self.key(sid))
        if raw is None:
            return False
        record = orjson.loads(raw)
        record.update(fields)
        await self.conn.set(self.key(sid), orjson.dumps(record), px=self.ttl_ms)
        return True

    async def delete(self, sid: str) -> None:
        """The session's record and registries, and its slot (its streams expire)."""
        await self.conn.delete(
            self.key(sid), self.key(sid, "calls"), self.key(sid, "out"), self.key(sid, "runs"),
            self.key(sid, "streams"), self.key(sid, "unsent"), self.key(sid, "unsent", "bytes"),
            self.key(sid, "unsent", "signals"),
        )  # fmt: skip
        await self.release_slot(sid)

    # -- requests in flight and the server's requests to the client --------------------------------

    async def claim_call(self, sid: str, field: bytes) -> int | None:
        """Register a request id as in flight here; its stream's number, or None when it is in flight already."""
        stream = await self.conn.eval(
            _CLAIM, 4, self.key(sid), self.live_key, self.key(sid, "calls"), self.key(sid, "streams"),
            sid, self.ttl_ms, field, self.worker,
        )  # fmt: skip
        return int(stream) or None

    async def release_call(self, sid: str, field: bytes) -> None:
        """The request with this id (JSON) is no longer in flight (now: its own round trip)."""
        await self.conn.hdel(self.key(sid, "calls"), field)

    def release_later(self, sid: str, field: bytes) -> None:
        """The request with this id (JSON) was answered: its claim goes with this worker's next round trip
        (the next message's `renew`, or the heartbeat within `HEARTBEAT` s), so that releasing it costs
        none of its own. Until then the id counts as in flight; MCP forbids a client to use it again in
        the session anyway (basic/index.mdx, Requests)."""
        self.releases.append((sid, field))

    def _take_releases(self) -> list[tuple[str, bytes]]:
        releases, self.releases = self.releases, []
        return releases

    def _keep_releases(self, releases: list[tuple[str, bytes]]) -> None:
        """A round trip failed: its releases wait for the next one (the newest `MAX_RELEASES` * 16 at most)."""
        self.releases[:0] = releases
        del self.releases[: max(0, len(self.releases) - MAX_RELEASES * 16)]

    def _send_releases(self, pipe: Any, releases: list[tuple[str, bytes]]) -> None:
        by_session: dict[str, list[bytes]] = {}
        for sid, field in releases:
            by_session.setdefault(sid, []).append(field)
        for sid, fields in by_session.items():
            pipe.hdel(self.key(sid, "calls"), *fields)

    @property
    def releases_due(self) -> bool:
        """Whether enough claims wait to be released that they should go now (`flush_releases`)."""
        return len(self.releases) >= MAX_RELEASES

    async def flush_releases(self) -> None:
        """Send the claims waiting for a round trip now."""
        releases = self._take_releases()
        if not releases:
            return
        try:
            async with self.conn.pipeline(transaction=False) as pipe:
                self._send_releases(pipe, releases)
                await pipe.execute()
        except BaseException:
            self._keep_releases(releases)
            raise

    async def runs_here(self, sid: str, stream: int) -> None:
        """This worker runs the request of ``stream`` (a carrier elsewhere checks it is alive)."""
        async with self.conn.pipeline(transaction=False) as pipe:
            pipe.hset(self.key(sid, "runs"), str(stream), self.worker)
            pipe.pexpire(self.key(sid, "runs"), self.ttl_ms)
            await pipe.execute()

    async def runner(self, sid: str, stream: int) -> str | None:
        """The worker running the request of ``stream``, if registered."""
        worker = await self.conn.hget(self.key(sid, "runs"), str(stream))
        return None if worker is None else text(worker)

    async def call_worker(self, sid: str, field: bytes) -> str | None:
        """The worker running the request with this id (JSON), if any."""
        claim = await self.conn.hget(self.key(sid, "calls"), field)
        return None if claim is None else text(claim).rpartition(" ")[0]

    async def call_of(self, sid: str, worker: str, stream: int) -> bytes | None:
        """The id (JSON) of the request ``worker`` runs on stream ``stream``, if registered."""
        calls = await self.conn.hgetall(self.key(sid, "calls"))
        mine = f"{worker} {stream}"
        found = next((field for field, claim in calls.items() if text(claim) == mine), None)
        return found.encode() if isinstance(found, str) else found

    async def sent_request(self, sid: str, field: bytes) -> None:
        """A request of ours to the client (its id, JSON) went out: this worker waits for its answer."""
        key = self.key(sid, "out")
        async with self.conn.pipeline(transaction=False) as pipe:
            pipe.hset(key, field, self.worker)
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    async def answered(self, sid: str, field: bytes) -> None:
        """Our request with this id (JSON) got its answer: nobody waits for it any more."""
        await self.conn.hdel(self.key(sid, "out"), field)

    async def waiting_worker(self, sid: str, field: bytes) -> str | None:
        """The worker that waits for the answer to our request with this id (JSON), if any."""
        worker = await self.conn.hget(self.key(sid, "out"), field)
        return None if worker is None else text(worker)

    # -- streams ---------------------------------------------------------------------------------

    def stream_key(self, sid: str, stream: int) -> str:
        """The key of the Redis stream holding stream ``stream`` of session ``sid``."""
        return self.key(sid, "s", stream)

    async def has_stream(self, sid: str, stream: int) -> bool:
        """Whether stream ``stream`` of session ``sid`` has events in Redis."""
        return bool(await self.conn.exists(self.stream_key(sid, stream)))

    async def append(self, sid: str, stream: int, data: bytes, final: bool) -> int:
        """Write one event to a stream of the session; its number."""
        number: int = await self.conn.eval(
            _APPEND, 2, self.stream_key(sid, stream), self.key(sid, "n", stream),
            MAX_EVENTS, data, b"1" if final else b"0", self.ttl_ms,
        )  # fmt: skip
        return number

    async def append_final_once(self, sid: str, stream: int, data: bytes) -> None:
        """End a stream with ``data`` unless it was ended so already."""
        await self.conn.eval(
            _APPEND_FINAL_ONCE, 3, self.stream_key(sid, stream), self.key(sid, "n", stream),
            self.key(sid, "ended"), MAX_EVENTS, data, b"1", self.ttl_ms, str(stream),
        )  # fmt: skip

    async def append_notification(
        self, sid: str, data: bytes, change: tuple[str, int], limit: int, *, coalesce: bool = False
    ) -> int:
        """Write a session notification to the standalone stream unless another worker wrote this change
        (or, ``coalesce``: unless an unsent copy of the same bytes is kept); how many unsent were dropped."""
        publisher, number = change
        _, dropped = await self.conn.eval(
            _NOTIFY, 6, self.stream_key(sid, 0), self.key(sid, "n", 0), self.key(sid, "seen", publisher, number),
            self.key(sid, "unsent"), self.key(sid, "unsent", "bytes"), self.key(sid, "unsent", "signals"),
            MAX_EVENTS, data, self.ttl_ms, publisher, _SEEN_MS, limit, self.entry_cost, MAX_UNSENT, b"1" if coalesce else b"0",
        )  # fmt: skip
        return int(dropped)

    async def delivered(self, sid: str, number: int) -> None:
        """The standalone stream's events up to ``number`` are handed to a GET: no longer unsent."""
        await self.conn.eval(
            _DELIVERED, 4, self.key(sid, "sent", 0), self.key(sid, "unsent"), self.key(sid, "unsent", "bytes"),
            self.key(sid, "unsent", "signals"), number, self.ttl_ms,
        )  # fmt: skip

    async def last_delivered(self, sid: str) -> int:
        """The number of the last standalone event a GET carried (0: none)."""
        return int(await self.conn.get(self.key(sid, "sent", 0)) or 0)

    @staticmethod
    async def read(reader: redis.asyncio.Redis, key: str, last_id: str) -> Any:
        """The events of a stream after ``last_id`` (waits up to `POLL_MS` for one)."""
        return await reader.xread({key: last_id}, count=100, block=POLL_MS)
