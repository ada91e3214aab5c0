"""The key-value store port (`KeyValueStore`) and its memory adapter: what ``server.storage`` and ``ctx.session_state`` sit on.

A server that never touches ``server.storage``, ``ctx.session_state`` or
``ctx.request_state`` never imports this module (tests/server/test_lazy_loading.py).

The contract every adapter keeps (memory here, SQLite `_storage_sqlite`,
Redis `_storage_redis`; docs/state.md):

* ``get(key, default=None)``: the value stored under ``key``, or ``default``
  when there is none or its TTL has elapsed (an expired key is never read);
* ``set(key, value, ttl=None)``: store ``value`` (a JSON value: dict with
  string keys, list, str, int, float, bool, None), replacing any; ``ttl`` in
  seconds (> 0) makes it expire, None keeps it until deleted;
* ``delete(key)``: whether something was deleted;
* ``keys(prefix="", limit=...)``: the live keys starting with ``prefix``,
  sorted, at most ``limit`` (`MAX_LIST`);
* ``close()``: release connections, threads, files (a store used again
  opens them anew).

Bounds, the same on every adapter, checked before anything is written
(`check_key`, `encode`): a key is a non-empty string of at most
`MAX_KEY_BYTES` UTF-8 bytes without control characters (`InvalidKey`); a
value encodes to at most the store's ``max_value_bytes`` (default
`MAX_VALUE_BYTES`; `ValueTooLarge`); a value that is not JSON is a
`TypeError`. The memory store also holds at most ``max_keys`` keys and
``max_bytes`` bytes of values (`StorageFull` once full, after expired keys
are dropped). A store that fails (a file, a connection) raises
`StorageError` naming it.
"""

from __future__ import annotations

import heapq
import time
from typing import Any, Callable, Protocol, runtime_checkable

import orjson

__all__ = [
    "KeyValueStore",
    "MemoryStore",
    "StorageError",
    "StorageFull",
    "InvalidKey",
    "ValueTooLarge",
    "MAX_KEY_BYTES",
    "MAX_VALUE_BYTES",
    "MAX_LIST",
    "check_key",
    "encode",
    "decode",
    "check_ttl",
]

#: The longest key, in UTF-8 bytes (namespaces included).
MAX_KEY_BYTES = 512
#: The largest value by default, encoded as JSON, in bytes.
MAX_VALUE_BYTES = 1024 * 1024
#: The most keys `KeyValueStore.keys` returns at once.
MAX_LIST = 1000
#: The memory store's defaults: keys held and bytes of values held.
DEFAULT_MAX_KEYS = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

# Refuse what orjson would turn into JSON silently (a dataclass, a datetime, a str subclass):
# a value reads back as it was written, or is refused.
_STRICT = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


class StorageError(RuntimeError):
    """The store failed (its file, its connection); the message names the store and the cause."""


class StorageFull(StorageError):
    """A bounded store holds as many keys, or bytes, as it may."""


class InvalidKey(ValueError):
    """A key that is not a non-empty string of at most `MAX_KEY_BYTES` bytes without control characters."""


class ValueTooLarge(ValueError):
    """A value whose JSON is larger than the store allows."""


@runtime_checkable
class KeyValueStore(Protocol):
    """Where a server keeps small JSON values by key (see the module docs for the contract)."""

    async def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when there is none (or it expired)."""
        ...

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value`` under ``key``; ``ttl`` seconds until it expires (None: never)."""
        ...

    async def delete(self, key: str) -> bool:
        """Remove ``key``; whether it was there."""
        ...

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """The live keys starting with ``prefix``, sorted, at most ``limit``."""
        ...

    async def close(self) -> None:
        """Release what the store holds open."""
        ...


def check_key(key: Any) -> str:
    """``key`` when it is a valid key (see the module docs); InvalidKey otherwise."""
    if type(key) is not str or not key:
        raise InvalidKey(f"a storage key is a non-empty string, not {key!r}")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise InvalidKey(f"a storage key is at most {MAX_KEY_BYTES} bytes (UTF-8); this one starts {key[:40]!r}")
    if not key.isprintable():
        raise InvalidKey(f"a storage key holds no control characters: {key!r}")
    return key


def check_prefix(prefix: Any) -> str:
    if type(prefix) is not str:
        raise InvalidKey(f"a key prefix is a string, not {prefix!r}")
    return prefix


def check_ttl(ttl: Any) -> float | None:
    """``ttl`` in seconds (a positive number) or None; ValueError otherwise."""
    if ttl is None:
        return None
    if type(ttl) not in (int, float) or not ttl > 0 or ttl == float("inf"):
        raise ValueError(f"ttl is a positive number of seconds (or None: no expiry), not {ttl!r}")
    return float(ttl)


def check_limit(limit: Any) -> int:
    if type(limit) is not int or not 1 <= limit <= MAX_LIST:
        raise ValueError(f"limit is an integer from 1 to {MAX_LIST}, not {limit!r}")
    return limit


def encode(value: Any, max_bytes: int = MAX_VALUE_BYTES) -> bytes:
    """The JSON of ``value``; TypeError when it is not a JSON value, ValueTooLarge above ``max_bytes``."""
    try:
        data = orjson.dumps(value, option=_STRICT)
    except orjson.JSONEncodeError as exc:
        raise TypeError(f"a stored value is JSON (dict with str keys, list, str, int, float, bool, None): {exc}") from None
    if len(data) > max_bytes:
        raise ValueTooLarge(f"the value is {len(data)} bytes as JSON, above the store's limit of {max_bytes}")
    return data


def decode(data: bytes | str) -> Any:
    return orjson.loads(data)


class MemoryStore:
    """A `KeyValueStore` in this process, bounded (``max_keys``, ``max_bytes``): state of one worker only."""

    def __init__(
        self,
        *,
        max_keys: int = DEFAULT_MAX_KEYS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_value_bytes: int = MAX_VALUE_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_keys < 1 or max_bytes < 1 or max_value_bytes < 1:
            raise ValueError("max_keys, max_bytes and max_value_bytes are positive")
        self.max_keys, self.max_bytes, self.max_value_bytes = max_keys, max_bytes, max_value_bytes
        #: key -> (JSON, when it expires on the monotonic clock or None)
        self._data: dict[str, tuple[bytes, float | None]] = {}
        self._expiry: list[tuple[float, str]] = []  # a heap; entries may be stale (checked against _data)
        self._bytes = 0
        self._clock = clock

    def __repr__(self) -> str:
        return f"MemoryStore(max_keys={self.max_keys}, max_bytes={self.max_bytes})"

    def _drop_expired(self, now: float) -> None:
        heap, data = self._expiry, self._data
        while heap and heap[0][0] <= now:
            when, key = heapq.heappop(heap)
            held = data.get(key)
            if held is not None and held[1] == when:
                self._remove(key)

    def _remove(self, key: str) -> bool:
        held = self._data.pop(key, None)
        if held is None:
            return False
        self._bytes -= len(held[0])
        return True

    def _live(self, key: str, now: float) -> bytes | None:
        held = self._data.get(key)
        if held is None:
            return None
        if held[1] is not None and held[1] <= now:
            self._remove(key)
            return None
        return held[0]

    async def get(self, key: str, default: Any = None) -> Any:
        """See `KeyValueStore.get`."""
        data = self._live(check_key(key), self._clock())
        return default if data is None else decode(data)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """See `KeyValueStore.set`; StorageFull when the store is full."""
        check_key(key)
        seconds = check_ttl(ttl)
        data = encode(value, self.max_value_bytes)
        now = self._clock()
        self._drop_expired(now)
        old = self._data.get(key)
        grows = len(data) - (len(old[0]) if old is not None else 0)
        if old is None and len(self._data) >= self.max_keys:
            raise StorageFull(f"the memory store holds {len(self._data)} keys, its limit (max_keys)")
        if self._bytes + grows > self.max_bytes:
            raise StorageFull(f"the memory store holds {self._bytes} bytes; this value would pass its limit of {self.max_bytes}")
        when = None if seconds is None else now + seconds
        self._data[key] = (data, when)
        self._bytes += grows
        if when is not None:
            heapq.heappush(self._expiry, (when, key))
            if len(self._expiry) > 2 * len(self._data) + 64:  # stale entries (keys set again, deleted): rebuild
                self._expiry = [(w, k) for k, (_, w) in self._data.items() if w is not None]
                heapq.heapify(self._expiry)

    async def delete(self, key: str) -> bool:
        """See `KeyValueStore.delete`."""
        check_key(key)
        live = self._live(key, self._clock()) is not None
        self._remove(key)
        return live

    async def keys(self, prefix: str = "", *, limit: int = MAX_LIST) -> list[str]:
        """See `KeyValueStore.keys`."""
        check_prefix(prefix)
        check_limit(limit)
        self._drop_expired(self._clock())
        return sorted(k for k in self._data if k.startswith(prefix))[:limit]

    async def close(self) -> None:
        """Nothing to release (the values stay: the store is this process's)."""
        return None
