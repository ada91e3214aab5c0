"""Smoke test for bench/sync_tools.py (no timing assertions): every contender answers every request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_sync_tools_bench_runs_the_three_wiremcp_servers(tmp_path: Path) -> None:
    out = tmp_path / "sync.json"
    proc = subprocess.run(
        [sys.executable, "bench/sync_tools.py", "--no-official", "--inflight", "1", "4",
         "--duration", "0.3", "--warmup", "0.1", "--pm-qos", "off", "--json", str(out)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text())
    contenders = ("threaded", "inline", "async", "floor", "thread-floor")
    assert set(data["samples"]) == {f"{n}/{c}/off" for n in (1, 4) for c in contenders}
    for runs in data["samples"].values():
        assert all(r["ok"] and r["errors"] == 0 and r["requests"] > 0 for r in runs), runs
    assert {"threaded/inline cpu 1x off", "threaded/thread-floor rps 4x off", "thread-floor/threaded cpu 1x off"} <= set(data["ratios"])
    assert "| 1 | off | threaded |" in proc.stdout and "the thread costs" in proc.stdout
