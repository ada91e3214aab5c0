"""What running a sync tool in a worker thread costs: threaded vs inline vs async, and the official SDK.

    .venv/bin/python bench/sync_tools.py                      # stdio, modern, 1 and 16 in flight
    .venv/bin/python bench/sync_tools.py --transport http --duration 3

Four servers answer the same ``echo`` tool under the same neutral driver
(bench/driver.py), interleaved in one run so they share the machine's state:

* ``threaded``: ``@server.tool def echo`` (the default: a worker thread);
* ``inline``: ``@server.tool(inline=True) def echo`` (on the event loop);
* ``async``: ``@server.tool async def echo`` (on the event loop);
* ``official``: the official ``mcp`` SDK's echo (bench/fixtures/official_echo.py),
  whose sync tools also run in a thread (anyio's ``to_thread``);
* ``floor``: run.py's floor (bench/fixtures/raw_echo.py, raw_asgi.py over HTTP);
* ``thread-floor``: the stdio floor with the tool called in a worker thread
  (bench/fixtures/raw_thread_echo.py): the least a thread hop costs in Python.

It prints one row per (in flight, PM QoS state, contender) with throughput,
p50 latency and server CPU per request, then the ratios: throughput (req/s)
first, the target's measure (threaded / official ≥ 10×), with the inverse
ratio of server CPU per request beside each. ``--pm-qos both`` (the default)
takes every sample with and without the PM QoS CPU latency request
(bench/pmqos.py), interleaved. The official SDK is skipped when
bench/.venv-official is missing (bench/setup_official.sh installs it).
Results go to stdout as Markdown tables and, with ``--json PATH``, as JSON.
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
import pmqos  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
FIXTURE = BENCH / "fixtures" / "sync_echo.py"
OFFICIAL_PY = BENCH / ".venv-official" / "bin" / "python"
OFFICIAL_FIXTURE = BENCH / "fixtures" / "official_echo.py"
WIREMCP = [sys.executable, "-m", "wiremcp"]

SERVERS = {"threaded": "threaded", "inline": "inline", "async": "async_"}

#: The floors, on wiremcp's interpreter: the bare echo loop, and the same with the tool in a worker thread.
FLOORS = {
    "floor": {"stdio": BENCH / "fixtures" / "raw_echo.py", "http": BENCH / "fixtures" / "raw_asgi.py"},
    "thread-floor": {"stdio": BENCH / "fixtures" / "raw_thread_echo.py"},
}

#: The throughput ratios shown (a/b in req/s), each with b/a in server CPU per request beside it.
RATIOS = (
    ("threaded", "official"), ("inline", "official"), ("async", "official"),
    ("threaded", "thread-floor"), ("threaded", "floor"), ("inline", "floor"),
)


def command(contender: str, transport: str) -> list[str]:
    if contender == "official":
        cmd = [str(OFFICIAL_PY), str(OFFICIAL_FIXTURE)]
    elif contender in FLOORS:
        cmd = [sys.executable, str(FLOORS[contender][transport])]
    else:
        cmd = [*WIREMCP, "run", f"{FIXTURE}:{SERVERS[contender]}"]
    if transport == "http":
        cmd += ["--host", "127.0.0.1", "--port", "{port}"] if contender in FLOORS else ["--http", "--host", "127.0.0.1", "--port", "{port}"]
    return cmd


def contenders_for(transport: str, official: bool, floors: bool) -> list[str]:
    out = list(SERVERS)
    if official and OFFICIAL_PY.exists():
        out.append("official")
    if floors:
        out += [f for f, paths in FLOORS.items() if transport in paths]
    return out


def measure(args: argparse.Namespace, contenders: list[str]) -> dict[tuple[int, str, bool], list[dict[str, Any]]]:
    """Every (in flight, contender, PM QoS state) ``args.reps`` times, interleaved; the samples."""
    samples: dict[tuple[int, str, bool], list[dict[str, Any]]] = {}
    for rep in range(args.reps):
        order = contenders if rep % 2 == 0 else contenders[::-1]
        for inflight in args.inflight:
            for contender in order:
                for qos in pmqos.modes(args.pm_qos, rep):
                    with pmqos.held(qos):
                        res = driver.run_case(
                            command(contender, args.transport), transport=args.transport, era=args.era,
                            inflight=inflight, payload_size=args.payload, duration=args.duration, warmup=args.warmup,
                            cwd=str(ROOT), impl=contender,
                        )
                    if not res.ok:
                        print(f"{contender} {inflight}x: FAILED {'; '.join(res.error_messages)[:300]}", file=sys.stderr)
                    sample = asdict(res)
                    sample["pm_qos"] = qos
                    samples.setdefault((inflight, contender, qos), []).append(sample)
                    print(f"{contender:12} {inflight:3}x {pmqos.label(qos):10} {res.rps:9,.0f} req/s  "
                          f"cpu {res.server_cpu_us_per_req:6.1f} µs/req", file=sys.stderr)
    return samples


def report(args: argparse.Namespace, contenders: list[str],
           samples: dict[tuple[int, str, bool], list[dict[str, Any]]]) -> tuple[str, dict[str, float]]:
    """The Markdown tables (every sample; the ratios) and the ratios by name."""

    def median(inflight: int, contender: str, qos: bool, key: str) -> float:
        values = sorted(s[key] for s in samples.get((inflight, contender, qos), []) if s["ok"])
        return values[len(values) // 2] if values else float("nan")

    states = pmqos.modes(args.pm_qos)
    lines = [f"{args.transport}, {args.era}, {args.payload} B payload, {args.duration:g} s window, "
             f"median of {args.reps}", "",
             "| in flight | PM QoS | contender | req/s | p50 ms | server CPU µs/req |", "| --- | --- | --- | ---: | ---: | ---: |"]
    for inflight in args.inflight:
        for qos in states:
            for c in contenders:
                lines.append(f"| {inflight} | {'on' if qos else 'off'} | {c} | {median(inflight, c, qos, 'rps'):,.0f} | "
                             f"{median(inflight, c, qos, 'p50_us') / 1e3:.3f} | "
                             f"{median(inflight, c, qos, 'server_cpu_us_per_req'):.1f} |")
    # Throughput ratios first (the target), server CPU per request beside each.
    pairs = [(a, b) for a, b in RATIOS if a in contenders and b in contenders]
    lines += ["", "| in flight | PM QoS | ratio | req/s ratio | server CPU ratio (inverse) | target |",
              "| --- | --- | --- | ---: | ---: | --- |"]
    ratios: dict[str, float] = {}
    for inflight in args.inflight:
        for qos in states:
            for a, b in pairs:
                rps = median(inflight, a, qos, "rps") / median(inflight, b, qos, "rps")
                cpu = median(inflight, b, qos, "server_cpu_us_per_req") / median(inflight, a, qos, "server_cpu_us_per_req")
                tag = f"{inflight}x {'on' if qos else 'off'}"
                ratios[f"{a}/{b} rps {tag}"] = rps
                ratios[f"{b}/{a} cpu {tag}"] = cpu
                target = ""
                if (a, b) == ("threaded", "official"):
                    target = f"≥10×: {'met' if rps >= 10 else '**not met**'}"
                lines.append(f"| {inflight} | {'on' if qos else 'off'} | {a}/{b} | {rps:.2f}× | {cpu:.2f}× | {target} |")
    lines.append("")
    for inflight in args.inflight:
        for qos in states:
            cpu = {c: median(inflight, c, qos, "server_cpu_us_per_req") for c in contenders}
            ratios[f"threaded/inline cpu {inflight}x {'on' if qos else 'off'}"] = cpu["threaded"] / cpu["inline"]
            lines.append(f"{inflight}x in flight, {pmqos.label(qos)}: the thread costs "
                         f"{cpu['threaded'] - cpu['inline']:.1f} µs/req of server CPU "
                         f"(threaded/inline {cpu['threaded'] / cpu['inline']:.2f}×, async/inline "
                         f"{cpu['async'] / cpu['inline']:.2f}×)")
    return "\n".join(lines) + "\n", ratios


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--transport", choices=driver.TRANSPORTS, default="stdio")
    ap.add_argument("--era", choices=driver.ERAS, default="modern")
    ap.add_argument("--inflight", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--payload", type=int, default=100)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--reps", type=int, default=1, help="repetitions (the median is shown)")
    ap.add_argument("--no-official", action="store_true")
    ap.add_argument("--no-floor", action="store_true", help="leave out the floors (raw_echo.py, raw_thread_echo.py)")
    ap.add_argument("--pm-qos", choices=pmqos.MODES, default="both",
                    help="hold the PM QoS CPU latency request at 0 (on), not (off), or take every sample both ways (both)")
    ap.add_argument("--json", dest="json_path")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    contenders = contenders_for(args.transport, not args.no_official, not args.no_floor)
    samples = measure(args, contenders)
    text, ratios = report(args, contenders, samples)
    print("\n" + text)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({
            "samples": {f"{k[0]}/{k[1]}/{'on' if k[2] else 'off'}": v for k, v in samples.items()},
            "ratios": ratios, "table": text}, indent=1))
    return 0 if all(s["ok"] for runs in samples.values() for s in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
