"""What running a sync tool in a worker thread costs: threaded vs inline vs async, and the official SDK.

    .venv/bin/python bench/sync_tools.py                      # stdio, modern, 1 and 16 in flight
    .venv/bin/python bench/sync_tools.py --transport http --duration 3

Four servers answer the same ``echo`` tool under the same neutral driver
(bench/driver.py), interleaved in one run so they share the machine's state:

* ``threaded``: ``@server.tool def echo`` (the default: a worker thread);
* ``inline``: ``@server.tool(inline=True) def echo`` (on the event loop);
* ``async``: ``@server.tool async def echo`` (on the event loop);
* ``official``: the official ``mcp`` SDK's echo (bench/fixtures/official_echo.py),
  whose sync tools also run in a thread (anyio's ``to_thread``).

It prints one row per (in flight, contender) with throughput, p50 latency and
server CPU per request, and the ratios the issue asks for: threaded / inline
(the thread hop's cost) and official / threaded (how far ahead wiremcp stays).
The official SDK is skipped when bench/.venv-official is missing
(bench/setup_official.sh installs it). Results go to stdout as a Markdown
table and, with ``--json PATH``, as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
FIXTURE = BENCH / "fixtures" / "sync_echo.py"
OFFICIAL_PY = BENCH / ".venv-official" / "bin" / "python"
OFFICIAL_FIXTURE = BENCH / "fixtures" / "official_echo.py"
WIREMCP = [sys.executable, "-m", "wiremcp"]

SERVERS = {"threaded": "threaded", "inline": "inline", "async": "async_"}


def command(contender: str, transport: str) -> list[str]:
    if contender == "official":
        cmd = [str(OFFICIAL_PY), str(OFFICIAL_FIXTURE)]
        if transport == "http":
            cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
        return cmd
    cmd = [*WIREMCP, "run", f"{FIXTURE}:{SERVERS[contender]}"]
    if transport == "http":
        cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
    return cmd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--transport", choices=driver.TRANSPORTS, default="stdio")
    ap.add_argument("--era", choices=driver.ERAS, default="modern")
    ap.add_argument("--inflight", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--payload", type=int, default=100)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=1, help="repetitions (the median is shown)")
    ap.add_argument("--no-official", action="store_true")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args(argv)

    contenders = list(SERVERS)
    if not args.no_official and OFFICIAL_PY.exists():
        contenders.append("official")
    samples: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for rep in range(args.reps):
        order = contenders if rep % 2 == 0 else contenders[::-1]
        for inflight in args.inflight:
            for contender in order:
                res = driver.run_case(
                    command(contender, args.transport), transport=args.transport, era=args.era, inflight=inflight,
                    payload_size=args.payload, duration=args.duration, warmup=args.warmup, cwd=str(ROOT), impl=contender,
                )
                if not res.ok:
                    print(f"{contender} {inflight}x: FAILED {'; '.join(res.error_messages)[:300]}", file=sys.stderr)
                samples.setdefault((inflight, contender), []).append(asdict(res))
                print(f"{contender:9} {inflight:3}x {res.rps:9,.0f} req/s  cpu {res.server_cpu_us_per_req:6.1f} µs/req",
                      file=sys.stderr)

    def median(inflight: int, contender: str, key: str) -> float:
        values = sorted(s[key] for s in samples.get((inflight, contender), []) if s["ok"])
        return values[len(values) // 2] if values else float("nan")

    print(f"\n{args.transport}, {args.era}, {args.payload} B payload, {args.duration:g} s window, "
          f"median of {args.reps}\n")
    print("| in flight | contender | req/s | p50 ms | server CPU µs/req |")
    print("| --- | --- | ---: | ---: | ---: |")
    for inflight in args.inflight:
        for contender in contenders:
            print(f"| {inflight} | {contender} | {median(inflight, contender, 'rps'):,.0f} | "
                  f"{median(inflight, contender, 'p50_us') / 1e3:.3f} | {median(inflight, contender, 'server_cpu_us_per_req'):.1f} |")
    print()
    ratios: dict[str, float] = {}
    for inflight in args.inflight:
        cpu = {c: median(inflight, c, "server_cpu_us_per_req") for c in contenders}
        ratios[f"threaded/inline cpu {inflight}x"] = cpu["threaded"] / cpu["inline"]
        line = (f"{inflight}x in flight: the thread costs {cpu['threaded'] - cpu['inline']:.1f} µs/req of server CPU "
                f"(threaded/inline {cpu['threaded'] / cpu['inline']:.2f}×, async/inline {cpu['async'] / cpu['inline']:.2f}×)")
        if "official" in cpu:
            ratios[f"official/threaded cpu {inflight}x"] = cpu["official"] / cpu["threaded"]
            line += f"; official/threaded {cpu['official'] / cpu['threaded']:.1f}× server CPU"
        print(line)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"samples": {f"{k[0]}/{k[1]}": v for k, v in samples.items()},
                                                    "ratios": ratios}, indent=1))
    return 0 if all(s["ok"] for runs in samples.values() for s in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
