"""HTTP at one request in flight: wiremcp (native, uvicorn) against the floor and the official SDK.

    python bench/http_floor.py                # unpinned
    python bench/http_floor.py --pin cross    # driver on CPU 0, server on CPU 1
    python bench/http_floor.py --pin same     # driver and server both on CPU 1

Runs the echo case (modern era, 100 B, 1 in flight) for four servers,
interleaved over ``--reps`` repetitions: ``fixtures/raw_http.py`` (the floor:
no framework at all), wiremcp on its native server, wiremcp on uvicorn, and
the official SDK. Prints req/s (median [min-max]) and its ratio to the
official SDK, server CPU per request split into user and system time, and
the driver's own CPU per request. Pinning shows how much of the 1-in-flight
figure is the scheduler's: on one core a wake-up is a context switch, on two
cores an inter-processor interrupt and an exit from idle.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402

ROOT = HERE.parent
SERVERS = {
    "floor": [str(ROOT / ".venv/bin/python"), str(HERE / "fixtures/raw_http.py"), "--port", "{port}"],
    "native": [str(ROOT / ".venv/bin/wiremcp"), "run", str(ROOT / "examples/echo.py"), "--http", "--host",
               "127.0.0.1", "--port", "{port}", "--server", "native"],
    "uvicorn": [str(ROOT / ".venv/bin/wiremcp"), "run", str(ROOT / "examples/echo.py"), "--http", "--host",
                "127.0.0.1", "--port", "{port}", "--server", "uvicorn"],
    "official": [str(HERE / ".venv-official/bin/python"), str(HERE / "fixtures/official_echo.py"), "--http",
                 "--host", "127.0.0.1", "--port", "{port}"],
}


def user_sys(pids: list[int]) -> tuple[float, float]:
    user = system = 0
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        user += int(fields[11]) + int(fields[13])
        system += int(fields[12]) + int(fields[14])
    return user / driver.CLK_TCK, system / driver.CLK_TCK


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pin", choices=("none", "same", "cross"), default="none")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=2.0)
    args = ap.parse_args()

    samples: list[tuple[float, float]] = []
    measure = driver.cpu_seconds

    def recording(pids: list[int]) -> float:  # the driver reads CPU at the window's edges
        samples.append(user_sys(pids))
        return measure(pids)

    driver.cpu_seconds = recording
    prefix: list[str] = []
    if args.pin == "same":
        os.sched_setaffinity(0, {1})
        prefix = ["taskset", "-c", "1"]
    elif args.pin == "cross":
        os.sched_setaffinity(0, {0})
        prefix = ["taskset", "-c", "1"]

    results: dict[str, list[dict[str, float]]] = {name: [] for name in SERVERS}
    load_start = os.getloadavg()
    for rep in range(args.reps):
        names = list(SERVERS) if rep % 2 == 0 else list(reversed(SERVERS))
        for name in names:
            res = driver.run_case(prefix + SERVERS[name], transport="http", era="modern", inflight=1,
                                  payload_size=100, duration=args.duration, warmup=0.5, cwd=str(ROOT), impl=name)
            if not res.ok:
                print(f"{name}: failed: {res.error_messages}", file=sys.stderr)
                return 1
            (u0, s0), (u1, s1) = samples[-2], samples[-1]
            results[name].append({
                "rps": res.rps, "cpu": res.server_cpu_us_per_req, "user": (u1 - u0) / res.requests * 1e6,
                "sys": (s1 - s0) / res.requests * 1e6, "driver": res.client_cpu_us_per_req, "p50": res.p50_us,
            })
    load_end = os.getloadavg()
    where = {"none": "unpinned", "same": "driver and server on CPU 1",
             "cross": "driver on CPU 0, server on CPU 1"}[args.pin]
    print(f"HTTP, modern, 100 B, 1 in flight; {where}; {args.reps} reps; "
          f"load average {load_start[0]:.2f} -> {load_end[0]:.2f}\n")
    print("| server | req/s, median [min–max] | ×official | server CPU µs/req (user + sys) | driver CPU µs/req | p50 µs |")
    print("|---|---:|---:|---:|---:|---:|")
    official = statistics.median(r["rps"] for r in results["official"])
    for name, runs in results.items():
        def med(key: str) -> float:
            return statistics.median(r[key] for r in runs)
        rps = [r["rps"] for r in runs]
        print(f"| {name} | {med('rps'):,.0f} [{min(rps):,.0f}–{max(rps):,.0f}] | {med('rps') / official:.2f} | "
              f"{med('cpu'):.1f} ({med('user'):.1f} + {med('sys'):.1f}) | {med('driver'):.1f} | {med('p50'):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
