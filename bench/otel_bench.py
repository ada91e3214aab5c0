"""Telemetry off and on: what observability costs per request (docs/observability.md, bench/README.md "Telemetry").

    python bench/otel_bench.py                  # 5 reps, 2 s windows
    python bench/otel_bench.py --quick          # 3 reps, 1 s windows
    python bench/otel_bench.py --tiny           # smoke test: 1 rep, 0.2 s windows

Every mode serves ``examples/echo.py`` with ``wiremcp run`` (the [otel] extra
installed in every mode), beside the floor of run.py (``fixtures/raw_echo.py``,
``fixtures/raw_asgi.py``), so that the ratio to the floor can be compared
with run.py's table:

- ``off``: no ``OTEL_*`` or ``WIREMCP_*`` variable: telemetry off;
- ``json-log``: ``--log-format json`` (one line per request, to a file);
- ``prometheus``: ``--metrics 0`` (HTTP only; nobody scrapes during the window);
- ``otel-sdk``: ``WIREMCP_OTEL=1``, the SDK set up by ``wiremcp run`` with no
  exporter (``OTEL_TRACES_EXPORTER=none``, ``OTEL_METRICS_EXPORTER=none``):
  making the spans and measurements;
- ``otel-otlp``: ``OTEL_EXPORTER_OTLP_ENDPOINT`` pointing at
  ``fixtures/otlp_sink.py`` (a local OTLP/HTTP receiver that reads and drops):
  the spans batched and exported over OTLP, the metrics aggregated, all in
  the server process, whose CPU is measured.

Cases: stdio 100 B at 1 and 16 in flight, HTTP 100 B at 1 and 16
connections. Each (mode, case, repetition) starts a fresh server; the modes
run back to back in an order that rotates every repetition. The table shows
the median server CPU per request (µs, from /proc, the least load-sensitive
figure) and req/s, each mode's difference from ``off``, and the ratio of
``off`` to the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURES = HERE / "fixtures"
PY = Path(sys.executable)
WIREMCP = Path(os.environ.get("WIREMCP_BIN", PY.parent / "wiremcp"))
EXAMPLE = ROOT / "examples" / "echo.py"
MODES = ("off", "json-log", "prometheus", "otel-sdk", "otel-otlp", "floor")
CASES = (("stdio", 1), ("stdio", 16), ("http", 1), ("http", 16))


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}


def command(mode: str, transport: str) -> list[str] | None:
    if mode == "floor":
        if transport == "stdio":
            return [str(PY), str(FIXTURES / "raw_echo.py")]
        return [str(PY), str(FIXTURES / "raw_asgi.py"), "--host", "127.0.0.1", "--port", "{port}"]
    if mode == "prometheus" and transport != "http":
        return None
    cmd = [str(WIREMCP), "run", str(EXAMPLE)]
    if transport == "http":
        cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
    if mode == "json-log":
        cmd += ["--log-format", "json"]
    if mode == "prometheus":
        cmd += ["--metrics", "0"]
    return cmd


def environment(mode: str, sink: str) -> dict[str, str]:
    env = _clean_env()
    if mode == "otel-sdk":
        env.update(WIREMCP_OTEL="1", OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none")
    elif mode == "otel-otlp":
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=sink, OTEL_SERVICE_NAME="bench")
    return env


def drive(mode: str, transport: str, inflight: int, sink: str, duration: float, warmup: float) -> dict[str, Any] | None:
    cmd = command(mode, transport)
    if cmd is None:
        return None
    args = [str(PY), str(HERE / "driver.py"), "--transport", transport, "--inflight", str(inflight),
            "--duration", str(duration), "--warmup", str(warmup), "--", *cmd]
    done = subprocess.run(args, env=environment(mode, sink), capture_output=True, text=True, cwd=ROOT, timeout=300)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(samples: dict[tuple[str, str, int], list[dict[str, Any]]]) -> str:
    lines = [
        "| case | mode | server CPU µs/req | Δ vs off | req/s | ratio to off | off/floor (req/s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for transport, inflight in CASES:
        case = f"{'stdio' if transport == 'stdio' else 'HTTP'} 100 B, {inflight} {'in flight' if transport == 'stdio' else 'conn.'}"
        base = samples.get(("off", transport, inflight), [])
        base_cpu = _median([s["server_cpu_us_per_req"] for s in base])
        base_rps = _median([s["rps"] for s in base])
        floor_rps = _median([s["rps"] for s in samples.get(("floor", transport, inflight), [])])
        for mode in MODES:
            runs = samples.get((mode, transport, inflight))
            if not runs:
                continue
            if any(not s["ok"] for s in runs):
                lines.append(f"| {case} | {mode} | FAILED | | | | |")
                continue
            cpu = _median([s["server_cpu_us_per_req"] for s in runs])
            rps = _median([s["rps"] for s in runs])
            delta = "" if mode in ("off", "floor") else f"{cpu - base_cpu:+.1f}"
            ratio = "" if mode in ("off", "floor") else f"{rps / base_rps:.2f}×"
            floor = f"{base_rps / floor_rps:.2f}×" if mode == "off" else ""
            lines.append(f"| {case} | {mode} | {cpu:.1f} | {delta} | {rps:,.0f} | {ratio} | {floor} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="3 reps, 1 s windows")
    ap.add_argument("--tiny", action="store_true", help="smoke test: 1 rep, 0.2 s windows")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated among {', '.join(MODES)}")
    ap.add_argument("--json", dest="json_path", help="write every sample here")
    args = ap.parse_args(argv)
    if args.quick:
        args.reps, args.duration, args.warmup = 3, 1.0, 0.3
    if args.tiny:
        args.reps, args.duration, args.warmup = 1, 0.2, 0.1
    modes = [m for m in args.modes.split(",") if m]
    sink = subprocess.Popen([str(PY), str(FIXTURES / "otlp_sink.py")], stdout=subprocess.PIPE, text=True)
    assert sink.stdout is not None
    endpoint = sink.stdout.readline().strip()
    samples: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    errors = 0
    try:
        for rep in range(args.reps):
            for transport, inflight in CASES:
                order = modes[rep % len(modes):] + modes[: rep % len(modes)]
                for mode in order:
                    result = drive(mode, transport, inflight, endpoint, args.duration, args.warmup)
                    if result is None:
                        continue
                    errors += 0 if result["ok"] else 1
                    samples.setdefault((mode, transport, inflight), []).append(result)
    finally:
        sink.terminate()
        sink.wait()
    print(f"`python bench/otel_bench.py` {started}, {args.reps} reps, {args.duration:g} s windows, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print(table(samples))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({f"{m}/{t}/{n}": v for (m, t, n), v in samples.items()}, indent=1))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
