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

* **per-request costs** (bench/scale_costs.py): the CPU (utime+stime from
  /proc over the window) of all the workers, of nginx, of Redis and of this
  driver, per tools/call; the Redis commands and round trips (INFO
  ``total_reads_processed``: a pipeline or script sent in one write is one
  read) per call; and the same per message of one **legacy** (2025-11-25)
  session through nginx (``--legacy-messages`` tools/call, one at a time,
  after each worker built its copy of the session), with the commands of its
  handshake. From the 1-worker costs, a projection to N cores and N hosts.
  ``--per-worker`` gives each worker ``--inflight`` connections (N workers,
  N times as many), so that each sees the same load; ``--pm-qos both`` (the
  default) takes the tools/call and legacy windows with and without the PM
  QoS request (bench/pmqos.py).

* **at equal load per worker** (bench/scale_paced.py): ``--rate R`` (default
  1,000) adds open-loop windows, tools/call sent on a fixed schedule at R per
  second per worker (N workers: N times R in all), below saturation, so that
  1 and 2 workers are compared at the same load each: the worker CPU (and its
  user-space part) per call, the rate achieved and how late the schedule fell.
  The closed loop saturates a small machine, where each of N workers gets
  1/N of the calls and pays more per call for it (fewer per wake-up).
* **instructions** (``--instr-calls K``, off by default: about 3 min): the
  workers under callgrind behind nginx on Redis, K calls each at
  ``--instr-rate`` per second per worker, counted between two
  ``callgrind_control`` dumps taken with every worker idle: user-space
  instructions per call, which do not depend on the machine's load.

The machine's load matters (bench/README.md says what it was); the figures
are the median of ``--reps`` runs. Prints a Markdown table and, with
``--json``, writes the samples.

    .venv/bin/python bench/scale.py                      # about 3 min
    .venv/bin/python bench/scale.py --workers 1 2 --per-worker --pm-qos both --instr-calls 200   # the "no coordination cost" check
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

import http.client  # noqa: E402

import pmqos  # noqa: E402
from driver import (  # noqa: E402
    INITIALIZED_BODY, HttpChannel, RequestFactory, check_reply, cpu_seconds, decode_http_reply, initialize_body,
    make_payload, modern_http_headers, process_tree,
)
from scale.services import Nginx, RedisServer, Worker, stop_deployment  # noqa: E402
from scale_costs import projection, table  # noqa: E402
from scale_paced import instructions, paced  # noqa: E402

TARGET = "bench/fixtures/scale_echo.py"
STATE_KEY = "bench-scale-shared-key-0123456789"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def _redis_stats(redis: RedisServer) -> tuple[int, int]:
    """Redis's commands served and read events processed (INFO stats): commands, and round trips.

    A read event is one batch of bytes from one client: a pipeline or a script
    sent in one write is one read, so this counts round trips, where the
    commands count also counts every command a Lua script runs.
    """
    with socket.create_connection(("127.0.0.1", redis.port), timeout=2) as sock:
        sock.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
        data = b""
        while b"total_reads_processed" not in data or not data.endswith(b"\r\n"):
            data += sock.recv(65536)
    fields = dict(line.split(b":", 1) for line in data.split(b"\r\n") if b":" in line)
    return int(fields[b"total_commands_processed"]), int(fields[b"total_reads_processed"])


def _user_seconds(pids: list[int]) -> float:
    """utime (+cutime) summed over ``pids``: the user-space part of `driver.cpu_seconds`."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                rest = f.read().rsplit(b") ", 1)[1].split()
        except OSError:
            continue
        ticks += int(rest[11]) + int(rest[13])  # fields 14 and 16 of stat(5)
    return ticks / os.sysconf("SC_CLK_TCK")


class Meter:
    """CPU seconds (utime+stime from /proc) of the workers (and their utime alone), nginx, Redis and this driver, at one instant."""

    def __init__(self, workers: list[Worker], nginx: Nginx, redis: RedisServer) -> None:
        self.groups = {"workers": [w.proc.pid for w in workers], "nginx": [nginx.proc.pid], "redis": [redis.proc.pid]}

    def read(self) -> dict[str, float]:
        out = {name: cpu_seconds([p for root in roots for p in process_tree(root)]) for name, roots in self.groups.items()}
        out["workers_user"] = _user_seconds([p for root in self.groups["workers"] for p in process_tree(root)])
        out["driver"] = time.process_time()
        return out

    @staticmethod
    def per(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
        """µs of CPU per operation for each group."""
        return {f"{k}_cpu_us": (after[k] - before[k]) / max(n, 1) * 1e6 for k in before}


def _calls(port: int, inflight: int, duration: float, warmup: float, redis: RedisServer, meter: Meter) -> dict[str, float]:
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
        commands = trips = 0
        started = 0.0
        measuring = False
        while True:
            now = time.monotonic()
            if now >= phase_end:
                if measuring:
                    elapsed = now - started
                    cpu_after = meter.read()
                    after = _redis_stats(redis)
                    commands, trips = after[0] - commands - 1, after[1] - trips - 1  # less this INFO
                    break
                measuring = True
                count = 0
                commands, trips = _redis_stats(redis)
                cpu_before = meter.read()
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
    return {"calls_per_s": count / elapsed, "redis_per_call": commands / max(count, 1),
            "redis_trips_per_call": trips / max(count, 1), "errors": errors,
            **Meter.per(cpu_before, cpu_after, count)}


def _paced(port: int, rate: float, conns: int, duration: float, warmup: float, redis: RedisServer,
           meter: Meter) -> dict[str, float]:
    """tools/call at ``rate`` per second in all (open loop, scale_paced.py): costs per call at that load."""
    def snapshot() -> dict[str, float]:
        commands, trips = _redis_stats(redis)
        return {**meter.read(), "commands": commands, "trips": trips}

    r = paced(port, rate, conns, duration, warmup, snapshot)
    before, after, count = r["before"], r["after"], max(r["count"], 1)
    cpu = Meter.per({k: v for k, v in before.items() if k not in ("commands", "trips")}, after, count)
    return {"target_per_s": rate, "calls_per_s": r["count"] / r["elapsed"], "sent_per_s": r["sent"] / r["elapsed"],
            "lag_ms": r["lag_ms"], "errors": r["errors"],
            "redis_per_call": (after["commands"] - before["commands"] - 1) / count,
            "redis_trips_per_call": (after["trips"] - before["trips"] - 1) / count, **cpu}


def _legacy(port: int, messages: int, redis: RedisServer, meter: Meter) -> dict[str, float]:
    """A 2025-11-25 session through nginx: Redis commands of ``initialize``, then per ``tools/call`` of it.

    One keep-alive connection to nginx, one message at a time; nginx spreads the
    messages over the workers (round robin), so every worker serves the session.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25"}
    payload = make_payload(100)
    factory = RequestFactory("legacy", payload)
    errors = 0

    def post(body: bytes, headers: dict[str, str]) -> tuple[int, dict[bytes, bytes], bytes]:
        conn.request("POST", "/mcp", body=body, headers=headers)
        resp = conn.getresponse()
        return resp.status, {k.lower().encode(): v.encode("latin-1") for k, v in resp.getheaders()}, resp.read()

    try:
        before = _redis_stats(redis)[0]
        status, h, body = post(initialize_body(0), base)
        msg, err = decode_http_reply(status, h, body, 0)
        if err or not isinstance(msg, dict) or "result" not in msg:
            raise RuntimeError(f"legacy initialize through nginx: {err or msg}")
        headers = {**base, "Mcp-Session-Id": h[b"mcp-session-id"].decode("latin-1")}
        post(INITIALIZED_BODY, headers)
        handshake = _redis_stats(redis)[0] - before - 1
        post(factory.body(1), headers)  # each worker's first message of the session builds its copy: not counted
        post(factory.body(2), headers)
        before_stats, cpu_before, started = _redis_stats(redis), meter.read(), time.monotonic()
        for i in range(3, messages + 3):
            status, h, body = post(factory.body(i), headers)
            msg, err = decode_http_reply(status, h, body, i)
            if err or check_reply(msg, i, payload):
                errors += 1
        elapsed = time.monotonic() - started
        cpu_after = meter.read()
        after_stats = _redis_stats(redis)
        per_message = (after_stats[0] - before_stats[0] - 1) / messages
        trips_per_message = (after_stats[1] - before_stats[1] - 1) / messages
        conn.request("DELETE", "/mcp", headers=headers)
        conn.getresponse().read()
    finally:
        conn.close()
    return {"redis_per_legacy_message": per_message, "redis_trips_per_legacy_message": trips_per_message,
            "redis_handshake": handshake, "legacy_per_s": messages / elapsed,
            "legacy_errors": errors, **{f"legacy_{k}": v for k, v in Meter.per(cpu_before, cpu_after, messages).items()}}


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
        meter = Meter(workers, nginx, redis)
        calls, legacy = [], []
        inflight = args.inflight * (n if args.per_worker else 1)
        for rep in range(args.reps):
            for on in pmqos.modes(args.pm_qos, rep):
                with pmqos.held(on):
                    calls.append({**_calls(nginx.port, inflight, args.duration, args.warmup, redis, meter), "pm_qos": on})
        paced_rows = []
        for rep in range(args.reps if args.rate > 0 else 0):
            for on in pmqos.modes(args.pm_qos, rep):
                with pmqos.held(on):
                    paced_rows.append({**_paced(nginx.port, args.rate * n, args.inflight * n, args.duration, args.warmup,
                                                redis, meter), "pm_qos": on})
        # Legacy sessions after every modern window: a worker serving one beats its heartbeat in Redis
        # from then on (about one SET a second), which is not a cost of a modern call.
        for rep in range(args.reps):
            for on in pmqos.modes(args.pm_qos, rep):
                with pmqos.held(on):
                    legacy.append({**_legacy(nginx.port, args.legacy_messages, redis, meter), "pm_qos": on})
        fan = [_fanout(nginx.port, args.listeners, args.changes, redis, n) for _ in range(args.reps)]
        return {"workers": n, "calls": calls, "paced": paced_rows, "legacy": legacy, "fanout": fan}
    finally:
        stop_deployment(nginx, workers, redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--listeners", type=int, default=100)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--per-worker", action="store_true",
                        help="--inflight connections per worker (N workers get N times as many): each worker sees the same load")
    parser.add_argument("--legacy-messages", type=int, default=500, help="tools/call in one legacy session (per rep)")
    parser.add_argument("--pm-qos", choices=pmqos.MODES, default="both",
                        help="tools/call and legacy windows with the PM QoS request held (on), not (off), or both")
    parser.add_argument("--rate", type=float, default=1000.0,
                        help="open-loop windows too: this many tools/call per s per worker (N workers: N times as many), "
                             "below saturation, for the worker CPU per call at equal load (0: none)")
    parser.add_argument("--instr-calls", type=int, default=0,
                        help="worker instructions per call: the workers under callgrind, this many calls per worker "
                             "(0: not measured)")
    parser.add_argument("--instr-rate", type=float, default=20.0, help="--instr-calls at this rate per worker")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = []
    for n in args.workers:
        print(f"{n} worker(s)...", file=sys.stderr, flush=True)
        results.append(run(n, args))
    for r in results if args.instr_calls > 0 else []:
        print(f"{r['workers']} worker(s) under callgrind...", file=sys.stderr, flush=True)
        r["instructions"] = instructions(r["workers"], TARGET, {"WIREMCP_STATE_KEY": STATE_KEY}, args.instr_rate,
                                         args.instr_calls, args.warmup)
    text = table(results, args.pm_qos) + "\n" + projection(results)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}, cores: {os.cpu_count()}\n\n{text}")
    failed = any(c["errors"] for r in results for c in r["calls"] + r["paced"]) or \
        any(r.get("instructions", {}).get("errors") for r in results) or \
        any(x["legacy_errors"] for r in results for x in r["legacy"]) or \
        any(f["delivered"] != f["expected"] for r in results for f in r["fanout"])
    if args.json:
        args.json.write_text(json.dumps({"results": results, "table": text}, indent=1))
    if failed:
        print("\nsome runs had errors or missed notifications (see the JSON)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
