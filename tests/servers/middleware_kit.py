"""A server with every ready-made middleware (tests/server/test_ready_middleware.py, tests/transports/test_middleware_kit.py, tests/scale/test_rate_limit_workers.py).

Environment: ``KIT_RATE`` (tools/call per minute per caller, default 3),
``KIT_REDIS_URL`` (the rate limiter's buckets in that Redis, else in memory),
``KIT_SCOPE`` (the lists' ``cacheScope``, default ``public``),
``KIT_REQUEST_LOG`` (a file the request log writes JSON lines to).
The innermost middleware counts the requests that reach the handlers, per
method; the ``reached`` tool returns the counts and this process's id.
"""

from __future__ import annotations

import collections
import json
import logging
import os
from typing import Any

from wiremcp import Server
from wiremcp.jsonrpc import InvalidParams
from wiremcp.server import Invocation, Next
from wiremcp.server.middleware import ErrorHandling, RateLimit, RateStore, RequestLog, ResponseCache, Timing

reached: collections.Counter[str] = collections.Counter()
timings: list[str] = []

store: RateStore | None = None
if os.environ.get("KIT_REDIS_URL"):
    from wiremcp.backends.redis.rate import RedisRateStore

    store = RedisRateStore(os.environ["KIT_REDIS_URL"], prefix="kit")

request_log = logging.getLogger("kit.requests")
if os.environ.get("KIT_REQUEST_LOG"):
    handler = logging.FileHandler(os.environ["KIT_REQUEST_LOG"])
    handler.setFormatter(logging.Formatter("%(message)s"))

    class _Json(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            record.msg, record.args = json.dumps(getattr(record, "mcp", {})), ()
            return True

    handler.addFilter(_Json())
    request_log.addHandler(handler)
    request_log.setLevel(logging.INFO)


async def count(call: Invocation, call_next: Next) -> dict[str, Any]:
    reached[call.method] += 1
    return await call_next(call)


server = Server(
    "middleware-kit",
    version="1.0.0",
    list_ttl_ms=60_000,
    cache_scope=os.environ.get("KIT_SCOPE", "public"),  # type: ignore[arg-type]
    middleware=[
        RequestLog(request_log),
        ErrorHandling({KeyError: lambda exc: InvalidParams(f"Invalid params: no such item {exc}")}),
        Timing(lambda call, ms, error: timings.append(call.method)),
        RateLimit(int(os.environ.get("KIT_RATE", "3")), per=60, methods={"tools/call"}, store=store),
        ResponseCache(),
        count,
    ],
)


@server.tool
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool
def reached_counts() -> dict[str, Any]:
    """The requests that reached the handlers, per method, and this process."""
    return {"pid": os.getpid(), "reached": dict(reached), "timed": len(timings)}


ITEMS = {"apple": "red"}


@server.resource("item://{key}")
def item(key: str) -> str:
    """An item's colour (an unknown key raises KeyError: ErrorHandling maps it to -32602)."""
    return ITEMS[key]


@server.resource("boom://now")
def boom() -> str:
    """Always fails (ErrorHandling masks it: -32603 with a reference)."""
    raise RuntimeError("database password is hunter2")
