"""Smoke tests for issue 29's bench pieces (no timing assertions): the PM QoS modes and tasks_bench.py --costs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import pmqos  # noqa: E402


def test_pm_qos_both_takes_each_state_once_per_repetition_in_alternating_order() -> None:
    assert pmqos.modes("on") == [True] and pmqos.modes("off") == [False]
    assert pmqos.modes("both", 0) == [True, False] and pmqos.modes("both", 1) == [False, True]
    with pmqos.held(False) as on:
        assert on is False


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed (.ci/system-packages)")
def test_tasks_costs_measure_every_store_and_the_parked_tasks(tmp_path: Path) -> None:
    pytest.importorskip("redis", reason="the Redis task store needs the [redis] extra")
    out = tmp_path / "tasks.json"
    proc = subprocess.run(
        [sys.executable, "bench/tasks_bench.py", "--costs", "--tiny", "--pm-qos", "off", "--json", str(out)],
        capture_output=True, text=True, timeout=280, cwd=ROOT,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text())
    assert {(r["level"], r["store"]) for r in data["rows"]} == {
        (level, store) for level in ("store", "server") for store in ("memory", "sqlite", "redis")
    }
    assert all(r["create_per_s"] > 0 and r["complete_per_s"] > 0 for r in data["rows"])
    assert [p["store"] for p in data["parked"]] == ["memory", "sqlite", "redis"]
    assert all(p["parked"] == 20 and p["idle_cpu_pct"] >= 0 for p in data["parked"])
    assert "| server | redis | off |" in proc.stdout and "tasks parked in input_required" in proc.stdout


@pytest.mark.timeout(200)
def test_client_area_writes_its_table_and_runs(tmp_path: Path) -> None:
    """run.py's ``client`` area: client_bench.py over HTTP writes the runs and the table it prints (--json)."""
    pytest.importorskip("uvicorn", reason="the [http] extra is not installed")
    import areas

    argv = areas._argv("client", "on", quick=False, tiny=True)
    assert argv[:5] == ["client_bench.py", "--transport", "http", "--impl", "wiremcp,official"]
    out = tmp_path / "client.json"
    proc = subprocess.run(
        [sys.executable, "bench/client_bench.py", "--transport", "http", "--impl", "wiremcp", "--reps", "1",
         "--calls", "20", "--warmup", "5", "--json", str(out)],
        capture_output=True, text=True, timeout=180, cwd=ROOT,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text())
    assert data["table"] in proc.stdout and "| http | wiremcp | wiremcp (aiohttp, shipped) | 1 |" in data["table"]
    [case] = data["runs"]
    assert case["impl"] == "wiremcp" and case["runs"][0]["1"]["cpu_us_per_call"] > 0
