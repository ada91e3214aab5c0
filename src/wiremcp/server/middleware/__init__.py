"""Ready-made middleware (docs/middleware.md): rate limiting, response caching, timing, request logs, error handling.

Each is a plain middleware (``async (call, call_next) -> result``, see
`wiremcp.server.Invocation`) registered like your own, so each runs in both
eras and on every transport, around every request a handler serves:

    server = Server("shop", middleware=[
        RequestLog(),          # outermost: logs what the client finally gets, refusals included
        ErrorHandling(),       # masks unexpected exceptions before anything outside it sees them
        Timing(),              # times the work below it
        RateLimit(10, per=1),  # refuses before any work (a cache hit counts as a request)
        ResponseCache(),       # innermost: stores only what the handler returned
    ])

Rules:

* the first registered is the outermost (`wiremcp.server.add_middleware`);
  the order above is the recommended one, and why is in docs/middleware.md;
* nothing here is imported by ``wiremcp`` or ``wiremcp.server``: a server
  that uses none of it loads none of it; the Redis store for rate limiting
  is `wiremcp.backends.redis.rate.RedisRateStore` (the ``[redis]`` extra);
* refusals are exceptions, turned into wire errors in the one place that
  does it (``server/_reply``): `RateLimited` is a ``CallerBusy`` (-32000;
  HTTP 429 with ``Retry-After``).
"""

from __future__ import annotations

from ._cache import ResponseCache
from ._errors import ErrorHandling
from ._keys import caller_key, private_key
from ._observe import RequestLog, Timing
from ._rate import DEFAULT_MAX_KEYS, MemoryRateStore, RateLimit, RateLimited, RateStore

__all__ = [
    "RateLimit",
    "RateLimited",
    "RateStore",
    "MemoryRateStore",
    "DEFAULT_MAX_KEYS",
    "ResponseCache",
    "Timing",
    "RequestLog",
    "ErrorHandling",
    "caller_key",
    "private_key",
]
