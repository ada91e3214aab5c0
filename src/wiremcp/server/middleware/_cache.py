"""`ResponseCache`: results the server marks cacheable (``ttlMs``, ``cacheScope``), answered again without the handler.

Rules kept here (2026-07-28 caching: a result's ``ttlMs`` is how long it
stays fresh, ``cacheScope`` whether it may be shared between callers):

* only a complete result carrying an integer ``ttlMs`` > 0 is stored, for
  that long; an error, an ``input_required`` or a task result, and any result
  without ``ttlMs``, is never stored;
* the key is the method, the params (their ``_meta`` without the per-request
  fields: ``progressToken``, trace context) and the era and protocol version;
  a ``"public"`` result is shared by every caller of the same request;
  anything else (``"private"``, or no ``cacheScope``) is keyed on the caller
  too (`private_key`: the principal, the legacy session, the stdio client) and
  is never stored for a caller that cannot be told apart from others (an
  anonymous HTTP request): a private result never reaches another caller;
* a hit is a fresh copy (decoded from the stored bytes: nothing a later
  layer changes reaches the cache) whose ``ttlMs`` is what is left of it;
* memory is bounded: at most ``max_entries`` results and ``max_bytes``
  bytes in all, keys and encoded results counted (least recently used
  dropped first); an entry larger than ``max_entry_bytes`` is not stored. The cache lives in this process.
"""

from __future__ import annotations

import collections
import time
from typing import Any, Callable, Collection

import orjson

from .._middleware import Invocation, Next
from ._keys import private_key

__all__ = ["ResponseCache"]

#: ``_meta`` fields that change with every request and never change a result.
_PER_REQUEST = frozenset({"progressToken", "traceparent", "tracestate", "baggage"})


class ResponseCache:
    """Middleware: answer a repeated request from a result the server marked cacheable (module docs)."""

    def __init__(
        self,
        *,
        max_entries: int = 1024,
        max_bytes: int = 16 * 1024 * 1024,
        max_entry_bytes: int = 1024 * 1024,
        methods: Collection[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("max_entries", max_entries), ("max_bytes", max_bytes), ("max_entry_bytes", max_entry_bytes)):
            if type(value) is not int or value < 1:
                raise ValueError(f"ResponseCache: {name} is a positive integer, not {value!r}")
        self.max_entries, self.max_bytes, self.max_entry_bytes = max_entries, max_bytes, max_entry_bytes
        #: The methods cached (None: any whose result carries ``ttlMs``).
        self.methods = frozenset(methods) if methods is not None else None
        self._clock = clock
        #: key -> (expires at, encoded result)
        self._entries: collections.OrderedDict[bytes, tuple[float, bytes]] = collections.OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __repr__(self) -> str:
        return f"ResponseCache({len(self._entries)} entries, {self._bytes} bytes)"

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """The encoded bytes kept."""
        return self._bytes

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()
        self._bytes = 0

    async def __call__(self, call: Invocation, call_next: Next) -> dict[str, Any]:
        if self.methods is not None and call.method not in self.methods:
            return await call_next(call)
        request = self._request_key(call)
        private = private_key(call)
        now = self._clock()
        for key in (b"public\x00" + request, None if private is None else private.encode() + b"\x00" + request):
            if key is None:
                continue
            found = self._entries.get(key)
            if found is None:
                continue
            expires, data = found
            if expires <= now:
                self._drop(key)
                continue
            self._entries.move_to_end(key)
            self.hits += 1
            result: dict[str, Any] = orjson.loads(data)
            result["ttlMs"] = max(0, int((expires - now) * 1000))
            return result
        self.misses += 1
        result = await call_next(call)
        self._store(request, private, result)
        return result

    def _request_key(self, call: Invocation) -> bytes:
        params = call.params
        meta = params.get("_meta")
        if type(meta) is dict and not _PER_REQUEST.isdisjoint(meta):
            params = {**params, "_meta": {k: v for k, v in meta.items() if k not in _PER_REQUEST}}
        version = call.meta.protocol_version if call.legacy else None
        return orjson.dumps([call.method, call.legacy, version, params], option=orjson.OPT_SORT_KEYS)

    def _store(self, request: bytes, private: str | None, result: dict[str, Any]) -> None:
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0 or result.get("resultType", "complete") != "complete":
            return
        if result.get("cacheScope") == "public":
            key = b"public\x00" + request
        elif private is not None:
            key = private.encode() + b"\x00" + request
        else:
            return  # a private result for a caller no key tells apart: never stored
        try:
            data = orjson.dumps(result)
        except TypeError:
            return
        if len(key) + len(data) > self.max_entry_bytes:
            return
        self._drop(key)
        self._entries[key] = (self._clock() + ttl / 1000.0, data)
        self._bytes += len(key) + len(data)
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            old_key, (_, old) = self._entries.popitem(last=False)
            self._bytes -= len(old_key) + len(old)

    def _drop(self, key: bytes) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._bytes -= len(key) + len(found[1])
