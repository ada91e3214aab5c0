"""What the OAuth proxy's grant check costs an MCP request, per store (docs/auth-proxy.md, "Cost per request").

Every MCP request that carries a proxy token is checked by `ProxyVerifier`:
the JWT (signature, ``iss``, ``aud``, ``exp``), then the grant behind it is
read from the proxy's store, so that a revoked grant stops its tokens at the
next request on every worker. This bench measures the second part, the one
that depends on the store: ``OAuthProxy.store.get("grant", gid)`` of a grant
made by ``OAuthProxy.new_grant`` (one sealed record opened: a key read,
AES-256-GCM, JSON), on a ``MemoryStore``, an ``SQLiteStore`` (a fresh file)
and a ``RedisStore`` on a real ``redis-server`` (tests/scale/services.py),
one read after another.

    .venv/bin/python bench/proxy_grant.py [--n 5000] [--reps 5] [--stores memory,sqlite,redis] [--json out.json]

Prints µs per grant check, median [min–max] over the repetitions, and the
load average before and after (the figures move with the machine's load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from wiremcp.auth.proxy import OAuthProxy, Upstream  # noqa: E402
from wiremcp.server.storage import KeyValueStore, MemoryStore, RedisStore, SQLiteStore  # noqa: E402

STORES = ("memory", "sqlite", "redis")


class Stores:
    """Makes each kind of store; owns the redis-server the ``redis`` kind needs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.redis: Any = None

    def make(self, kind: str) -> KeyValueStore:
        if kind == "memory":
            return MemoryStore()
        if kind == "sqlite":
            return SQLiteStore(self.directory / f"proxy-{time.monotonic_ns()}.sqlite3")
        if self.redis is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from scale.services import RedisServer

            self.redis = RedisServer()
        return RedisStore(self.redis.url, prefix=f"bench{time.monotonic_ns()}")

    def close(self) -> None:
        if self.redis is not None:
            self.redis.kill()


async def _never_called(tokens: Any) -> Any:  # the bench signs nobody in: grants are made directly
    raise AssertionError("no sign-in in this bench")


def proxy_on(store: KeyValueStore) -> OAuthProxy:
    upstream = Upstream(issuer="https://idp.example.com", authorization_endpoint="https://idp.example.com/authorize",
                        token_endpoint="https://idp.example.com/token", client_id="bench", client_secret="bench-secret",
                        identify=_never_called)
    return OAuthProxy(upstream, issuer="https://mcp.example.com", resource="https://mcp.example.com/mcp",
                      scopes=["notes:read"], store=store, key=b"k" * 32)


async def one_round(store: KeyValueStore, n: int) -> float:
    """µs per grant check over ``n`` reads of one grant, after 100 of warm-up."""
    proxy = proxy_on(store)
    upstream_tokens = {"access_token": "u" * 40, "refresh_token": "r" * 40, "expires_in": 3600,
                       "identity": {"subject": "user-1", "email": "ada@example.com", "roles": ["reader"]}}
    grant_id = await proxy.new_grant("user-1", {"client_id": "client-1", "scopes": ["notes:read"]}, upstream_tokens)
    get = proxy.store.get
    for _ in range(100):
        assert await get("grant", grant_id) is not None
    t0 = time.perf_counter()
    for _ in range(n):
        await get("grant", grant_id)
    elapsed = time.perf_counter() - t0
    close = getattr(store, "close", None) or getattr(store, "aclose", None)
    if close is not None:
        out = close()
        if asyncio.iscoroutine(out):
            await out
    return elapsed / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="grant checks per repetition (default 5000)")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per store (default 5)")
    parser.add_argument("--stores", default=",".join(STORES), help="comma-separated: memory, sqlite, redis")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    kinds = [k for k in args.stores.split(",") if k]
    for kind in kinds:
        if kind not in STORES:
            parser.error(f"unknown store {kind!r}; choose from {', '.join(STORES)}")
    load_before = os.getloadavg()[0]
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="wiremcp-proxy-bench-") as tmp:
        stores = Stores(Path(tmp))
        try:
            for _ in range(args.reps):  # interleaved, so that a moment of load touches every store alike
                for kind in kinds:
                    figures.setdefault(kind, []).append(asyncio.run(one_round(stores.make(kind), args.n)))
        finally:
            stores.close()
    load_after = os.getloadavg()[0]
    print(f"grant check (OAuthProxy.store.get of one grant), {args.n} reads x {args.reps} reps, "
          f"load average {load_before:.2f} -> {load_after:.2f}\n")
    print("| store | µs per grant check, median [min–max] |")
    print("|---|---:|")
    for kind, values in figures.items():
        print(f"| {kind} | {statistics.median(values):.1f} [{min(values):.1f}–{max(values):.1f}] |")
    if args.json:
        Path(args.json).write_text(json.dumps({"n": args.n, "reps": args.reps, "load": [load_before, load_after],
                                               "us_per_check": figures}, indent=2) + "\n")


if __name__ == "__main__":
    main()
