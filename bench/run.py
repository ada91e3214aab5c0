"""Run the wiremcp vs official-SDK server benchmark and print a Markdown table.

    python bench/run.py                 # every case, 3 reps, 2 s windows
    python bench/run.py --quick         # 2 reps, 1 s windows
    python bench/run.py --tiny          # smoke test: 1 rep, 0.2 s windows
    python bench/run.py --only stdio --impl wiremcp --json out.json
    python bench/run.py --only http --wiremcp-http-server uvicorn

wiremcp's HTTP rows run on its native server and, as an extra column, on
uvicorn (``--wiremcp-http-server both``, the default); ``native`` or
``uvicorn`` runs one of them only.

Cases are (transport, era, in-flight, payload). Each case starts a fresh
server process, measures its cold start, warms it up, then measures a
window of load (see driver.py). The implementations are interleaved case by
case (A B, then B A on the next repetition) so that drift in machine load
hits both alike. The table shows median [min-max] over repetitions and the
ratio wiremcp/official of the medians; the "better" column says which
direction is good for that metric.

The official SDK lives in bench/.venv-official (bench/setup_official.sh);
it is created on first use when the official implementation is selected.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OFFICIAL_VENV = BENCH / ".venv-official"
OFFICIAL_PY = OFFICIAL_VENV / "bin" / "python"
OFFICIAL_FIXTURE = BENCH / "fixtures" / "official_echo.py"
WIREMCP_BIN = Path(os.environ.get("WIREMCP_BIN", ROOT / ".venv" / "bin" / "wiremcp"))
WIREMCP_EXAMPLE = ROOT / "examples" / "echo.py"

IMPLS = ("wiremcp", "official")
#: The HTTP servers wiremcp can run on (``wiremcp run --http --server X``).
HTTP_SERVERS = ("uvicorn",)
PAYLOADS = {100: "100 B", 10_000: "10 KB", 1_000_000: "1 MB"}
INFLIGHT = (1, 16)


def contenders(impls: Sequence[str], http_servers: Sequence[str]) -> list[str]:
    """The columns of the table: ``wiremcp`` (stdio; HTTP on the first of ``http_servers``),
    ``wiremcp-<server>`` for a second HTTP server (HTTP rows only), ``official``."""
    out: list[str] = []
    if "wiremcp" in impls:
        out.append("wiremcp")
        out += [f"wiremcp-{server}" for server in http_servers[1:]]
    if "official" in impls:
        out.append("official")
    return out


def applies(contender: str, transport: str) -> bool:
    return transport == "http" or not contender.startswith("wiremcp-")


def http_server_of(contender: str, http_servers: Sequence[str]) -> str | None:
    if not contender.startswith("wiremcp"):
        return None
    return contender.partition("-")[2] or http_servers[0]


def server_command(impl: str, transport: str, http_servers: Sequence[str] = HTTP_SERVERS) -> list[str]:
    if impl.startswith("wiremcp"):
        cmd = [str(WIREMCP_BIN), "run", str(WIREMCP_EXAMPLE)]
        if transport == "http":
            cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}", "--server", str(http_server_of(impl, http_servers))]
        return cmd
    cmd = [str(OFFICIAL_PY), str(OFFICIAL_FIXTURE)]
    if transport == "http":
        cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
    return cmd


# --------------------------------------------------------------------------
# Metrics shown in the table: (key, label, unit, higher_is_better, scale)

CASE_METRICS: list[tuple[str, str, str, bool, float]] = [
    ("rps", "throughput", "req/s", True, 1.0),
    ("p50_us", "latency p50", "ms", False, 1e-3),
    ("p99_us", "latency p99", "ms", False, 1e-3),
    ("server_cpu_us_per_req", "server CPU", "µs/req", False, 1.0),
    ("peak_rss_mib", "peak RSS", "MiB", False, 1.0),
]
COLD_METRIC = ("cold_start_ms", "cold start", "ms", False, 1.0)


def _fmt(v: float) -> str:
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _cell(values: list[float]) -> str:
    if not values:
        return "—"
    med = statistics.median(values)
    if len(values) == 1:
        return _fmt(med)
    return f"{_fmt(med)} [{_fmt(min(values))}–{_fmt(max(values))}]"


def _ratio(w: list[float], o: list[float]) -> str:
    if not w or not o:
        return "—"
    mo = statistics.median(o)
    if mo == 0:
        return "—"
    return f"{statistics.median(w) / mo:.2f}×"


def _label(contender: str) -> str:
    if contender.startswith("wiremcp-"):
        return f"wiremcp on {contender.partition('-')[2]}"
    return contender


def build_table(
    samples: list[dict[str, Any]],
    unavailable: dict[str, str],
    impls: Sequence[str],
    http_servers: Sequence[str] = ("uvicorn",),
) -> str:
    """One Markdown row per (transport, era, in-flight, payload, metric); one value column per
    contender, then one ratio column per wiremcp contender (against official)."""
    by_case: dict[tuple[str, str, int, int], dict[str, list[dict[str, Any]]]] = {}
    for s in samples:
        key = (s["transport"], s["era"], s["inflight"], s["payload"])
        by_case.setdefault(key, {}).setdefault(s["impl"], []).append(s)

    def cell_for(
        runs: list[dict[str, Any]] | None, impl: str, transport: str, era: str, getter: Callable[[dict[str, Any]], float]
    ) -> tuple[str, list[float]]:
        if f"{impl}/{transport}" in unavailable:
            return "n/a (not available)", []
        reason = unavailable.get(f"{impl}/{transport}/{era}")
        if reason is not None:
            return ("n/a (era not supported)" if reason.startswith(driver.LEGACY_ERA_UNSUPPORTED) else "n/a (not available)"), []
        runs = [r for r in runs or [] if r["available"]]
        if not runs:
            return "—", []
        bad = [r for r in runs if not r["ok"]]
        if bad:
            errs = sum(r["errors"] for r in bad)
            return f"FAILED ({errs} error{'s' if errs != 1 else ''})", []
        vals = [getter(r) for r in runs]
        return _cell(vals), vals

    o_name = "official"
    # Every contender in the fixed order (so a column exists even if it was unavailable).
    columns = contenders(IMPLS, http_servers)
    ours = [c for c in columns if c != o_name]
    header = ["transport", "era", "in flight", "payload", "metric", "better"]
    header += [f"{_label(c)} median [min–max]" for c in columns]
    header += [f"{_label(c)}/official" for c in ours]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(transport: str, era: str, inflight: str, payload: str, metric: tuple[str, str, str, bool, float],
            runs: dict[str, list[dict[str, Any]]]) -> str:
        key, label, unit, higher, scale = metric
        cells, values = [], {}
        for c in columns:
            if not applies(c, transport):
                cells.append("—")
                values[c] = []
                continue
            cell, vals = cell_for(runs.get(c), c, transport, era, lambda r: r[key] * scale)
            cells.append(cell)
            values[c] = vals
        ratios = [_ratio(values[c], values[o_name]) for c in ours]
        return (f"| {transport} | {era} | {inflight} | {payload} | {label} ({unit}) | {'↑' if higher else '↓'} | "
                + " | ".join(cells + ratios) + " |")

    transports = sorted({k[0] for k in by_case}, key=lambda t: driver.TRANSPORTS.index(t))
    eras = sorted({k[1] for k in by_case}, key=lambda e: driver.ERAS.index(e))
    for transport in transports:
        for era in eras:
            keys = sorted(k for k in by_case if k[0] == transport and k[1] == era)
            if not keys:
                continue
            # cold start: one row per (transport, era), pooled over its cases
            pooled = {c: [r for k in keys for r in by_case[k].get(c, [])] for c in columns}
            lines.append(row(transport, era, "—", "—", COLD_METRIC, pooled))
            for k in keys:
                _, _, inflight, payload = k
                for metric in CASE_METRICS:
                    lines.append(row(transport, era, str(inflight), PAYLOADS.get(payload, f"{payload} B"), metric, by_case[k]))
    legend = (
        "\n↑ = higher is better, ↓ = lower is better. The ratio columns are ratios of the "
        "medians, wiremcp/official: for ↑ rows above 1 means wiremcp is better, for ↓ rows "
        f"below 1 means wiremcp is better. wiremcp's HTTP rows: `wiremcp run --http --server {http_servers[0]}`"
        + (f"; the \"wiremcp on {http_servers[1]}\" column: the same app with `--server {http_servers[1]}` "
           "(HTTP rows only)." if len(http_servers) > 1 else ".")
    )
    if set(impls) != set(IMPLS):
        legend += f" Only {', '.join(impls)} was run."
    return "\n".join(lines) + "\n" + legend + "\n"


# --------------------------------------------------------------------------


def _version_of(python: Path, dist: str) -> str | None:
    try:
        out = subprocess.run(
            [str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
            capture_output=True, text=True, timeout=30,
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def ensure_official() -> None:
    if OFFICIAL_PY.exists():
        return
    print("bench/.venv-official is missing; running bench/setup_official.sh", file=sys.stderr)
    subprocess.run(["bash", str(BENCH / "setup_official.sh")], check=True)


def probe(impl: str, transport: str, http_servers: Sequence[str] = HTTP_SERVERS) -> str | None:
    """None if the server answers a first tools/call, else why not. Also
    primes the bytecode caches so that cold-start samples are comparable."""
    res = driver.run_case(
        server_command(impl, transport, http_servers), transport=transport, era="modern", inflight=1,
        payload_size=100, duration=0.0, warmup=0.0, min_requests=1, cwd=str(ROOT), impl=impl,
    )
    if not res.available:
        return "; ".join(res.error_messages)[:600] or "not available"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", choices=("wiremcp", "official", "both"), default="both")
    ap.add_argument("--only", choices=driver.TRANSPORTS, help="run one transport only")
    ap.add_argument("--era", choices=driver.ERAS, help="run one era only")
    ap.add_argument("--reps", type=int, help="repetitions of every case (default 3)")
    ap.add_argument("--duration", type=float, help="measured window per case, seconds (default 2)")
    ap.add_argument("--warmup", type=float, help="load before the window, seconds (default 0.5)")
    ap.add_argument("--payloads", help="comma-separated payload sizes in bytes (default 100,10000,1000000)")
    ap.add_argument("--inflight", help="comma-separated in-flight counts (default 1,16)")
    ap.add_argument("--quick", action="store_true", help="2 reps, 1 s windows, 0.3 s warm-up")
    ap.add_argument("--tiny", action="store_true", help="smoke test: 1 rep, 0.2 s windows")
    ap.add_argument("--json", dest="json_path", help="raw samples (default bench/results/run-<time>.json)")
    ap.add_argument(
        "--wiremcp-http-server", choices=("native", "uvicorn", "both"), default="both",
        help="wiremcp's HTTP server: native, uvicorn, or both (native in the wiremcp column, "
             "uvicorn as an extra column; default)",
    )
    args = ap.parse_args(argv)

    reps, duration, warmup, min_requests = 3, 2.0, 0.5, 10
    if args.quick:
        reps, duration, warmup = 2, 1.0, 0.3
    if args.tiny:
        reps, duration, warmup, min_requests = 1, 0.2, 0.05, 3
    reps = args.reps if args.reps is not None else reps
    duration = args.duration if args.duration is not None else duration
    warmup = args.warmup if args.warmup is not None else warmup
    payloads = [int(p) for p in args.payloads.split(",")] if args.payloads else list(PAYLOADS)
    inflights = [int(n) for n in args.inflight.split(",")] if args.inflight else list(INFLIGHT)
    transports = [args.only] if args.only else list(driver.TRANSPORTS)
    eras = [args.era] if args.era else list(driver.ERAS)
    impls = list(IMPLS) if args.impl == "both" else [args.impl]
    http_servers = list(HTTP_SERVERS) if args.wiremcp_http_server == "both" else [args.wiremcp_http_server]
    runners = contenders(impls, http_servers)

    if "official" in impls:
        ensure_official()

    started = time.time()
    meta: dict[str, Any] = {
        "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv[1:] if argv is None else list(argv),
        "reps": reps, "duration_s": duration, "warmup_s": warmup, "min_requests": min_requests,
        "payloads": payloads, "inflight": inflights, "transports": transports, "eras": eras, "impls": impls,
        "wiremcp_http_servers": http_servers, "contenders": runners,
        "driver_python": sys.version.split()[0], "driver_json": "orjson" if "orjson" in sys.modules else "json",
        "machine": platform.platform(), "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(),
        "commands": {f"{c}/{t}": server_command(c, t, http_servers) for c in runners for t in transports
                     if applies(c, t)},
    }
    if "official" in impls:
        meta["mcp_version"] = _version_of(OFFICIAL_PY, "mcp")
        meta["uvicorn_version"] = _version_of(OFFICIAL_PY, "uvicorn")
    if "wiremcp" in impls:
        wpy = WIREMCP_BIN.parent / "python"
        meta["wiremcp_version"] = _version_of(wpy, "wiremcp") if wpy.exists() else None

    unavailable: dict[str, str] = {}
    for transport in transports:
        for impl in runners:
            if not applies(impl, transport):
                continue
            reason = probe(impl, transport, http_servers)
            if reason:
                unavailable[f"{impl}/{transport}"] = reason
                print(f"{impl} over {transport}: not available ({reason})", file=sys.stderr)

    cases = [(t, e, n, p) for t in transports for e in eras for n in inflights for p in payloads]
    runnable = list(runners)
    total = reps * sum(1 for c in cases for r in runnable if applies(r, c[0]))
    print(
        f"{len(cases)} cases × {len(runnable)} contender(s) × {reps} rep(s) = {total} runs, "
        f"window {duration:g} s, warm-up {warmup:g} s",
        file=sys.stderr,
    )
    samples: list[dict[str, Any]] = []
    done = 0
    for rep in range(reps):
        order = runnable if rep % 2 == 0 else list(reversed(runnable))
        for transport, era, inflight, payload in cases:
            for impl in order:
                if not applies(impl, transport):
                    continue
                done += 1
                if f"{impl}/{transport}" in unavailable or f"{impl}/{transport}/{era}" in unavailable:
                    continue
                res = driver.run_case(
                    server_command(impl, transport, http_servers), transport=transport, era=era, inflight=inflight,
                    payload_size=payload, duration=duration, warmup=warmup, min_requests=min_requests,
                    cwd=str(ROOT), impl=impl,
                )
                row = asdict(res)
                row["rep"] = rep
                row["http_server"] = http_server_of(impl, http_servers) if transport == "http" else None
                samples.append(row)
                if not res.available:
                    # e.g. no legacy era: skip the rest of this (impl, transport, era)
                    reason = "; ".join(res.error_messages)[:600] or "not available"
                    unavailable[f"{impl}/{transport}/{era}"] = reason
                    print(f"[{done}/{total}] {impl:15} {transport:5} {era:6} not available: {reason}", file=sys.stderr)
                    continue
                status = "ok" if res.ok else f"FAILED: {'; '.join(res.error_messages)[:300]}"
                print(
                    f"[{done}/{total}] {impl:15} {transport:5} {era:6} {inflight:2}× {PAYLOADS.get(payload, payload)!s:6} "
                    f"{res.rps:9,.0f} req/s  p50 {res.p50_us / 1e3:7.2f} ms  cpu {res.server_cpu_us_per_req:7.0f} µs/req  {status}",
                    file=sys.stderr,
                )

    meta["elapsed_s"] = round(time.time() - started, 1)
    meta["loadavg_end"] = os.getloadavg()
    failed = [s for s in samples if s["available"] and not s["ok"]]
    table = build_table(samples, unavailable, impls, http_servers)

    out = Path(args.json_path) if args.json_path else BENCH / "results" / f"run-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(
        driver.dumps({"meta": meta, "unavailable": unavailable, "samples": samples, "table": table})
    )

    print(table)
    for key, reason in unavailable.items():
        print(f"- {key}: not available: {reason}")
    print(f"\nruns: {sum(s['available'] for s in samples)}, failed: {len(failed)}, errors: {sum(s['errors'] for s in samples)}, "
          f"elapsed: {meta['elapsed_s']} s; raw samples: {out}")
    if not any(s["available"] for s in samples):
        print("nothing ran: every selected implementation was unavailable", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
