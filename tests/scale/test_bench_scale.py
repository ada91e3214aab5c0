"""bench/scale.py runs: one short pass over 1 and 2 workers (closed and open loop), with no error and no missed notification."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import needs_services
from .services import ROOT

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytestmark = [pytest.mark.slow, needs_services]


def test_the_scale_bench_runs_and_counts_no_redis_round_trip_for_a_modern_call(tmp_path):
    out = tmp_path / "scale.json"
    done = subprocess.run(
        [sys.executable, "bench/scale.py", "--workers", "1", "2", "--duration", "0.5", "--warmup", "0.2",
         "--reps", "1", "--listeners", "5", "--changes", "4", "--legacy-messages", "10", "--pm-qos", "off", "--rate", "200",
         "--json", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())["results"]
    assert [r["workers"] for r in results] == [1, 2]
    for r in results:
        assert [c["redis_per_call"] for c in r["calls"]] == [0.0]  # no Redis command per tools/call
        assert [f["redis_per_change"] for f in r["fanout"]] == [1.0]  # one PUBLISH per change
        assert r["legacy"][0]["legacy_errors"] == 0 and r["legacy"][0]["redis_per_legacy_message"] > 0
        assert r["calls"][0]["workers_cpu_us"] > 0
        # the open-loop window: its schedule's rate per worker (N workers, N times as many in all), no error
        paced = r["paced"][0]
        assert paced["target_per_s"] == 200 * r["workers"] and paced["errors"] == 0 and paced["calls_per_s"] > 0
        assert paced["redis_per_call"] == 0.0
    assert "Projection from the 1-worker costs" in done.stdout
    assert "at the same rate per worker (open loop)" in done.stdout
