"""Coverage per package of wiremcp, from the combined data of a ``coverage run -m pytest``.

    .venv/bin/python -m coverage run -m pytest -q && .venv/bin/python -m coverage combine
    .venv/bin/python tests/coverage_by_package.py [--json out.json]

Lines and branches, summed over each package's files (``wiremcp.jsonrpc``,
``wiremcp.transports.http``...; modules directly in ``wiremcp`` count as
``wiremcp``). docs/testing-hardening.md explains the setup.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import coverage


def by_package(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for name, entry in report["files"].items():
        parts = Path(name).parts
        if "wiremcp" not in parts:
            continue
        inner = parts[parts.index("wiremcp") + 1 : -1]
        package = ".".join(("wiremcp", *inner))
        summary = entry["summary"]
        t = totals[package]
        t[0] += summary["num_statements"]
        t[1] += summary["covered_lines"]
        t[2] += summary.get("num_branches", 0)
        t[3] += summary.get("covered_branches", 0)
    out = {}
    for package, (lines, covered, branches, taken) in sorted(totals.items()):
        out[package] = {
            "lines": lines,
            "line_pct": round(100 * covered / lines, 1) if lines else 100.0,
            "branches": branches,
            "branch_pct": round(100 * taken / branches, 1) if branches else 100.0,
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    cov = coverage.Coverage()
    cov.load()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "coverage.json"
        cov.json_report(outfile=str(path))
        report: dict[str, Any] = json.loads(path.read_text())
    rows = by_package(report)
    print(f"{'package':34} {'lines':>6} {'line %':>7} {'branches':>9} {'branch %':>9}")
    for package, row in rows.items():
        print(f"{package:34} {row['lines']:6} {row['line_pct']:7.1f} {row['branches']:9} {row['branch_pct']:9.1f}")
    t = report["totals"]
    print(f"{'total':34} {t['num_statements']:6} {t['percent_covered']:7.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
