"""Client CPU per ``tools/call``: wiremcp's `Client` vs the official SDK's `mcp.Client`.

Both clients talk to the same server process, wiremcp's echo example over
stdio (``wiremcp run examples/echo.py``, 2026-07-28), so the server's cost is
the same on both sides and only the client differs. Each client runs in its
own interpreter (wiremcp from ``.venv``; the official ``mcp`` 2.3.0 from
``bench/.venv-official``, where wiremcp is not installed) as a worker of this
script, and measures itself:

* **client CPU per call**: ``time.process_time()`` of the client process
  (user + system, all threads) over the measured calls, divided by the
  count. The server runs in another process and is not included.
* **wall per call**: elapsed time over the measured calls.

Calls are made one at a time (``--inflight 1``: latency-bound) and with 16
in flight (``asyncio.gather``; throughput-bound), after ``--warmup`` calls.
Every reply is checked (the echoed text must come back). Each client runs
``--reps`` times (a fresh worker and server each time), interleaved (A B,
then B A); the table shows median [min-max] and the ratio of the medians.

    .venv/bin/python bench/client_bench.py                  # both clients, 3 reps of 2000 calls
    .venv/bin/python bench/client_bench.py --calls 500 --reps 1 --impl wiremcp

The official client is `mcp.Client(StdioServerParameters(...))`, its
recommended entry point, which drives `mcp.ClientSession`; mode ``auto``
probes ``server/discover`` like ours does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WIREMCP_PYTHON = ROOT / ".venv" / "bin" / "python"
OFFICIAL_PYTHON = HERE / ".venv-official" / "bin" / "python"
SERVER = [str(WIREMCP_PYTHON), "-m", "wiremcp", "run", str(ROOT / "examples" / "echo.py")]
TEXT = "x" * 100


async def _measure(call, calls: int, warmup: int, inflight: int) -> dict:
    for _ in range(warmup):
        await call()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if inflight == 1:
        for _ in range(calls):
            await call()
    else:
        for _ in range(calls // inflight):
            await asyncio.gather(*[call() for _ in range(inflight)])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    done = calls if inflight == 1 else (calls // inflight) * inflight
    return {"calls": done, "cpu_us_per_call": cpu / done * 1e6, "wall_us_per_call": wall / done * 1e6}


async def worker_wiremcp(args: argparse.Namespace) -> dict:
    from wiremcp.client import Client

    async with Client.stdio(SERVER[0], SERVER[1:]) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in (1, 16)}


async def worker_official(args: argparse.Namespace) -> dict:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with Client(params) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.content[0].text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in (1, 16)}


def run_worker(python: Path, impl: str, args: argparse.Namespace) -> dict:
    out = subprocess.run(
        [str(python), __file__, "--worker", impl, "--calls", str(args.calls), "--warmup", str(args.warmup)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    if out.returncode != 0:
        raise SystemExit(f"{impl} worker failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--impl", choices=["wiremcp", "official", "both"], default="both")
    parser.add_argument("--reps", type=int, default=3, help="runs of each client, interleaved (default 3)")
    parser.add_argument("--worker", choices=["wiremcp", "official"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        fn = worker_wiremcp if args.worker == "wiremcp" else worker_official
        print(json.dumps(asyncio.run(fn(args))))
        return 0
    impls = ["wiremcp", "official"] if args.impl == "both" else [args.impl]
    for impl in list(impls):
        python = WIREMCP_PYTHON if impl == "wiremcp" else OFFICIAL_PYTHON
        if not python.exists():
            print(f"skipping {impl}: {python} not found (bench/setup_official.sh)", file=sys.stderr)
            impls.remove(impl)
    load_start = os.getloadavg()
    runs: dict[str, list[dict]] = {impl: [] for impl in impls}
    for rep in range(args.reps):
        for impl in impls if rep % 2 == 0 else list(reversed(impls)):
            python = WIREMCP_PYTHON if impl == "wiremcp" else OFFICIAL_PYTHON
            runs[impl].append(run_worker(python, impl, args))
    load_end = os.getloadavg()

    def values(impl: str, inflight: str, key: str) -> list[float]:
        return [r[inflight][key] for r in runs[impl]]

    def cell(vals: list[float]) -> str:
        if len(vals) == 1:
            return f"{vals[0]:.0f}"
        return f"{statistics.median(vals):.0f} [{min(vals):.0f}–{max(vals):.0f}]"

    print(f"client CPU per tools/call, echo of {len(TEXT)} bytes, wiremcp echo server over stdio, "
          f"{args.calls} calls x {args.reps} reps (loadavg {load_start[0]:.2f} -> {load_end[0]:.2f})\n")
    print("| client | in flight | client CPU µs/call, median [min–max] | wall µs/call, median [min–max] |")
    print("|---|---:|---:|---:|")
    for impl in impls:
        for inflight in ("1", "16"):
            print(f"| {impl} | {inflight} | {cell(values(impl, inflight, 'cpu_us_per_call'))} | "
                  f"{cell(values(impl, inflight, 'wall_us_per_call'))} |")
    if len(impls) == 2:
        for k in ("1", "16"):
            ratio = statistics.median(values("official", k, "cpu_us_per_call")) / statistics.median(
                values("wiremcp", k, "cpu_us_per_call"))
            print(f"\nin flight {k}: the official client uses {ratio:.1f}x the CPU of wiremcp's (ratio of medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
