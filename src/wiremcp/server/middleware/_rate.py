"""`RateLimit`: at most ``rate`` requests per ``per`` seconds for each caller, with a burst.

Rules kept here:

* the caller is `caller_key` (its principal when the request is
  authenticated, else its client address, else its session; or a ``key=``
  function of your own); keys are hashed before they reach a store, so a
  store holds no identity and every key has the same small size; two
  limits sharing a store keep separate buckets (``name=``, by default the
  limit's own settings);
* the algorithm is GCRA (a token bucket kept as one number per caller, the
  "theoretical arrival time"): ``burst`` requests may arrive at once, then one
  every ``per / rate`` seconds. The store decides atomically, so the limit
  holds across every worker sharing it (`RedisRateStore`, one Lua call with
  Redis's own clock);
* a request over the limit is refused before it reaches the handler with
  `RateLimited`: -32000 on the wire, ``data.retryAfterMs`` (when the next
  request will be accepted), and over HTTP **429** with ``Retry-After``
  (a `CallerBusy`: the transport's one error-to-status table,
  ``wiremcp.transports.http.STATUS_BY_CODE``);
* a store that cannot answer (Redis down) refuses the request with
  -32000 (`ServerBusy`: HTTP 503, ``Retry-After``) and logs why: the limit is
  never silently lifted;
* `MemoryRateStore` (one process) keeps at most ``max_keys`` callers, the
  least recently seen dropped first (a dropped caller starts with a full
  bucket); a Redis key expires as soon as its bucket is full again.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import math
import time
from typing import Any, Callable, Collection, Protocol

from .._middleware import Invocation, Next
from ..transport import CallerBusy, ServerBusy
from ._keys import caller_key

__all__ = ["RateLimit", "RateLimited", "RateStore", "MemoryRateStore", "DEFAULT_MAX_KEYS"]

log = logging.getLogger("wiremcp.middleware")

#: Callers a `MemoryRateStore` tracks at most.
DEFAULT_MAX_KEYS = 100_000


class RateStore(Protocol):
    """Where the callers' buckets live: `MemoryRateStore`, `wiremcp.backends.redis.rate.RedisRateStore`."""

    async def acquire(self, key: str, interval_ms: float, burst: int) -> int:
        """Take one request for ``key``: 0 when allowed, else the milliseconds until one is (GCRA)."""
        ...


class RateLimited(CallerBusy):
    """A caller over its rate: -32000 with ``data.retryAfterMs``; HTTP 429 with ``Retry-After``."""

    def __init__(self, retry_after_ms: int, rate: int, per: float) -> None:
        super().__init__(
            f"Rate limit exceeded: at most {rate} requests per {per:g} s for this caller; "
            f"retry after {retry_after_ms} ms",
            {"retryAfterMs": retry_after_ms, "limit": rate, "periodMs": round(per * 1000)},
        )
        self.retry_after_ms = retry_after_ms


def gcra(tat: float | None, now: float, interval_ms: float, burst: int) -> tuple[float | None, int]:
    """One GCRA step: ``(new arrival time or None when refused, milliseconds to wait)``."""
    start = now if tat is None or tat < now else tat
    new = start + interval_ms
    allowed_at = new - burst * interval_ms
    if now < allowed_at:
        return None, max(1, math.ceil(allowed_at - now))
    return new, 0


class MemoryRateStore:
    """Buckets in this process (one worker), at most ``max_keys`` callers (least recently seen dropped)."""

    def __init__(self, max_keys: int = DEFAULT_MAX_KEYS, clock: Callable[[], float] = time.monotonic) -> None:
        if type(max_keys) is not int or max_keys < 1:
            raise ValueError(f"MemoryRateStore: max_keys is a positive integer, not {max_keys!r}")
        self.max_keys = max_keys
        self._clock = clock
        self._tat: collections.OrderedDict[str, float] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._tat)

    async def acquire(self, key: str, interval_ms: float, burst: int) -> int:
        """See `RateStore.acquire`."""
        now = self._clock() * 1000.0
        tats = self._tat
        new, wait = gcra(tats.get(key), now, interval_ms, burst)
        if new is not None:
            tats[key] = new
        if key in tats:
            tats.move_to_end(key)  # refused callers stay tracked too
        while len(tats) > self.max_keys:
            tats.popitem(last=False)
        return wait


class RateLimit:
    """Middleware: at most ``rate`` requests per ``per`` seconds per caller (module docs)."""

    def __init__(
        self,
        rate: int,
        per: float = 1.0,
        *,
        burst: int | None = None,
        store: RateStore | None = None,
        key: Callable[[Invocation], str] = caller_key,
        methods: Collection[str] | None = None,
        name: str | None = None,
    ) -> None:
        if type(rate) is not int or rate < 1:
            raise ValueError(f"RateLimit: rate is a positive integer of requests, not {rate!r}")
        if not isinstance(per, (int, float)) or not per > 0 or math.isinf(per):
            raise ValueError(f"RateLimit: per is a positive number of seconds, not {per!r}")
        burst = rate if burst is None else burst
        if type(burst) is not int or burst < 1:
            raise ValueError(f"RateLimit: burst is a positive integer, not {burst!r}")
        self.rate, self.per, self.burst = rate, float(per), burst
        self.interval_ms = self.per * 1000.0 / rate
        self.store: RateStore = store if store is not None else MemoryRateStore()
        self.key = key
        #: The methods limited (None: every request through the middleware).
        self.methods = frozenset(methods) if methods is not None else None
        if name is None:  # two limits on one store never share buckets unless they are the same limit
            scope = ",".join(sorted(self.methods)) if self.methods is not None else "*"
            name = f"{rate}/{self.per:g}/{burst}/{scope}"
        self._prefix = f"rate:{name}:".encode()

    def __repr__(self) -> str:
        return f"RateLimit({self.rate}, per={self.per:g}, burst={self.burst}, store={type(self.store).__name__})"

    async def __call__(self, call: Invocation, call_next: Next) -> dict[str, Any]:
        if self.methods is not None and call.method not in self.methods:
            return await call_next(call)
        digest = hashlib.blake2b(self._prefix + self.key(call).encode(), digest_size=16).hexdigest()
        try:
            wait = await self.store.acquire(digest, self.interval_ms, self.burst)
        except Exception as exc:
            log.error("rate limit store %r failed (%s): request %r refused", self.store, exc, call.method)
            raise ServerBusy(
                "Server busy: the rate limit cannot be checked right now (its store is unreachable); try again later"
            ) from exc
        if wait:
            raise RateLimited(wait, self.rate, self.per)
        return await call_next(call)
