"""`RedisStore`: the key-value store (`_storage.KeyValueStore`) in Redis, shared by every worker.

A server on a Redis backend (``WIREMCP_REDIS_URL``, docs/deploy.md) keeps
``server.storage`` here, so ``ctx.session_state`` set on one worker is read
on another. Each key is ``{prefix}:kv:{key}`` holding the value's JSON; a TTL
is Redis's own (``SET ... PX``), on Redis's clock. `keys` walks the
keyspace with ``SCAN MATCH`` (the prefix's glob characters escaped), sorts
and cuts to ``limit``. The client is the started backend's; a store used
without a started backend (or built from a URL) opens a client of its own,
which `close` closes. A Redis error becomes `StorageError` with what redis-py
said.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any, Awaitable, TypeVar

from ..backends import BackendUnavailable
from ._storage import MAX_LIST, MAX_VALUE_BYTES, StorageError, check_key, check_limit, check_prefix, check_ttl, decode, encode

if TYPE_CHECKING:
    import redis.asyncio

    from ..backends.redis import RedisBackend

__all__ = ["RedisStore"]

T = TypeVar("T")
_GLOB = str.maketrans({c: "\\" + c for c in "*?[]\\"})


class RedisStore:
    """A `KeyValueStore` in Redis: ``RedisStore(backend)`` shares the backend's connection; ``RedisStore("redis://...")`` has its own."""

    def __init__(self, where: RedisBackend | str, *, prefix: str | None = None, max_value_bytes: int = MAX_VALUE_BYTES) -> None:
        from ..backends.redis import DEFAULT_PREFIX, RedisBackend, redacted

        if isinstance(where, RedisBackend):
            self.backend: RedisBackend | None = where
            self.url = where.url
            base = where.prefix
        else:
            if urllib.parse.urlsplit(where).scheme not in ("redis", "rediss", "unix"):
                raise ValueError(f"{redacted(where)!r} is not a Redis URL (redis://, rediss:// or unix://)")
            self.backend, self.url, base = None, where, DEFAULT_PREFIX
        self.prefix = prefix if prefix is not None else base
        self.max_value_bytes = max_value_bytes
        self._own: redis.asyncio.Redis | None = None

    def __repr__(self) -> str:
        from ..backends.redis import redacted

        return f"RedisStore({redacted(self.url)!r}, prefix={self.prefix!r})"

    def _client(self) -> redis.asyncio.Redis:
        if self.backend is not None:
            try:
                return self.backend.client
            except BackendUnavailable:
                pass
        if self._own is None:
            import redis.asyncio

            self._own = redis.asyncio.Redis.from_url(self.url)
        return self._own

    def _key(self, key: str) -> str:
        return f"{self.prefix}:kv:{key}"

    async def _call(self, what: Awaitable[T]) -> T:
        import redis.exceptions

        try:
            return await what
        except (redis.exceptions.RedisError, OSError) as exc:
            raise StorageError(f"the store {self!r} failed: {exc}") from exc

    async def get(self, key: str, default: Any = None) -> Any:
        """See `KeyValueStore.get`."""
        data = await self._call(self._client().get(self._key(check_key(key))))
        return default if data is None else decode(data)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """See `KeyValueStore.set`."""
        check_key(key)
        seconds = check_ttl(ttl)
        data = encode(value, self.max_value_bytes)
        px = None if seconds is None else max(1, round(seconds * 1000))
        await self._call(self._client().set(self._key(key), data, px=px))

    async def delete(self, key: str) -> bool:
        """See `KeyValueStore.delete`."""
        return bool(await self._call(self._client().delete(self._key(check_key(key)))))

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """See `KeyValueStore.keys` (a ``SCAN`` of the keyspace: cost grows with the keys Redis holds)."""
        check_prefix(prefix)
        check_limit(limit)
        head = self._key("")
        pattern = (head + prefix).translate(_GLOB) + "*"

        async def scan() -> list[str]:
            found: set[str] = set()
            async for raw in self._client().scan_iter(match=pattern, count=500):
                found.add(raw.decode() if isinstance(raw, bytes) else str(raw))
            return sorted(k[len(head):] for k in found)[:limit]

        return await self._call(scan())

    async def close(self) -> None:
        """Close the client of its own, if it opened one (the backend's stays open)."""
        client, self._own = self._own, None
        if client is not None:
            await client.aclose()
