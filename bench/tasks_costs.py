"""bench/tasks_bench.py ``--costs``: task creation and completion throughput and latency per store, and parked tasks.

Stores: ``memory`` (`MemoryTaskStore`), ``sqlite`` (`SQLiteTaskStore`, a fresh
file) and ``redis`` (`RedisTaskStore` on a real ``redis-server`` started here,
tests/scale/services.py). Two levels for each:

* ``store`` (the floor: the official SDK 2.3.0 has no tasks): ``create``,
  then ``finish`` (completion) of each task, one after another; per-op latency
  (p50/p99) and ops per second;
* ``server``: ``Server.handle`` of a ``tools/call`` that becomes a task (the
  whole in-process path, no transport), one after another, its latency
  (p50/p99) and creations per second; completion: each task's ``async def``
  tool returns at once, and the store's ``updated_at - created_at`` of each
  finished record is its completion latency (p50/p99), the tasks completed
  per second the number over the wall time from the first creation to the
  last completion (a burst: a task may wait behind the creations after it);
  and, one call at a time, the latency from the call to the task's
  completion with nothing queued (``alone``).

Parked tasks (`parked`): ``wiremcp run`` over stdio of a tool that asks a
question, so each task parks in ``input_required``; M calls, then the
server's RSS growth per parked task and its CPU over an idle window, which
must be about 0: one look per worker per second, no per-task polling.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

import wiremcp  # noqa: E402
from wiremcp.jsonrpc import Request  # noqa: E402
from wiremcp.server.tasks import MemoryTaskStore, SQLiteTaskStore, TaskRecord, TaskStore  # noqa: E402

STORES = ("memory", "sqlite", "redis")
TASKS = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def _stats(name: str, lat_s: list[float], wall_s: float) -> dict[str, float]:
    return {f"{name}_per_s": len(lat_s) / wall_s if wall_s else float("nan"),
            f"{name}_p50_us": _pct(lat_s, 0.5) * 1e6, f"{name}_p99_us": _pct(lat_s, 0.99) * 1e6}


class Stores:
    """Makes a fresh store of each kind; owns the redis-server the ``redis`` kind needs."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.redis: Any = None

    def make(self, kind: str) -> TaskStore:
        if kind == "memory":
            return MemoryTaskStore()
        if kind == "sqlite":
            return SQLiteTaskStore(self.directory / f"tasks-{time.monotonic_ns()}.sqlite3")
        if self.redis is None:
            sys.path.insert(0, str(ROOT / "tests"))
            from scale.services import RedisServer

            self.redis = RedisServer()
        from wiremcp.backends.redis import RedisBackend
        from wiremcp.server._backend_tasks import RedisTaskStore

        store: TaskStore = RedisTaskStore(RedisBackend(self.redis.url, prefix=f"bench{time.monotonic_ns()}"))
        return store

    def close(self) -> None:
        if self.redis is not None:
            self.redis.kill()


async def store_round(store: TaskStore, n: int) -> dict[str, float]:
    now = time.time()
    ids = [f"task-{i}" for i in range(n)]
    created: list[float] = []
    finished: list[float] = []
    try:
        t0 = time.perf_counter()
        for task_id in ids:
            t = time.perf_counter()
            await store.create(TaskRecord(task_id=task_id, status="working", created_at=now, updated_at=now, ttl_ms=3_600_000))
            created.append(time.perf_counter() - t)
        t1 = time.perf_counter()
        for task_id in ids:
            t = time.perf_counter()
            await store.finish(task_id, "completed", now=time.time(), result={"content": []})
            finished.append(time.perf_counter() - t)
        t2 = time.perf_counter()
    finally:
        await store.close()
    return {**_stats("create", created, t1 - t0), **_stats("complete", finished, t2 - t1)}


async def server_round(store: TaskStore, n: int) -> dict[str, float]:
    server = wiremcp.Server("bench", task_store=store)

    @server.tool(task="always")
    async def job(n: int) -> str:
        return str(n)

    ids: list[str] = []
    created: list[float] = []
    try:
        t0 = time.perf_counter()
        w0 = time.time()
        for i in range(n):
            t = time.perf_counter()
            out = server.handle(Request(i, "tools/call", {"name": "job", "arguments": {"n": i}, "_meta": META}))
            result = await out if not isinstance(out, dict) else out
            created.append(time.perf_counter() - t)
            ids.append(result["taskId"])
        t1 = time.perf_counter()
        while server.tasks is not None and server.tasks.engine.running:
            await asyncio.sleep(0.001)
        done: list[float] = []
        last = w0
        for task_id in ids:
            record = await store.get(task_id)
            assert record is not None and record.status == "completed", record
            done.append(record.updated_at - record.created_at)
            last = max(last, record.updated_at)
        stats = {**_stats("create", created, t1 - t0), **_stats("complete", done, last - w0)}
        # One at a time: the latency from the call to the task's completion, with nothing queued before it
        # (in the burst above a task waits behind the creations that follow it until the loop yields).
        alone: list[float] = []
        for i in range(n, n + min(n, 200)):
            t = time.perf_counter()
            out = server.handle(Request(i, "tools/call", {"name": "job", "arguments": {"n": i}, "_meta": META}))
            if not isinstance(out, dict):
                await out
            while server.tasks.engine.running:
                await asyncio.sleep(0)
            alone.append(time.perf_counter() - t)
        stats["alone_p50_us"], stats["alone_p99_us"] = _pct(alone, 0.5) * 1e6, _pct(alone, 0.99) * 1e6
    finally:
        assert server.tasks is not None
        await server.tasks.aclose()
    return stats


def costs(n: int, rounds: int, mode: str) -> list[dict[str, Any]]:
    """Every (level, store, PM QoS state) ``rounds`` times, interleaved; one row of medians each."""
    import pmqos

    rows: dict[tuple[str, str, bool], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="wiremcp-tasks-costs-") as tmp:
        stores = Stores(Path(tmp))
        try:
            for r in range(rounds):
                for level, fn in (("store", store_round), ("server", server_round)):
                    for kind in STORES:
                        for on in pmqos.modes(mode, r):
                            with pmqos.held(on):
                                rows.setdefault((level, kind, on), []).append(asyncio.run(fn(stores.make(kind), n)))
        finally:
            stores.close()
    out = []
    for (level, kind, on), samples in rows.items():
        med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        out.append({"level": level, "store": kind, "pm_qos": on, **med})
    return out


def costs_table(rows: list[dict[str, Any]], n: int, rounds: int) -> str:
    lines = [f"{n} tasks per round, median of {rounds} round(s); store = the floor (the official SDK has no tasks)", "",
             "| level | store | PM QoS | created per s | create p50 µs | create p99 µs | completed per s "
             "| complete p50 µs | complete p99 µs | call to completion, alone: p50 µs | p99 µs |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (r["level"] != "store", STORES.index(r["store"]), not r["pm_qos"])):
        lines.append(f"| {r['level']} | {r['store']} | {'on' if r['pm_qos'] else 'off'} | {r['create_per_s']:,.0f} "
                     f"| {r['create_p50_us']:,.1f} | {r['create_p99_us']:,.1f} | {r['complete_per_s']:,.0f} "
                     f"| {r['complete_p50_us']:,.1f} | {r['complete_p99_us']:,.1f} "
                     + (f"| {r['alone_p50_us']:,.1f} | {r['alone_p99_us']:,.1f} |" if "alone_p50_us" in r else "| — | — |"))
    return "\n".join(lines) + "\n"


WAITING_SERVER = """
import wiremcp
from wiremcp import Context

server = wiremcp.Server("waiting", version="1")


@server.tool(task="always")
async def gate(ctx: Context) -> str:
    await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
    return "done"
"""

ASKING = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}}}


def _stat(pid: int) -> tuple[float, int]:
    """CPU seconds (utime + stime) and RSS in KiB of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), rss


def parked(store: str, m: int, idle: float) -> dict[str, Any]:
    """M tasks parked in input_required in a ``wiremcp run`` over stdio: RSS per task, idle CPU %."""
    with tempfile.TemporaryDirectory(prefix="wiremcp-tasks-parked-") as tmp:
        (Path(tmp) / "server.py").write_text(WAITING_SERVER)
        env = {**os.environ, "XDG_STATE_HOME": tmp, "PYTHONPATH": str(ROOT / "src")}
        redis = None
        if store == "redis":
            sys.path.insert(0, str(ROOT / "tests"))
            from scale.services import RedisServer

            redis = RedisServer()
            env["WIREMCP_REDIS_URL"], env["WIREMCP_STATE_KEY"] = redis.url, "bench-tasks-parked-key-0123456789"
        else:
            env["WIREMCP_TASK_STORE"] = store
        proc = subprocess.Popen([sys.executable, "-m", "wiremcp", "run", str(Path(tmp) / "server.py")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdin is not None and proc.stdout is not None

        def call(msg: dict[str, Any]) -> Any:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())

        try:
            probe = call({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                          "params": {"name": "gate", "arguments": {}, "_meta": ASKING}})
            time.sleep(1.0)
            _, rss0 = _stat(proc.pid)
            started = time.perf_counter()
            for i in range(1, m + 1):
                reply = call({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                              "params": {"name": "gate", "arguments": {}, "_meta": ASKING}})
                assert reply.get("result", {}).get("resultType") == "task", reply
            creating = time.perf_counter() - started
            time.sleep(2.0)  # the last tasks park
            last = call({"jsonrpc": "2.0", "id": m + 1, "method": "tasks/get",
                         "params": {"taskId": reply["result"]["taskId"], "_meta": ASKING}})["result"]
            assert last["status"] == "input_required", last
            cpu0, rss1 = _stat(proc.pid)
            wall = time.perf_counter()
            time.sleep(idle)
            cpu1, _ = _stat(proc.pid)
            busy = (cpu1 - cpu0) / (time.perf_counter() - wall)
            assert probe.get("result", {}).get("resultType") == "task", probe
        finally:
            proc.kill()
            proc.wait()
            if redis is not None:
                redis.kill()
    return {"store": store, "parked": m, "create_s_per_1000": creating / m * 1000, "rss_kib_per_task": (rss1 - rss0) / m,
            "idle_cpu_pct": busy * 100, "idle_s": idle, "cpu_tick_s": 1 / os.sysconf("SC_CLK_TCK")}


def parked_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| store | tasks parked in input_required | creation, s per 1,000 | RSS per parked task (KiB) "
             "| idle server CPU (% of a core) | idle window |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['store']} | {r['parked']:,} | {r['create_s_per_1000']:.2f} | {r['rss_kib_per_task']:.2f} "
                     f"| {r['idle_cpu_pct']:.2f} % | {r['idle_s']:g} s (ticks of {r['cpu_tick_s'] * 1e3:g} ms) |")
    return "\n".join(lines) + "\n"
