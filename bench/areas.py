"""run.py's hooks for the area benches: sync tools, scale-out, tasks, the HTTP client (issue 29, items 2, 4 to 6).

``run.py --areas all`` (or a comma-separated list of ``sync-tools``,
``scale``, ``tasks``, ``client``) runs each area's own script after the headline cases,
in the same run, with run.py's ``--pm-qos`` mode and a size that follows
``--quick``/``--tiny``; each script writes its samples and its Markdown table
to a JSON file, which run.py keeps under ``areas`` in its own JSON and prints
after the headline table. ``--pm-qos both`` also gives the headline table
twice (`both_tables`): with and without the PM QoS request, and the ratios of
the two side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

BENCH = Path(__file__).resolve().parent
AREAS = ("sync-tools", "scale", "tasks", "client")


def add_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--areas", default="",
                    help=f"after the headline cases, also run these area benches: all, or any of {', '.join(AREAS)}")


def _argv(area: str, mode: str, quick: bool, tiny: bool) -> list[str]:
    if area == "sync-tools":
        size = ["--reps", "1", "--duration", "0.3", "--warmup", "0.1"] if tiny else \
            ["--reps", "3" if not quick else "1", "--duration", "2" if not quick else "1", "--warmup", "0.3"]
        return ["sync_tools.py", "--inflight", "1", "16", *size]
    if area == "scale":
        # open-loop windows at scale.py's default rate per worker in every size; the callgrind instruction
        # counts (about 3 min of start-up under valgrind) only in the full size
        size = ["--reps", "1", "--duration", "0.5", "--warmup", "0.2", "--listeners", "10", "--changes", "5",
                "--legacy-messages", "20", "--rate", "200"] if tiny else \
            ["--reps", "1", "--duration", "2"] if quick else ["--reps", "3", "--duration", "5", "--instr-calls", "200"]
        return ["scale.py", "--workers", "1", "2", "--per-worker", *size]
    if area == "client":  # the target is without the PM QoS request: client_bench.py never sets it
        size = ["--reps", "1", "--calls", "50", "--warmup", "10"] if tiny else \
            ["--reps", "3", "--calls", "1000" if quick else "2000"]
        return ["client_bench.py", "--transport", "http", "--impl", "wiremcp,official", *size]
    size = ["--tiny"] if tiny else ["--quick"] if quick else []
    return ["tasks_bench.py", "--costs", *size]


def run_areas(args: argparse.Namespace, quick: bool, tiny: bool) -> dict[str, dict[str, Any]]:
    """Run the areas ``args.areas`` names; each one's JSON (with ``table``, ``ok`` and ``argv``) by name."""
    names = list(AREAS) if args.areas == "all" else [a for a in args.areas.split(",") if a]
    unknown = set(names) - set(AREAS)
    if unknown:
        raise SystemExit(f"--areas: unknown area(s) {sorted(unknown)}; choose among all, {', '.join(AREAS)}")
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix="wiremcp-area-") as tmp:
            path = Path(tmp) / "area.json"
            pm_qos = [] if name == "client" else ["--pm-qos", args.pm_qos]
            argv = [*_argv(name, args.pm_qos, quick, tiny), *pm_qos, "--json", str(path)]
            print(f"area {name}: {' '.join(argv)}", file=sys.stderr, flush=True)
            started = time.time()
            proc = subprocess.run([sys.executable, str(BENCH / argv[0]), *argv[1:]], cwd=BENCH.parent, stdout=sys.stderr)
            data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {"table": "no result"}
        data["ok"] = proc.returncode == 0
        data["argv"] = argv
        data["elapsed_s"] = round(time.time() - started, 1)
        out[name] = data
    return out


Table = Callable[[list[dict[str, Any]], dict[str, str], Sequence[dict[str, Any]]], str]


def both_tables(build_table: Table, samples: list[dict[str, Any]], unavailable: dict[str, str],
                handshakes: Sequence[dict[str, Any]] = ()) -> str:
    """With ``--pm-qos both``: the headline ratios with and without the request side by side, then both tables."""
    on = [s for s in samples if s.get("pm_qos")]
    off = [s for s in samples if not s.get("pm_qos")]
    lines = ["| | wiremcp/official, PM QoS on | off | wiremcp/floor, PM QoS on | off | wiremcp, on | off |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(s["transport"], s["inflight"], s["payload"]) for s in samples},
                  key=lambda k: (k[0] != "stdio", k[2], k[1]))
    for key in keys:
        for metric, unit in (("rps", "req/s"), ("server_cpu_us_per_req", "server µs/req")):
            cells = []
            med: dict[tuple[str, bool], float | None] = {}
            for impl in ("wiremcp", "official", "floor"):
                for state, subset in ((True, on), (False, off)):
                    vals = [float(s[metric]) for s in subset if s["impl"] == impl and s["ok"] and s["available"]
                            and (s["transport"], s["inflight"], s["payload"]) == key]
                    med[(impl, state)] = statistics.median(vals) if vals else None
            for other in ("official", "floor"):
                for state in (True, False):
                    w, o = med[("wiremcp", state)], med[(other, state)]
                    cells.append(f"{w / o:.2f}×" if w and o else "—")
            for state in (True, False):
                w = med[("wiremcp", state)]
                cells.append(f"{w:,.0f}" if w and w >= 100 else f"{w:.1f}" if w else "—")
            transport, inflight, payload = key
            size = {100: "100 B", 10_000: "10 KB"}.get(payload, f"{payload} B")
            what = f"{inflight} in flight" if transport == "stdio" else f"{inflight} conn."
            lines.append(f"| {transport} {size}, {what} ({unit}) | " + " | ".join(cells) + " |")
    return ("Ratios of the medians with and without the PM QoS CPU latency request (each run taken both ways, "
            "interleaved)\n\n" + "\n".join(lines) + "\n\n### PM QoS on\n\n" + build_table(on, unavailable, [h for h in handshakes if h.get("pm_qos")])
            + "\n### PM QoS off\n\n" + build_table(off, unavailable, [h for h in handshakes if not h.get("pm_qos")]))
