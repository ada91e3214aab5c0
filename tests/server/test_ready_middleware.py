"""Unit tests of the ready-made middleware (wiremcp.server.middleware): each rule of its module docs.

The end-to-end tests are tests/transports/test_middleware_kit.py (stdio, HTTP)
and tests/scale/test_rate_limit_workers.py (two workers on one redis-server).
Here a real `Server` handles decoded requests in process; an authenticated
caller is the token object the resource server would put in ``current_auth``.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
from typing import Any

import orjson
import pytest

from conftest import request
from wiremcp import Server
from wiremcp.auth.server import AccessToken
from wiremcp.jsonrpc import InvalidParams, JSONRPCError, Request
from wiremcp.server import Invocation, Next
from wiremcp.server.middleware import (
    ErrorHandling,
    MemoryRateStore,
    RateLimit,
    RateLimited,
    RequestLog,
    ResponseCache,
    Timing,
    caller_key,
    private_key,
)
from wiremcp.server.transport import CALLER_BUSY, CallerBusy, current_auth, current_headers, reply_failed


def token(subject: str) -> AccessToken:
    """A verified token, as the resource server puts it in ``current_auth``."""
    return AccessToken(subject, "app", frozenset(), {"iss": "https://as.example", "sub": subject})


async def ask(server: Server, message: dict[str, Any], auth: Any = None) -> dict[str, Any]:
    reset = current_auth.set(auth)
    try:
        out = server.handle(Request(message["id"], message["method"], message["params"]))
        result: dict[str, Any] = out if type(out) is dict else await out  # type: ignore[misc]
        return result
    except JSONRPCError as exc:
        return {"error": exc.to_error()}
    finally:
        current_auth.reset(reset)


def tool_call(id_: int, name: str = "echo", **arguments: Any) -> dict[str, Any]:
    return request(id_, "tools/call", {"name": name, "arguments": arguments or {"text": "x"}})


def make(*middleware: Any, **options: Any) -> Server:
    server = Server("kit", middleware=list(middleware), **options)

    @server.tool
    def echo(text: str) -> str:
        return text

    return server


# -- RateLimit ---------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_gcra_burst_then_one_per_interval() -> None:
    clock = Clock()
    store = MemoryRateStore(clock=clock)

    async def run() -> list[int]:
        return [await store.acquire("k", 1000.0, 2) for _ in range(3)]

    assert asyncio.run(run()) == [0, 0, 1000]  # a burst of 2, then wait one interval
    clock.now += 0.5
    assert asyncio.run(store.acquire("k", 1000.0, 2)) == 500
    clock.now += 0.5
    assert asyncio.run(store.acquire("k", 1000.0, 2)) == 0
    assert asyncio.run(store.acquire("other", 1000.0, 2)) == 0  # every key its own bucket


def test_memory_store_is_bounded_least_recently_seen_dropped() -> None:
    store = MemoryRateStore(max_keys=3)

    async def run() -> None:
        for key in "abcd":
            await store.acquire(key, 1000.0, 1)

    asyncio.run(run())
    assert len(store) == 3
    assert asyncio.run(store.acquire("a", 1000.0, 1)) == 0  # dropped: a full bucket again
    assert asyncio.run(store.acquire("d", 1000.0, 1)) > 0  # kept: still limited


def test_rate_limit_per_principal_then_refused_with_retry_hint() -> None:
    server = make(RateLimit(2, per=60))

    async def run() -> list[dict[str, Any]]:
        return [await ask(server, tool_call(i), token("ada")) for i in range(3)] + [
            await ask(server, tool_call(9), token("bob"))
        ]

    *ada, bob = asyncio.run(run())
    assert [("error" in reply) for reply in ada] == [False, False, True]
    assert ada[2]["error"]["code"] == -32000 and 29_000 < ada[2]["error"]["data"]["retryAfterMs"] <= 30_000
    assert "error" not in bob  # another principal, its own bucket


def test_rate_limited_is_a_caller_busy_so_http_answers_429() -> None:
    refusal = RateLimited(1500, 10, 1.0)
    assert isinstance(refusal, CallerBusy)
    line, code = reply_failed(7, refusal)
    assert code == CALLER_BUSY  # STATUS_BY_CODE: 429, with Retry-After
    assert orjson.loads(line)["error"] == {
        "code": -32000,
        "message": "Rate limit exceeded: at most 10 requests per 1 s for this caller; retry after 1500 ms",
        "data": {"retryAfterMs": 1500, "limit": 10, "periodMs": 1000},
    }


def test_rate_limit_only_its_methods_and_a_failing_store_refuses() -> None:
    class Down:
        async def acquire(self, key: str, interval_ms: float, burst: int) -> int:
            raise ConnectionError("refused")

    server = make(RateLimit(1, store=Down(), methods={"tools/call"}))
    listed = asyncio.run(ask(server, request(1, "tools/list")))
    assert "tools" in listed
    refused = asyncio.run(ask(server, tool_call(2)))
    assert refused["error"]["code"] == -32000 and "rate limit cannot be checked" in refused["error"]["message"]


@pytest.mark.parametrize("bad", [{"rate": 0}, {"rate": 1.5}, {"rate": 1, "per": 0}, {"rate": 1, "burst": 0}])
def test_rate_limit_settings_are_checked(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        RateLimit(**bad)


# -- keys -----------------------------------------------------------------------------------


def test_keys_principal_else_local_on_stdio() -> None:
    server = make()
    call = Invocation(Request(1, "tools/list", {}), {}, None, server, None)
    assert caller_key(call) == private_key(call) == "local"
    reset = current_auth.set(token("ada"))
    try:
        assert caller_key(call) == private_key(call) == "principal https://as.example\x00ada\x00app"
    finally:
        current_auth.reset(reset)


def test_http_without_an_address_is_one_anonymous_caller_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    server = make()
    call = Invocation(Request(1, "tools/list", {}), {}, None, server, None)
    reset = current_headers.set({b"host": b"127.0.0.1"})
    try:
        with caplog.at_level(logging.WARNING, "wiremcp.middleware"):
            assert caller_key(call) == "address "
        assert private_key(call) is None  # never a private cache entry for it
    finally:
        current_headers.reset(reset)
    assert any("without its client's address" in record.getMessage() for record in caplog.records)


# -- ResponseCache --------------------------------------------------------------------------


def counting(server_seen: list[str]) -> Any:
    async def count(call: Invocation, call_next: Next) -> dict[str, Any]:
        server_seen.append(call.method)
        return await call_next(call)

    return count


def test_public_result_is_shared_and_ttl_counts_down() -> None:
    seen: list[str] = []
    clock = Clock()
    cache = ResponseCache(clock=clock)
    server = make(cache, counting(seen), list_ttl_ms=10_000)
    first = asyncio.run(ask(server, request(1, "tools/list"), token("ada")))
    clock.now += 4
    second = asyncio.run(ask(server, request(2, "tools/list"), token("bob")))
    assert seen == ["tools/list"] and second["ttlMs"] == 6000 and second["tools"] == first["tools"]
    clock.now += 6
    asyncio.run(ask(server, request(3, "tools/list")))
    assert seen == ["tools/list", "tools/list"]  # expired: the handler again
    assert cache.hits == 1 and cache.misses == 2


def test_private_result_is_never_shared_between_callers() -> None:
    seen: list[str] = []
    server = make(ResponseCache(), counting(seen), cache_scope="private")
    asyncio.run(ask(server, request(1, "tools/list"), token("ada")))
    asyncio.run(ask(server, request(2, "tools/list"), token("bob")))
    assert seen == ["tools/list", "tools/list"]
    asyncio.run(ask(server, request(3, "tools/list"), token("ada")))
    assert seen == ["tools/list", "tools/list"]  # ada's own result, from the cache


def test_results_without_ttl_and_errors_are_not_stored() -> None:
    seen: list[str] = []
    server = make(ResponseCache(), counting(seen))
    for i in range(2):
        asyncio.run(ask(server, tool_call(i)))
        asyncio.run(ask(server, tool_call(10 + i, "missing")))
    assert seen == ["tools/call"] * 4


def test_a_hit_is_a_copy_and_per_request_meta_does_not_split_the_key() -> None:
    server = make(ResponseCache())
    first = asyncio.run(ask(server, request(1, "tools/list")))
    first["tools"].clear()
    meta = {**request(0, "x")["params"]["_meta"], "progressToken": "p-1"}
    second = asyncio.run(ask(server, request(2, "tools/list", meta=meta)))
    assert [tool["name"] for tool in second["tools"]] == ["echo"]


def test_cache_memory_is_bounded() -> None:
    cache = ResponseCache(max_entries=2, max_bytes=10_000)
    server = make(cache, page_size=1)
    for i in range(5):
        server.add_tool(lambda: "x", name=f"t{i}")
    cursor = None

    async def walk() -> None:
        nonlocal cursor
        for i in range(5):
            params = {} if cursor is None else {"cursor": cursor}
            cursor = (await ask(server, request(i, "tools/list", params))).get("nextCursor")

    asyncio.run(walk())
    assert len(cache) == 2 and 0 < cache.size_bytes <= 10_000
    small = ResponseCache(max_entry_bytes=10)
    asyncio.run(ask(make(small), request(1, "tools/list")))
    assert len(small) == 0  # larger than an entry may be: not stored


# -- ErrorHandling, Timing, RequestLog -------------------------------------------------------


def failing(exc: BaseException) -> Any:
    async def fail(call: Invocation, call_next: Next) -> dict[str, Any]:
        raise exc

    return fail


def test_error_handling_maps_masks_and_passes_protocol_errors(caplog: pytest.LogCaptureFixture) -> None:
    mapping = {LookupError: lambda exc: InvalidParams(f"Invalid params: {exc}")}
    mapped = asyncio.run(ask(make(ErrorHandling(mapping), failing(KeyError("k"))), tool_call(1)))
    assert mapped["error"] == {"code": -32602, "message": "Invalid params: 'k'"}
    with caplog.at_level(logging.ERROR, "wiremcp.errors"):
        masked = asyncio.run(ask(make(ErrorHandling(), failing(RuntimeError("secret dsn"))), tool_call(2)))
    ref = masked["error"]["data"]["ref"]
    assert masked["error"]["code"] == -32603 and "secret" not in masked["error"]["message"] and ref in masked["error"]["message"]
    assert any(ref in record.getMessage() and record.exc_info for record in caplog.records)
    kept = asyncio.run(ask(make(ErrorHandling(mapping), failing(InvalidParams("Invalid params: mine"))), tool_call(3)))
    assert kept["error"] == {"code": -32602, "message": "Invalid params: mine"}


def test_timing_and_request_log_see_results_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    timed: list[tuple[str, bool]] = []
    server = make(
        RequestLog(), Timing(lambda call, ms, error: timed.append((call.method, error is None))), RateLimit(1, per=60)
    )
    with caplog.at_level(logging.INFO, "wiremcp.requests"):
        asyncio.run(ask(server, tool_call(1)))
        asyncio.run(ask(server, tool_call(2)))
    assert timed == [("tools/call", True), ("tools/call", False)]
    fields = [record.mcp for record in caplog.records if hasattr(record, "mcp")]  # type: ignore[attr-defined]
    assert [(f["id"], f["outcome"], f["code"], f["target"]) for f in fields] == [(1, "result", None, "echo"), (2, "error", -32000, "echo")]
    assert "params" not in fields[0]  # arguments may hold secrets: not logged unless asked
    assert caplog.records[-1].levelno == logging.WARNING


# -- zero cost when unused --------------------------------------------------------------------


@pytest.mark.slow
def test_a_stdio_server_without_it_loads_none_of_it() -> None:
    program = textwrap.dedent(
        """
        import sys, wiremcp, wiremcp.transports.stdio, wiremcp.cli._run
        from wiremcp.jsonrpc import Request
        server = wiremcp.Server("plain")
        server.add_tool(lambda: "x", name="x")
        server.handle(Request(1, "tools/list", {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}))
        print(sorted(m for m in sys.modules if m.startswith(("wiremcp.server.middleware", "wiremcp.backends.redis"))))
        """
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_two_limits_on_one_store_keep_separate_buckets_and_the_log_cannot_be_forged(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryRateStore()
    server = make(RequestLog(), RateLimit(1, per=60, store=store), RateLimit(5, per=60, store=store))
    with caplog.at_level(logging.INFO, "wiremcp.requests"):
        assert "error" not in asyncio.run(ask(server, tool_call(1)))
        asyncio.run(ask(server, request(2, "resources/read", {"uri": "x://a\nmcp request method=forged"})))
    assert len(store) == 2
    assert all("\n" not in record.getMessage() for record in caplog.records)
