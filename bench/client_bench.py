"""Client CPU per ``tools/call``: wiremcp's `Client` vs the official SDK's `mcp.Client`, over stdio and HTTP.

Both clients talk to the same kind of server process, so the server's cost
is the same on both sides and only the client differs:

* stdio: wiremcp's echo example (``wiremcp run examples/echo.py``,
  2026-07-28), spawned by the client;
* HTTP: the same example served by ``wiremcp run examples/echo.py --http``
  on 127.0.0.1 (uvicorn), started by this script before each worker and
  stopped after it; with ``--http-server official`` (or ``both``) also the
  official SDK's echo (``bench/fixtures/official_echo.py --http``, stateless,
  JSON replies), for reference.

Over HTTP the wiremcp client runs with each candidate transport of
``bench/http_candidates.py`` (``wiremcp`` is the one it ships, on aiohttp;
``httpx-asis`` is the httpx transport it had before; ``httpx-tuned``,
``httpx2-tuned``, ``httpcore`` are the other libraries under the same
protocol logic). Each client runs in its
own interpreter (wiremcp from ``.venv``; the official ``mcp`` 2.3.0 from
``bench/.venv-official``, where wiremcp is not installed) as a worker of this
script, and measures itself:

* **client CPU per call**: ``time.process_time()`` of the client process
  (user + system, all threads) over the measured calls, divided by the
  count. The server runs in another process and is not included.
* **wall per call**: elapsed time over the measured calls.

Calls are made one at a time (1 in flight: latency-bound) and with 16
in flight (``asyncio.gather``; throughput-bound), after ``--warmup`` calls,
on asyncio's default event loop (``--loop uvloop``: every client on uvloop,
which both venvs have).
Every reply is checked (the echoed text must come back). Each client runs
``--reps`` times (a fresh worker and server each time), interleaved (A B,
then B A); the table shows median [min-max] and the ratio of the medians.

    .venv/bin/python bench/client_bench.py                  # stdio and HTTP, 3 reps of 2000 calls
    .venv/bin/python bench/client_bench.py --transport http --http-server both
    .venv/bin/python bench/client_bench.py --calls 500 --reps 1 --impl wiremcp,official

The official client is `mcp.Client(StdioServerParameters(...))` over stdio
and `mcp.Client(url)` over HTTP (its Streamable HTTP client, on httpx2), its
recommended entry point, which drives `mcp.ClientSession`; mode ``auto``
probes ``server/discover`` like ours does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
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
OFFICIAL_SERVER = [str(OFFICIAL_PYTHON), str(HERE / "fixtures" / "official_echo.py"), "--http"]
TEXT = "x" * 100
#: Clients measured over HTTP: the official one, then wiremcp's with each candidate transport.
HTTP_IMPLS = ["official", "wiremcp", "httpx-asis", "httpx-tuned", "httpx2-tuned", "httpcore"]
STDIO_IMPLS = ["official", "wiremcp"]
#: The library each wiremcp HTTP client needs in .venv (the candidates are skipped when it is missing).
HTTP_LIBRARY = {"wiremcp": "aiohttp", "httpx-asis": "httpx", "httpx-tuned": "httpx",
                "httpx2-tuned": "httpx2", "httpcore": "httpcore"}


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


def _inflights(args: argparse.Namespace) -> list[int]:
    """The concurrencies a worker measures (``--inflight``; both by default)."""
    return [int(k) for k in args.inflight.split(",")]


async def worker_wiremcp(args: argparse.Namespace) -> dict:
    from wiremcp.client import Client

    async with Client.stdio(SERVER[0], SERVER[1:]) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in _inflights(args)}


async def worker_wiremcp_http(args: argparse.Namespace) -> dict:
    from wiremcp.client import Client

    sys.path.insert(0, str(HERE))
    from http_candidates import CANDIDATES

    transport = CANDIDATES["aiohttp" if args.worker == "wiremcp" else args.worker](args.url)
    async with Client(transport) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in _inflights(args)}


async def worker_official_http(args: argparse.Namespace) -> dict:
    from mcp import Client

    async with Client(args.url) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.content[0].text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in _inflights(args)}


async def worker_official(args: argparse.Namespace) -> dict:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with Client(params) as client:
        async def call() -> None:
            result = await client.call_tool("echo", {"text": TEXT})
            assert result.content[0].text == TEXT, result

        return {k: await _measure(call, args.calls, args.warmup, k) for k in _inflights(args)}


def start_http_server(kind: str) -> tuple[subprocess.Popen, str]:
    """Start an echo server on 127.0.0.1; return it and its URL once it accepts connections."""
    if kind == "wiremcp":
        proc = subprocess.Popen([*SERVER, "--http", "--host", "127.0.0.1", "--port", "0"],
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=ROOT)
        assert proc.stderr is not None
        for _ in range(50):
            found = re.search(r"(http://\S+)", proc.stderr.readline())
            if found:
                url = found.group(1)
                break
        else:
            proc.kill()
            raise SystemExit("the wiremcp HTTP server did not announce its URL")
        proc.stderr.close()
    else:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([*OFFICIAL_SERVER, "--port", str(port)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
        url = f"http://127.0.0.1:{port}/mcp"
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, url
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"the {kind} HTTP server did not start")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_worker(python: Path, impl: str, args: argparse.Namespace, transport: str = "stdio", server: str = "") -> dict:
    cmd = [str(python), __file__, "--worker", impl, "--calls", str(args.calls), "--warmup", str(args.warmup),
           "--loop", args.loop]
    proc = None
    if transport == "http":
        proc, url = start_http_server(server)
        cmd += ["--url", url]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    finally:
        if proc is not None:
            stop(proc)
    if out.returncode != 0:
        raise SystemExit(f"{impl} worker ({transport}) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--transport", choices=["stdio", "http", "both"], default="both")
    parser.add_argument("--http-server", choices=["wiremcp", "official", "both"], default="wiremcp",
                        help="the echo server the HTTP clients talk to (default wiremcp)")
    parser.add_argument("--impl", default="all",
                        help="comma-separated clients: official, wiremcp, and over HTTP the candidate transports "
                             f"({', '.join(HTTP_IMPLS[2:])}); default all")
    parser.add_argument("--reps", type=int, default=3, help="runs of each client, interleaved (default 3)")
    parser.add_argument("--loop", choices=["asyncio", "uvloop"], default="asyncio",
                        help="the event loop of every client (default asyncio; uvloop is in both venvs)")
    parser.add_argument("--json", dest="json_path", help="write the runs and the Markdown table here (run.py --areas)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--inflight", default="1,16", help=argparse.SUPPRESS)  # a worker's (instructions.py: one)
    args = parser.parse_args()
    if args.worker:
        if args.url:
            fn = worker_official_http if args.worker == "official" else worker_wiremcp_http
        else:
            fn = worker_wiremcp if args.worker == "wiremcp" else worker_official
        if args.loop == "uvloop":
            import uvloop

            asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        print(json.dumps(asyncio.run(fn(args))))
        return 0
    wanted = HTTP_IMPLS if args.impl in ("all", "both") else args.impl.split(",")
    if not OFFICIAL_PYTHON.exists() and "official" in wanted:
        print(f"skipping official: {OFFICIAL_PYTHON} not found (bench/setup_official.sh)", file=sys.stderr)
        wanted = [i for i in wanted if i != "official"]
    http_missing = set()
    for impl, module in HTTP_LIBRARY.items():
        if impl in wanted and args.transport != "stdio" and subprocess.run(
                [str(WIREMCP_PYTHON), "-c", f"import {module}"], capture_output=True).returncode != 0:
            print(f"skipping {impl} over HTTP: {module} is not installed in .venv "
                  f"(.venv/bin/pip install {module})", file=sys.stderr)
            http_missing.add(impl)
    # (transport, server, impl) cases, run in interleaved order (reversed on odd repetitions).
    cases: list[tuple[str, str, str]] = []
    if args.transport in ("stdio", "both"):
        cases += [("stdio", "", impl) for impl in STDIO_IMPLS if impl in wanted]
    if args.transport in ("http", "both"):
        servers = ["wiremcp", "official"] if args.http_server == "both" else [args.http_server]
        if "official" in servers and not OFFICIAL_PYTHON.exists():
            servers.remove("official")
        cases += [("http", server, impl) for server in servers for impl in HTTP_IMPLS
                  if impl in wanted and impl not in http_missing]
    load_start = os.getloadavg()
    runs: dict[tuple[str, str, str], list[dict]] = {case: [] for case in cases}
    for rep in range(args.reps):
        for case in cases if rep % 2 == 0 else list(reversed(cases)):
            transport, server, impl = case
            python = OFFICIAL_PYTHON if impl == "official" else WIREMCP_PYTHON
            runs[case].append(run_worker(python, impl, args, transport, server))
    load_end = os.getloadavg()

    def values(case: tuple[str, str, str], inflight: str, key: str) -> list[float]:
        return [r[inflight][key] for r in runs[case]]

    def cell(vals: list[float]) -> str:
        if len(vals) == 1:
            return f"{vals[0]:.0f}"
        return f"{statistics.median(vals):.0f} [{min(vals):.0f}–{max(vals):.0f}]"

    def label(impl: str, transport: str) -> str:
        if impl == "official":
            return "official mcp 2.3.0" + (" (httpx2)" if transport == "http" else "")
        if impl == "wiremcp":
            return "wiremcp" + (" (aiohttp, shipped)" if transport == "http" else "")
        return f"wiremcp on {impl}"

    lines = [f"client CPU per tools/call, echo of {len(TEXT)} bytes, {args.calls} calls x {args.reps} reps, "
             f"{args.loop} loop, no PM QoS request "
             f"(loadavg {load_start[0]:.2f} -> {load_end[0]:.2f})\n",
             "| transport | server | client | in flight | client CPU µs/call, median [min–max] "
             "| wall µs/call, median [min–max] | official/this (CPU) |",
             "|---|---|---|---:|---:|---:|---:|"]
    verdicts = []
    for case in cases:
        transport, server, impl = case
        for inflight in ("1", "16"):
            ref = (transport, server, "official")
            ratio = ""
            if ref in runs and impl != "official":
                value = (statistics.median(values(ref, inflight, "cpu_us_per_call"))
                         / statistics.median(values(case, inflight, "cpu_us_per_call")))
                ratio = f"{value:.1f}×"
                if impl == "wiremcp" and transport == "http":
                    verdicts.append(f"- HTTP client, {inflight} in flight: official/wiremcp client CPU {value:.2f}× "
                                    f"(target ≥ 5×: {'met' if value >= 5 else '**not met**'})")
            lines.append(f"| {transport} | {server or 'wiremcp'} | {label(impl, transport)} | {inflight} "
                         f"| {cell(values(case, inflight, 'cpu_us_per_call'))} "
                         f"| {cell(values(case, inflight, 'wall_us_per_call'))} | {ratio} |")
    lines.append("\nofficial/this: the official client's median CPU per call over this client's, same transport and server")
    if verdicts:
        lines += ["", *verdicts]
    table = "\n".join(lines)
    print(table)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({
            "table": table, "load": [load_start[0], load_end[0]],
            "runs": [{"transport": t, "server": srv, "impl": i, "runs": r} for (t, srv, i), r in runs.items()],
        }, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
