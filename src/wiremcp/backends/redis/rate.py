"""`RedisRateStore`: the rate limiter's buckets in Redis, shared by every worker (``pip install 'wiremcp[redis]'``).

Rules kept here:

* one Lua call per request decides and records atomically (GCRA, the same
  step as `wiremcp.server.middleware.MemoryRateStore`), on Redis's own
  clock (``TIME``): workers whose clocks differ still share one limit;
* a key is ``{prefix}:rate:{hashed caller}`` and expires as soon as its
  bucket is full again: Redis holds only the callers seen within one burst
  period;
* the client connects on first use, in the event loop that serves; a
  failure raises (redis-py's error), and the middleware refuses the request
  with -32000 rather than lifting the limit.

This module sits in ``backends``: it imports nothing of the server.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any

from . import CONNECT_TIMEOUT, DEFAULT_PREFIX, redacted

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["RedisRateStore"]

#: KEYS[1] the caller's arrival time (ms); ARGV[1] the interval (ms), ARGV[2] the burst.
#: Returns 0 (allowed, recorded) or the milliseconds until a request is allowed.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new = tat + interval
local allowed_at = new - burst * interval
if now < allowed_at then
  return math.max(1, math.ceil(allowed_at - now))
end
redis.call('SET', KEYS[1], string.format('%.3f', new), 'PX', math.max(1, math.ceil(new - now)))
return 0
"""


class RedisRateStore:
    """A `RateStore` in Redis: ``RateLimit(10, store=RedisRateStore("redis://host:6379/0"))``."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX) -> None:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            raise RuntimeError("RedisRateStore needs redis-py: pip install 'wiremcp[redis]'") from None
        if urllib.parse.urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"{redacted(url)!r} is not a Redis URL (redis://, rediss:// or unix://)")
        self.url = url
        self.prefix = prefix
        self._client: redis.asyncio.Redis | None = None
        self._script: Any = None

    def __repr__(self) -> str:
        return f"RedisRateStore({redacted(self.url)!r}, prefix={self.prefix!r})"

    async def acquire(self, key: str, interval_ms: float, burst: int) -> int:
        """See `wiremcp.server.middleware.RateStore.acquire`."""
        script = self._script
        if script is None:
            import redis.asyncio

            self._client = redis.asyncio.Redis.from_url(
                self.url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT
            )
            script = self._script = self._client.register_script(_ACQUIRE)
        wait = await script(keys=[f"{self.prefix}:rate:{key}"], args=[repr(float(interval_ms)), burst])
        return int(wait)

    async def aclose(self) -> None:
        """Close the connection (a later `acquire` opens a new one)."""
        client, self._client, self._script = self._client, None, None
        if client is not None:
            await client.aclose()
