"""Record a conformance run for the site: ``python docs/hooks/conformance.py [--client]``.

Runs the official suite exactly as tests/test_conformance.py does (``wiremcp
run examples/everything.py --http`` scored by conformance/server.sh at each
revision; with ``--client``, conformance/client.py scored by
conformance/client.sh for each requirement set too) and writes each leg's
per-scenario summary to docs/reference/conformance.json, with the suite version,
the date and the commit. docs/hooks/site.py renders that record as the
conformance page; tests/test_site.py checks that the record was made with the
pinned suite and has the totals tests/test_conformance.py asserts.
"""

from __future__ import annotations

import argparse
import datetime
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "conformance"
RECORD = ROOT / "docs" / "reference" / "conformance.json"
SERVER_REVISIONS = ("2026-07-28", "2025-11-25", "all")
CLIENT_REVISIONS = ("2026-07-28", "2025-11-25", "all")


def pinned_suite() -> str:
    """The suite version conformance/package.json pins."""
    return str(json.loads((CONFORMANCE / "package.json").read_text())["dependencies"]["@modelcontextprotocol/conformance"])


def _leg(side: str, revision: str, results: Path) -> dict[str, Any]:
    summary = json.loads((results / f"latest-{side}-{revision}" / "summary.json").read_text())
    scenarios = []
    for s in summary["scenarios"]:
        entry: dict[str, Any] = {"name": s["name"], "scored": s.get("scored", True), "status": s["status"]}
        if "passed" in s and "failed" in s:
            entry["checks"] = f"{s['passed']}/{s['passed'] + s['failed']}"
        if s.get("reason"):
            entry["reason"] = s["reason"]
        scenarios.append(entry)
    return {"side": side, "revision": revision, "passed": summary["passed"], "total": summary["total"], "scenarios": scenarios}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def record(client: bool) -> dict[str, Any]:
    legs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp)
        env = {"CONFORMANCE_RESULTS_ROOT": tmp, "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin"}
        port = _free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", "examples/everything.py", "--http", "--port", str(port)], cwd=ROOT
        )
        try:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
            for revision in SERVER_REVISIONS:
                done = subprocess.run(
                    ["bash", str(CONFORMANCE / "server.sh"), f"http://127.0.0.1:{port}/mcp", revision],
                    env={**env, "HOME": str(Path.home())}, capture_output=True, text=True,
                )
                print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
                legs.append(_leg("server", revision, results))
        finally:
            server.terminate()
            server.wait(10)
        if client:
            for revision in CLIENT_REVISIONS:
                done = subprocess.run(
                    ["bash", str(CONFORMANCE / "client.sh"), f"{sys.executable} {CONFORMANCE / 'client.py'}", revision],
                    env={**env, "HOME": str(Path.home())}, capture_output=True, text=True, cwd=ROOT,
                )
                print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
                legs.append(_leg("client", revision, results))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"suite": pinned_suite(), "date": datetime.date.today().isoformat(), "commit": commit, "legs": legs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", action="store_true", help="also run the client legs (tens of minutes)")
    args = parser.parse_args()
    RECORD.write_text(json.dumps(record(args.client), indent=2) + "\n")
    print(f"wrote {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
