"""bench/scale.py runs: one short pass over 1 and 2 workers, with no error and no missed notification."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import needs_services
from .services import ROOT

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytestmark = [pytest.mark.slow, needs_services]


def test_the_scale_bench_runs_and_counts_no_redis_round_trip_for_a_modern_call():
    done = subprocess.run(
        [sys.executable, "bench/scale.py", "--workers", "1", "2", "--duration", "0.5", "--warmup", "0.2",
         "--reps", "1", "--listeners", "5", "--changes", "4"],
        capture_output=True, text=True, cwd=ROOT, timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line.split("|") for line in done.stdout.splitlines() if line.startswith("| 1 ") or line.startswith("| 2 ")]
    assert [r[1].strip() for r in rows] == ["1", "2"]
    for row in rows:
        assert row[3].strip() == "0.000"  # Redis commands per tools/call
        assert row[5].strip() == "1.00"  # one PUBLISH per change
