"""What a task costs the server: the store per creation and per poll, memory and SQLite.

    .venv/bin/python bench/tasks_bench.py              # 2,000 tasks, 5,000 polls, 3 rounds each
    .venv/bin/python bench/tasks_bench.py --tiny       # a quick run (the smoke size)
    .venv/bin/python bench/tasks_bench.py --waiting 4000   # N tasks waiting for input: creation, idle CPU
    .venv/bin/python bench/tasks_bench.py --costs --quick  # creation/completion per store (memory, SQLite, Redis),
                                                           # p50/p99, and M parked tasks' memory and idle CPU
                                                           # (bench/tasks_costs.py; run.py --areas tasks)

Two levels, each for `MemoryTaskStore` and `SQLiteTaskStore` (a fresh file in
a temporary directory; WAL, synchronous=NORMAL, its own thread):

* ``store``: ``await store.create(record)`` and ``await store.get(id)`` alone;
* ``server``: the whole server path in process, no transport:
  ``Server.handle`` of a ``tools/call`` that becomes a task (route, arguments,
  create, start the worker, the CreateTaskResult) and of a ``tasks/get`` on
  a finished task (lookup, ownership and expiry checks, the DetailedTask).

Each figure is the median of the rounds, in microseconds per operation.
Results go to stdout as a Markdown table (bench/README.md, "Tasks").

``--waiting N`` measures what tasks waiting for input cost a real server:
``wiremcp run`` of a one-tool server (the tool asks a question, so each task
parks in ``input_required``) over stdio, its tasks in SQLite under a fresh
state directory; N ``tools/call`` one after another (the seconds per 1,000
creations, each thousand apart), then the server's CPU while idle
(``/proc/PID/stat``, user + system, over ``--idle`` seconds). ``--src DIR``
serves another tree's ``wiremcp`` (the figure before a change).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import wiremcp  # noqa: E402
from wiremcp.jsonrpc import Request  # noqa: E402
from wiremcp.server.tasks import MemoryTaskStore, SQLiteTaskStore, TaskRecord, TaskStore  # noqa: E402

TASKS = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}


def make_store(kind: str, directory: Path) -> TaskStore:
    return MemoryTaskStore() if kind == "memory" else SQLiteTaskStore(directory / f"tasks-{time.monotonic_ns()}.sqlite3")


async def timed(n: int, op: Callable[[int], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    for i in range(n):
        await op(i)
    return (time.perf_counter() - start) / n * 1e6


async def store_round(kind: str, directory: Path, creates: int, polls: int) -> tuple[float, float]:
    store = make_store(kind, directory)
    now = time.time()
    ids = [f"task-{i}" for i in range(creates)]

    async def create(i: int) -> None:
        await store.create(TaskRecord(task_id=ids[i], status="working", created_at=now, updated_at=now, ttl_ms=3_600_000))

    async def get(i: int) -> None:
        await store.get(ids[i % creates])

    try:
        return await timed(creates, create), await timed(polls, get)
    finally:
        await store.close()


async def server_round(kind: str, directory: Path, creates: int, polls: int) -> tuple[float, float]:
    server = wiremcp.Server("bench", task_store=make_store(kind, directory))

    @server.tool(task="always")
    async def job(n: int) -> str:
        return str(n)

    ids: list[str] = []

    async def create(i: int) -> None:
        out = server.handle(Request(i, "tools/call", {"name": "job", "arguments": {"n": i}, "_meta": META}))
        result = await out if not isinstance(out, dict) else out
        ids.append(result["taskId"])

    async def poll(i: int) -> None:
        out = server.handle(Request(i, "tasks/get", {"taskId": ids[i % len(ids)], "_meta": META}))
        result = await out if not isinstance(out, dict) else out
        assert result["status"] == "completed", result

    try:
        creating = await timed(creates, create)
        while server.tasks is not None and server.tasks.engine.running:  # every job finished before polling
            await asyncio.sleep(0.01)
        return creating, await timed(polls, poll)
    finally:
        assert server.tasks is not None
        await server.tasks.aclose()


WAITING_SERVER = """
import wiremcp
from wiremcp import Context

server = wiremcp.Server("waiting", version="1")


@server.tool(task="always")
async def gate(ctx: Context) -> str:
    await ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="ok")
    return "done"
"""


#: A client that can answer questions (elicitation): a task's question parks it in input_required.
ASKING = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}}}


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def waiting(n: int, idle: float, src: Path) -> None:
    """N waiting tasks on SQLite: seconds per 1,000 creations, then the idle server's CPU %."""
    with tempfile.TemporaryDirectory(prefix="wiremcp-tasks-waiting-") as tmp:
        (Path(tmp) / "server.py").write_text(WAITING_SERVER)
        env = {**os.environ, "XDG_STATE_HOME": tmp, "PYTHONPATH": str(src)}
        proc = subprocess.Popen([sys.executable, "-m", "wiremcp", "run", str(Path(tmp) / "server.py")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            per_thousand = []
            start = time.perf_counter()
            for i in range(1, n + 1):
                call = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "gate", "arguments": {}, "_meta": ASKING}}
                proc.stdin.write(json.dumps(call).encode() + b"\n")
                proc.stdin.flush()
                reply = json.loads(proc.stdout.readline())
                assert reply.get("result", {}).get("resultType") == "task", reply
                if i % 1000 == 0 or i == n:
                    per_thousand.append((time.perf_counter() - start) * 1000 / (i - 1000 * len(per_thousand)))
                    print(f"created {i}: {per_thousand[-1]:,.1f} s per 1,000", file=sys.stderr, flush=True)
                    start = time.perf_counter()
            time.sleep(min(idle, 3.0))  # the last tasks park
            get = {"jsonrpc": "2.0", "id": 0, "method": "tasks/get", "params": {"taskId": reply["result"]["taskId"], "_meta": ASKING}}
            proc.stdin.write(json.dumps(get).encode() + b"\n")
            proc.stdin.flush()
            last = json.loads(proc.stdout.readline())["result"]
            assert last["status"] == "input_required", last  # waiting for input, as every task before it
            cpu, wall = _cpu_seconds(proc.pid), time.perf_counter()
            time.sleep(idle)
            busy = (_cpu_seconds(proc.pid) - cpu) / (time.perf_counter() - wall) * 100
        finally:
            proc.kill()
            proc.wait()
    print(f"{n} tasks waiting for input, SQLite, wiremcp from {src}\n")
    print("| | figure |")
    print("|---|---:|")
    for k, seconds in enumerate(per_thousand, 1):
        print(f"| creation, thousand {k}: seconds per 1,000 | {seconds:,.1f} |")
    print(f"| idle server CPU over {idle:g} s | {busy:.1f} % |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--polls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help="50 tasks, 100 polls, 1 round")
    parser.add_argument("--waiting", type=int, metavar="N", help="N tasks waiting for input in a real server (see above)")
    parser.add_argument("--idle", type=float, default=10.0, help="--waiting: seconds the idle CPU is measured")
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="--waiting: the wiremcp tree the server runs")
    parser.add_argument("--costs", action="store_true", help="throughput and p50/p99 per store, parked tasks (tasks_costs.py)")
    parser.add_argument("--quick", action="store_true", help="--costs: 500 tasks, 1 round, 300 parked, 5 s idle")
    parser.add_argument("--parked", type=int, default=1000, help="--costs: tasks parked in input_required")
    parser.add_argument("--pm-qos", default="both", help="--costs: on, off or both (bench/pmqos.py)")
    parser.add_argument("--json", type=Path, help="--costs: write the rows and the tables here")
    args = parser.parse_args()
    if args.costs:
        costs_main(args)
        return
    if args.waiting:
        waiting(args.waiting, args.idle, args.src)
        return
    if args.tiny:
        args.creates, args.polls, args.rounds = 50, 100, 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="wiremcp-tasks-bench-") as tmp:
        directory = Path(tmp)
        for level, fn in (("store", store_round), ("server", server_round)):
            for kind in ("memory", "sqlite"):
                results = [asyncio.run(fn(kind, directory, args.creates, args.polls)) for _ in range(args.rounds)]
                rows.append((level, kind, statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)))
    print(f"{args.creates} creations, {args.polls} polls, median of {args.rounds} round(s); µs per operation\n")
    print("| level | store | per creation (µs) | per poll (µs) |")
    print("|---|---|---:|---:|")
    for level, kind, create_us, poll_us in rows:
        print(f"| {level} | {kind} | {create_us:,.1f} | {poll_us:,.1f} |")


def costs_main(args: argparse.Namespace) -> None:
    import tasks_costs

    n, rounds, parked, idle = args.creates, args.rounds, args.parked, args.idle
    if args.quick:
        n, rounds, parked, idle = 500, 1, 300, 5.0
    if args.tiny:
        n, rounds, parked, idle = 50, 1, 20, 1.0
    rows = tasks_costs.costs(n, rounds, args.pm_qos)
    waiting = [tasks_costs.parked(kind, parked, idle) for kind in tasks_costs.STORES]
    text = tasks_costs.costs_table(rows, n, rounds) + "\n" + tasks_costs.parked_table(waiting)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "parked": waiting, "table": text}, indent=1))


if __name__ == "__main__":
    main()
