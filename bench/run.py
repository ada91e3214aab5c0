"""One run, one table: wiremcp beside the official SDK and beside the floors, with the targets.

    python bench/run.py                 # 5 reps, 2 s windows (about 5 min)
    python bench/run.py --quick         # 3 reps, 1 s windows
    python bench/run.py --tiny          # smoke test: 1 rep, 0.2 s windows
    python bench/run.py --only stdio --impl wiremcp,floor --json out.json
    python bench/run.py --quick --pm-qos both --areas all   # everything: each run with and without the PM QoS
                                                            # request, then sync tools, scale-out, tasks (areas.py)

Three contenders serve the same echo tool (modern era, 2026-07-28):

- ``wiremcp``: ``wiremcp run examples/echo.py`` (stdio) and
  ``wiremcp run examples/echo.py --http`` (Streamable HTTP on uvicorn);
- ``official``: ``bench/fixtures/official_echo.py`` on the official ``mcp``
  SDK (``bench/.venv-official``, created on first use);
- ``floor``: for stdio ``fixtures/raw_echo.py`` (a bare orjson loop that
  validates nothing), for HTTP ``fixtures/raw_asgi.py`` (a bare ASGI handler
  on uvicorn set up as ``wiremcp run --http`` sets it up); both run on
  wiremcp's interpreter.

Cases: stdio 100 B and 10 KB at 1 in flight, stdio 100 B at 16 in flight,
HTTP 100 B at 1 and 16 connections. Each (contender, case, repetition)
starts a fresh server process and also gives a cold start (spawn to the
first reply). With stdio, every repetition also starts each contender once
per era for the host handshake (``handshake.py``: what a host sends first,
``server/discover`` or ``initialize``, then ``tools/list``, then a
``tools/call``; spawn to the call's reply). Then, with HTTP, the idle streams of
``idle_streams.py`` (N silent ``subscriptions/listen`` and legacy GET
streams per contender, server RSS per stream; ``--idle-streams``).
The contenders run back to back for every case, in an order
that rotates on every repetition, so that drift in machine load hits all
alike; only figures from one run are compared. The table shows median
[min-max] over the repetitions and the ratios of the medians
wiremcp/official and wiremcp/floor, and marks each target met or not met.
run.py exits 1 if any run had an error.

While it runs, run.py holds the kernel's PM QoS CPU latency request at 0
(``/dev/cpu_dma_latency``, when it may open it: as root), so that idle CPUs
poll instead of halting, as latency benchmarks such as cyclictest do: on a
virtual machine whose idle CPUs halt, every wake-up from halt otherwise
costs tens of microseconds, charged to each round trip of every contender
alike, and the 1-in-flight ratios then measure the hypervisor. It takes no
CPU time from a runnable thread (the idle loop polls only while nothing else
runs). ``--no-pm-qos`` (``--pm-qos off``) leaves the machine's setting;
``--pm-qos both`` takes every run twice, with and without the request, in an
alternating order, and prints the ratios of both side by side (bench/pmqos.py);
the JSON records which.
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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver  # noqa: E402
import idle_streams  # noqa: E402
import handshake  # noqa: E402

from pmqos import CPU_DMA_LATENCY, hold_cpu_latency  # noqa: E402
import pmqos  # noqa: E402
import areas  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OFFICIAL_VENV = BENCH / ".venv-official"
OFFICIAL_PY = OFFICIAL_VENV / "bin" / "python"
FIXTURES = BENCH / "fixtures"
WIREMCP_BIN = Path(os.environ.get("WIREMCP_BIN", ROOT / ".venv" / "bin" / "wiremcp"))
WIREMCP_EXAMPLE = ROOT / "examples" / "echo.py"

CONTENDERS = ("wiremcp", "official", "floor")


@dataclass(frozen=True)
class Case:
    transport: str
    inflight: int
    payload: int

    @property
    def label(self) -> str:
        size = {100: "100 B", 10_000: "10 KB"}.get(self.payload, f"{self.payload} B")
        if self.transport == "stdio":
            return f"stdio {size}, {self.inflight} in flight"
        return f"HTTP {size}, {self.inflight} connection{'s' if self.inflight > 1 else ''}"


CASES = (
    Case("stdio", 1, 100),
    Case("stdio", 1, 10_000),
    Case("stdio", 16, 100),
    Case("http", 1, 100),
    Case("http", 16, 100),
)


@dataclass(frozen=True)
class Target:
    """``ratio`` of the medians wiremcp/``against`` must be >= ``bound`` (``higher``) or <= it."""

    against: str
    bound: float
    higher: bool = True

    def text(self) -> str:
        return f"{'≥' if self.higher else '≤'}{self.bound:g}× {self.against}"

    def met(self, ratio: float) -> bool:
        return ratio >= self.bound if self.higher else ratio <= self.bound


def python_of_wiremcp() -> Path:
    return WIREMCP_BIN.parent / "python"


def server_command(contender: str, transport: str) -> list[str]:
    if contender == "wiremcp":
        cmd = [str(WIREMCP_BIN), "run", str(WIREMCP_EXAMPLE)]
        if transport == "http":
            cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
        return cmd
    if contender == "official":
        cmd = [str(OFFICIAL_PY), str(FIXTURES / "official_echo.py")]
        if transport == "http":
            cmd += ["--http", "--host", "127.0.0.1", "--port", "{port}"]
        return cmd
    if transport == "stdio":
        return [str(python_of_wiremcp()), str(FIXTURES / "raw_echo.py")]
    return [str(python_of_wiremcp()), str(FIXTURES / "raw_asgi.py"), "--host", "127.0.0.1", "--port", "{port}"]


# --------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Row:
    label: str
    unit: str
    higher: bool
    key: str  # CaseResult field
    cases: tuple[Case, ...]  # samples pooled over these cases
    targets: tuple[Target, ...] = ()
    handshake: str = ""  # an era: the row is over the host handshakes of that era instead


ROWS = (
    Row("stdio 100 B, 1 in flight", "req/s", True, "rps", (CASES[0],), (Target("official", 10), Target("floor", 0.8))),
    Row("stdio 10 KB, 1 in flight", "req/s", True, "rps", (CASES[1],), (Target("official", 10), Target("floor", 0.8))),
    Row("stdio 100 B, 16 in flight", "req/s", True, "rps", (CASES[2],)),
    Row("stdio cold start to first reply", "ms", False, "cold_start_ms", CASES[:3], (Target("floor", 2, higher=False),)),
    Row("host handshake, modern: discover → list → call", "ms", False, "cold_start_ms", CASES[:1],
        (Target("floor", 2, higher=False),), handshake="modern"),
    Row("host handshake, legacy: initialize → list → call", "ms", False, "cold_start_ms", CASES[:1],
        (Target("floor", 2, higher=False),), handshake="legacy"),
    Row("server CPU, host handshake, modern", "ms", False, "server_cpu_ms", CASES[:1], handshake="modern"),
    Row("server CPU, host handshake, legacy", "ms", False, "server_cpu_ms", CASES[:1], handshake="legacy"),
    Row("HTTP 100 B, 1 connection", "req/s", True, "rps", (CASES[3],), (Target("official", 5),)),
    Row("HTTP 100 B, 16 connections", "req/s", True, "rps", (CASES[4],), (Target("official", 5), Target("floor", 0.8))),
    Row("server CPU, stdio 100 B, 1 in flight", "µs/req", False, "server_cpu_us_per_req", (CASES[0],)),
    Row("server CPU, stdio 10 KB, 1 in flight", "µs/req", False, "server_cpu_us_per_req", (CASES[1],)),
    Row("server CPU, HTTP 100 B, 16 connections", "µs/req", False, "server_cpu_us_per_req", (CASES[4],)),
    Row("peak RSS, stdio 100 B", "MiB", False, "peak_rss_mib", (CASES[0],)),
    Row("peak RSS, HTTP 100 B, 16 connections", "MiB", False, "peak_rss_mib", (CASES[4],)),
)


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


def build_table(samples: list[dict[str, Any]], unavailable: dict[str, str],
                handshakes: Sequence[dict[str, Any]] = ()) -> str:
    """One Markdown row per `Row`: a column per contender, the ratios wiremcp/official and
    wiremcp/floor, and the targets with met / not met."""
    header = ["", "wiremcp", "official", "floor", "wiremcp/official", "wiremcp/floor", "target", ""]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * 5 + "---|---|"]
    for row in ROWS:
        values: dict[str, list[float]] = {}
        cells: list[str] = []
        for c in CONTENDERS:
            if row.handshake:
                runs = [h for h in handshakes if h["impl"] == c and h["available"] and h["era"] == row.handshake]
            else:
                runs = [s for s in samples if s["impl"] == c and s["available"]
                        and Case(s["transport"], s["inflight"], s["payload"]) in row.cases]
            if not runs and row.handshake:
                cells.append("—")
                values[c] = []
            elif f"{c}/{row.cases[0].transport}" in unavailable:
                cells.append("n/a")
                values[c] = []
            elif any(not r["ok"] for r in runs):
                errs = sum(r["errors"] for r in runs)
                cells.append(f"FAILED ({errs} error{'s' if errs != 1 else ''})")
                values[c] = []
            else:
                values[c] = [float(r[row.key]) for r in runs]
                cells.append(_cell(values[c]))
        ratios: dict[str, float | None] = {}
        for other in ("official", "floor"):
            w, o = values["wiremcp"], values[other]
            ratios[other] = statistics.median(w) / statistics.median(o) if w and o and statistics.median(o) else None
        cells += [f"{ratios[o]:.2f}×" if ratios[o] is not None else "—" for o in ("official", "floor")]
        verdicts = []
        for t in row.targets:
            r = ratios[t.against]
            verdicts.append("—" if r is None else ("met" if t.met(r) else "**not met**"))
        cells.append("; ".join(t.text() for t in row.targets) or "")
        cells.append("; ".join(verdicts))
        lines.append(f"| {row.label} ({row.unit}, {'↑' if row.higher else '↓'}) | " + " | ".join(cells) + " |")
    legend = (
        "\nmedian [min–max] over the repetitions; ratios are ratios of the medians. ↑ = higher is better, "
        "↓ = lower is better. floor = `fixtures/raw_echo.py` (stdio) / `fixtures/raw_asgi.py` (HTTP); "
        "cold start is pooled over the three stdio cases; host handshake = spawn to the reply of the "
        "tools/call after server/discover (initialize, notifications/initialized) and tools/list, one "
        "process per contender, era and repetition."
    )
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


def probe(contender: str, transport: str) -> str | None:
    """None if the server answers a first tools/call, else why not. Also
    primes the bytecode caches so that cold-start samples are comparable."""
    res = driver.run_case(
        server_command(contender, transport), transport=transport, era="modern", inflight=1,
        payload_size=100, duration=0.0, warmup=0.0, min_requests=1, cwd=str(ROOT), impl=contender,
    )
    if not res.available or not res.ok:
        return "; ".join(res.error_messages)[:600] or "not available"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--impl", default=",".join(CONTENDERS),
                    help="comma-separated contenders among wiremcp, official, floor (default: all three)")
    ap.add_argument("--only", choices=driver.TRANSPORTS, help="run one transport only")
    ap.add_argument("--reps", type=int, help="repetitions of every case (default 5)")
    ap.add_argument("--duration", type=float, help="measured window per case, seconds (default 2)")
    ap.add_argument("--warmup", type=float, help="load before the window, seconds (default 0.5)")
    ap.add_argument("--quick", action="store_true", help="3 reps, 1 s windows, 0.3 s warm-up")
    ap.add_argument("--tiny", action="store_true", help="smoke test: 1 rep, 0.2 s windows")
    ap.add_argument("--json", dest="json_path", help="raw samples (default bench/results/run-<time>.json)")
    ap.add_argument("--idle-streams", metavar="N,N",
                    help="idle-stream counts for the HTTP idle-streams table (default 1000,10000; --tiny: 100; 0: none)")
    ap.add_argument("--no-pm-qos", action="store_true",
                    help=f"leave idle CPUs as the machine sets them (default: hold {CPU_DMA_LATENCY} at 0 for the run)")
    ap.add_argument("--pm-qos", choices=pmqos.MODES,
                    help="on (the default), off (= --no-pm-qos), or both: every run with and without, interleaved")
    areas.add_options(ap)
    args = ap.parse_args(argv)
    args.pm_qos = args.pm_qos or ("off" if args.no_pm_qos else "on")
    qos_fd, qos = ((None, "not asked (--pm-qos off)") if args.pm_qos == "off" else
                   (None, "held at 0 µs for every other run (--pm-qos both)") if args.pm_qos == "both" else hold_cpu_latency(0))
    try:
        return _run(args, ap, qos, sys.argv[1:] if argv is None else list(argv))
    finally:
        if qos_fd is not None:
            os.close(qos_fd)


def _run(args: argparse.Namespace, ap: argparse.ArgumentParser, qos: str, argv: list[str]) -> int:

    reps, duration, warmup, min_requests = 5, 2.0, 0.5, 10
    if args.quick:
        reps, duration, warmup = 3, 1.0, 0.3
    if args.tiny:
        reps, duration, warmup, min_requests = 1, 0.2, 0.05, 3
    reps = args.reps if args.reps is not None else reps
    duration = args.duration if args.duration is not None else duration
    warmup = args.warmup if args.warmup is not None else warmup
    contenders = [c for c in CONTENDERS if c in args.impl.split(",")]
    unknown = set(args.impl.split(",")) - set(CONTENDERS)
    if unknown or not contenders:
        ap.error(f"--impl: unknown contender(s) {sorted(unknown)}; choose among {', '.join(CONTENDERS)}")
    cases = [c for c in CASES if args.only in (None, c.transport)]
    transports = sorted({c.transport for c in cases}, key=driver.TRANSPORTS.index)
    if "official" in contenders:
        ensure_official()
    # Cold start is measured with bytecode caches in place, as after ``pip install`` (which compiles
    # every module): a PYTHONDONTWRITEBYTECODE inherited from the shell would make every cold start
    # of an editable install compile wiremcp from source (about +40 ms), and the probes below write them.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    started = time.time()
    meta: dict[str, Any] = {
        "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": argv,
        "reps": reps, "duration_s": duration, "warmup_s": warmup, "min_requests": min_requests,
        "cases": [asdict(c) for c in cases], "contenders": contenders,
        "driver_python": sys.version.split()[0], "machine": platform.platform(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(), "pm_qos_cpu_latency": qos,
        "commands": {f"{c}/{t}": server_command(c, t) for c in contenders for t in transports},
    }
    if "official" in contenders:
        meta["mcp_version"] = _version_of(OFFICIAL_PY, "mcp")
        meta["official_uvicorn_version"] = _version_of(OFFICIAL_PY, "uvicorn")
    if python_of_wiremcp().exists():
        meta["wiremcp_version"] = _version_of(python_of_wiremcp(), "wiremcp")
        meta["uvicorn_version"] = _version_of(python_of_wiremcp(), "uvicorn")
    try:
        meta["git_head"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                          text=True, timeout=10).stdout.strip()
    except OSError:
        pass

    unavailable: dict[str, str] = {}
    for transport in transports:
        for c in contenders:
            reason = probe(c, transport)
            if reason:
                unavailable[f"{c}/{transport}"] = reason
                print(f"{c} over {transport}: not available ({reason})", file=sys.stderr)

    runnable = [(case, c) for case in cases for c in contenders if f"{c}/{case.transport}" not in unavailable]
    total = reps * len(runnable) * len(pmqos.modes(args.pm_qos))
    print(f"{len(cases)} cases × {len(contenders)} contender(s) × {reps} rep(s): {total} runs, "
          f"window {duration:g} s, warm-up {warmup:g} s; PM QoS CPU latency: {qos}", file=sys.stderr)
    samples: list[dict[str, Any]] = []
    handshakes: list[dict[str, Any]] = []
    shaking = [c for c in contenders if "stdio" in transports and f"{c}/stdio" not in unavailable]
    done = 0
    for rep in range(reps):
        k = rep % len(contenders)
        order = contenders[k:] + contenders[:k]
        for case in cases:
            for c in order:
                if f"{c}/{case.transport}" in unavailable:
                    continue
                for on in pmqos.modes(args.pm_qos, rep):
                    done += 1
                    with pmqos.held(on and args.pm_qos == "both"):
                        res = driver.run_case(
                            server_command(c, case.transport), transport=case.transport, era="modern",
                            inflight=case.inflight, payload_size=case.payload, duration=duration, warmup=warmup,
                            min_requests=min_requests, cwd=str(ROOT), impl=c,
                        )
                    sample = asdict(res)
                    sample["rep"], sample["pm_qos"] = rep, on
                    samples.append(sample)
                    status = "ok" if res.ok else f"FAILED: {'; '.join(res.error_messages)[:300]}"
                    print(f"[{done}/{total}] {c:8} {case.label:28} {pmqos.label(on):10} {res.rps:9,.0f} req/s  cpu "
                          f"{res.server_cpu_us_per_req:7.1f} µs/req  cold {res.cold_start_ms:6.1f} ms  {status}",
                          file=sys.stderr)

        for era in handshake.ERAS:
            for c in order:
                if c not in shaking:
                    continue
                for on in pmqos.modes(args.pm_qos, rep):
                    with pmqos.held(on and args.pm_qos == "both"):
                        hs = handshake.run_handshake(server_command(c, "stdio"), era=era, cwd=str(ROOT), impl=c)
                    h = asdict(hs)
                    h["rep"], h["pm_qos"] = rep, on
                    handshakes.append(h)
                    status = "ok" if hs.ok else f"FAILED: {'; '.join(hs.error_messages)[:300]}"
                    print(f"[handshake] {c:8} {era:6} {pmqos.label(on):10} call answered at {hs.cold_start_ms:6.1f} ms "
                          f"(first reply {hs.first_reply_ms:6.1f} ms), server cpu {hs.server_cpu_ms:5.0f} ms  {status}",
                          file=sys.stderr)

    # Idle streams (idle_streams.py): N silent listen and GET streams per contender, server RSS per stream.
    idle_sizes = [int(x) for x in (args.idle_streams or ("100" if args.tiny else "1000,10000")).split(",") if int(x) > 0]
    idle: list[dict[str, Any]] = []
    if "http" in transports and idle_sizes:
        idle = idle_streams.run(contenders, idle_sizes, log=sys.stderr)
    idle_failed = [r for r in idle if r["available"] and not r["ok"]]

    meta["elapsed_s"] = round(time.time() - started, 1)
    meta["loadavg_end"] = os.getloadavg()
    failed = [s for s in [*samples, *handshakes] if s["available"] and not s["ok"]]
    table = (areas.both_tables(build_table, samples, unavailable, handshakes) if args.pm_qos == "both"
             else build_table(samples, unavailable, handshakes))
    extra = areas.run_areas(args, quick=args.quick or args.tiny, tiny=args.tiny)
    meta["loadavg_after_areas"] = os.getloadavg()

    out = Path(args.json_path) if args.json_path else BENCH / "results" / f"run-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    idle_table = idle_streams.build_table(idle) if idle else ""
    out.write_bytes(driver.dumps({"meta": meta, "unavailable": unavailable, "samples": samples, "handshakes": handshakes,
                                  "table": table, "idle_streams": idle, "idle_streams_table": idle_table, "areas": extra}))

    print(table)
    if idle_table:
        print("Idle streams\n\n" + idle_table)
    for name, area in extra.items():
        print(f"\n### {name}\n\n{area['table']}")
    for key, reason in unavailable.items():
        print(f"- {key}: not available: {reason}")
    la0, la1 = meta["loadavg_start"][0], meta["loadavg_end"][0]
    errors = sum(s["errors"] for s in [*samples, *handshakes])
    print(f"\nruns: {len(samples)} (+{len(handshakes)} handshakes), failed: {len(failed)}, errors: {errors}, "
          f"elapsed: {meta['elapsed_s']} s, load average {la0:.2f} → {la1:.2f}; PM QoS CPU latency: {qos}; "
          f"raw samples: {out}")
    if not samples:
        print("nothing ran: every selected contender was unavailable", file=sys.stderr)
        return 2
    if idle_failed:
        print(f"idle streams: {len(idle_failed)} run(s) failed", file=sys.stderr)
    return 1 if failed or idle_failed or any(not a["ok"] for a in extra.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
