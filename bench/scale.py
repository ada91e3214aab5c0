"""Scale-out: throughput for 1, 2 and 4 worker processes behind nginx, on one Redis (docs/deploy.md).

For each N in ``--workers`` (default 1 2 4) it starts a real redis-server,
N ``wiremcp run bench/fixtures/scale_echo.py --http`` processes sharing it
(``WIREMCP_REDIS_URL``, ``WIREMCP_STATE_KEY``) and nginx with the
configuration of docs/deploy.md (round robin) in front, then measures:

* **tools/call**: modern (2026-07-28) echo calls of 100 B through nginx,
  ``--inflight`` keep-alive connections, one request outstanding on each
  (bench/driver.py's HTTP channel), for ``--duration`` seconds after a
  warm-up: calls per second;
* **Redis round trips per tools/call**: the commands Redis served during
  that window (INFO ``total_commands_processed``, less the INFO calls
  themselves) divided by the calls; the target is zero;
* **fan-out**: ``--listeners`` ``subscriptions/listen`` streams opened
  through nginx (so spread over the workers), then ``--changes`` ``touch``
  calls, each publishing one resource update that every listener asked for:
  notifications delivered per second, from the first call to the last
  notification received, and the Redis commands per change (after one
  unwatched change per worker, so that each worker's one-time connection
  set-up is not counted).

The machine's load matters (bench/README.md says what it was); the figures
are the median of ``--reps`` runs. Prints a Markdown table and, with
``--json``, writes the samples.

    .venv/bin/python bench/scale.py                      # about 2 min
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from driver import HttpChannel, RequestFactory, check_reply, make_payload, modern_http_headers  # noqa: E402
from scale.services import Nginx, RedisServer, Worker  # noqa: E402

TARGET = "bench/fixtures/scale_echo.py"
STATE_KEY = "bench-scale-shared-key-0123456789"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def _calls(port: int, inflight: int, duration: float, warmup: float, redis: RedisServer) -> dict[str, float]:
    payload = make_payload(100)
    factory = RequestFactory("modern", payload)
    chan = HttpChannel("127.0.0.1", port, inflight, modern_http_headers())
    next_id = 1
    errors = 0
    try:
        for _ in range(inflight):
            chan.submit(next_id, factory.body(next_id))
            next_id += 1
        phase_end = time.monotonic() + warmup
        count = 0
        commands = 0
        started = 0.0
        measuring = False
        while True:
            now = time.monotonic()
            if now >= phase_end:
                if measuring:
                    elapsed = now - started
                    commands = redis.commands_processed() - commands - 1  # less this INFO
                    break
                measuring = True
                count = 0
                commands = redis.commands_processed()
                started = time.monotonic()
                phase_end = started + duration
            for req_id, msg, err in chan.poll(0.05):
                problem = err or check_reply(msg, req_id, payload)
                if problem:
                    errors += 1
                    if errors == 1:
                        print(f"  error: {problem}", file=sys.stderr)
                count += 1
                chan.submit(next_id, factory.body(next_id))
                next_id += 1
    finally:
        chan.close()
    return {"calls_per_s": count / elapsed, "redis_per_call": commands / max(count, 1), "errors": errors}


def _post_head(port: int, body: bytes, method: str, name: str | None = None) -> bytes:
    head = [
        "POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
        "Accept: application/json, text/event-stream", "MCP-Protocol-Version: 2026-07-28", f"Mcp-Method: {method}",
    ]
    if name:
        head.append(f"Mcp-Name: {name}")
    head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _touch(caller: socket.socket, port: int, uri: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "touch", "arguments": {"uri": uri}, "_meta": META}}).encode()
    caller.sendall(_post_head(port, body, "tools/call", "touch"))
    reply = b""
    while b'"result"' not in reply:
        reply += caller.recv(65536)


def _fanout(port: int, listeners: int, changes: int, redis: RedisServer, warm: int) -> dict[str, float]:
    uri = "file:///bench/watched"
    sel = selectors.DefaultSelector()
    socks = []
    for i in range(listeners):
        body = json.dumps({
            "jsonrpc": "2.0", "id": i, "method": "subscriptions/listen",
            "params": {"notifications": {"resourceSubscriptions": [uri]}, "_meta": META},
        }).encode()
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(_post_head(port, body, "subscriptions/listen"))
        socks.append(sock)
    acknowledged = 0
    seen = {s.fileno(): b"" for s in socks}
    deadline = time.monotonic() + 30
    while acknowledged < listeners:  # every stream acknowledged before the first change
        for sock in socks:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            while b"subscriptions/acknowledged" not in seen[sock.fileno()]:
                seen[sock.fileno()] += sock.recv(65536)
            acknowledged += 1
    for sock in socks:
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ)
    marker = b"notifications/resources/updated"
    received = 0
    want = listeners * changes
    caller = socket.create_connection(("127.0.0.1", port), timeout=10)
    # a change nobody listens to, once per worker (round robin): each worker's first PUBLISH opens
    # its connection (HELLO), a one-time cost kept out of the per-change count
    for _ in range(warm):
        _touch(caller, port, "file:///bench/warm-up")
    time.sleep(0.5)  # the PUBLISH follows the tool's reply: let the warm-up ones land first
    commands = redis.commands_processed()
    started = time.monotonic()
    for _ in range(changes):  # one change after another, each answered before the next
        _touch(caller, port, uri)
    tails = {s.fileno(): b"" for s in socks}
    deadline = time.monotonic() + 60
    while received < want and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            data = tails[sock.fileno()] + sock.recv(1 << 20)
            received += data.count(marker)
            tails[sock.fileno()] = data[-len(marker):]
    elapsed = time.monotonic() - started
    commands = redis.commands_processed() - commands - 1
    caller.close()
    for sock in socks:
        sock.close()
    sel.close()
    return {
        "notifications_per_s": received / elapsed, "delivered": received, "expected": want,
        "redis_per_change": commands / changes,
    }


def run(n: int, args: argparse.Namespace) -> dict[str, Any]:
    redis = RedisServer()
    workers: list[Worker] = []
    nginx = None
    try:
        env = {"WIREMCP_REDIS_URL": redis.url, "WIREMCP_STATE_KEY": STATE_KEY}
        workers = [Worker(TARGET, env) for _ in range(n)]
        nginx = Nginx([w.port for w in workers])
        calls = [_calls(nginx.port, args.inflight, args.duration, args.warmup, redis) for _ in range(args.reps)]
        fan = [_fanout(nginx.port, args.listeners, args.changes, redis, n) for _ in range(args.reps)]
        return {"workers": n, "calls": calls, "fanout": fan}
    finally:
        if nginx is not None:
            nginx.stop()
        for worker in workers:
            worker.stop()
        redis.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--listeners", type=int, default=100)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = []
    for n in args.workers:
        print(f"{n} worker(s)...", file=sys.stderr, flush=True)
        results.append(run(n, args))
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}\n")
    print("| workers | tools/call per s | Redis commands per tools/call | notifications per s | Redis commands per change |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    failed = False
    for r in results:
        calls = statistics.median(c["calls_per_s"] for c in r["calls"])
        per_call = max(c["redis_per_call"] for c in r["calls"])
        notes = statistics.median(f["notifications_per_s"] for f in r["fanout"])
        per_change = statistics.median(f["redis_per_change"] for f in r["fanout"])
        failed |= any(c["errors"] for c in r["calls"]) or any(f["delivered"] != f["expected"] for f in r["fanout"])
        print(f"| {r['workers']} | {calls:,.0f} | {per_call:.3f} | {notes:,.0f} | {per_change:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if failed:
        print("\nsome runs had errors or missed notifications (see the JSON)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
