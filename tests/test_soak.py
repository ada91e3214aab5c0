"""The soak test's CI mode: ``python bench/soak.py --ci`` (four minutes of mixed load, both eras, both transports).

One run, two verdicts: every request got exactly one reply and every HTTP
status was documented (test_soak_replies); no server's memory, descriptors
or held tasks grew over the second half of the run (test_soak_growth: the
least-squares slope of each over the last 120 s, after the warm-up, within
the limits docs/testing-hardening.md justifies: 8 MiB/min of RSS, 6
descriptors/min, 30 held tasks/min; a held task is one the server has kept
for 120 s or more, not a request in flight).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def soak_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("soak") / "soak.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--ci", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=560,
    )
    assert out.exists(), f"the soak wrote no result (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["exit_status"] = proc.returncode
    return result


def test_soak_replies(soak_run: dict[str, Any]) -> None:
    """Nothing lost, duplicated or stray; every documented check held; the load really ran."""
    growth = [p for p in soak_run["problems"] if "over the second half" in p]
    other = [p for p in soak_run["problems"] if p not in growth]
    assert other == [], other
    assert soak_run["lost"] == 0 and soak_run["duplicated"] == 0 and soak_run["stray"] == 0
    assert soak_run["answered"] == soak_run["sent"]
    ops = soak_run["operations"]
    for kind in ("call", "large", "cancelled", "listen", "list-change", "raw-bad", "raw-cancel",
                 "raw-legacy-call", "session-abandoned", "session-deleted", "http-bad"):
        assert ops.get(kind, 0) > 0, f"the soak never did {kind!r}: {ops}"
    assert set(soak_run["servers"]) == {"http", "stdio-client", "stdio-raw"}
    # Where the memory lies, in every sample that soak_debug answered (bench/soak.py DEBUG_FIELDS).
    columns = soak_run["curve_columns"]
    rows = [dict(zip(columns, row)) for row in soak_run["curve"]]
    answered = [r for r in rows if r["tasks"] >= 0]
    assert answered and all(r["pymalloc_kib"] > 0 and r["heap_kib"] > 0 and r["heap_used_kib"] > 0 for r in answered)
    assert max(r["sessions"] for r in answered if r["server"] == "http") > 0  # the abandoned legacy sessions
    for name, server in soak_run["servers"].items():
        assert server["samples"] >= 20, (name, server)
        assert min(server["tasks"]) >= 1, (name, server)  # soak_debug answered
        assert server["held_tasks"] and min(server["held_tasks"]) >= 0, (name, server)  # and counted the held tasks


def test_soak_growth(soak_run: dict[str, Any]) -> None:
    """No server's RSS, descriptors or tasks grow over the second half (the run's own limits)."""
    growth = [p for p in soak_run["problems"] if "over the second half" in p]
    http_rss = [f"{t:.0f}s:{rss / 1024:.0f}" for t, name, rss, *_ in soak_run["curve"] if name == "http"][::5]
    assert growth == [], (growth, {name: {k: v for k, v in server.items() if "slope" in k or k == "rss_mib"}
                                   for name, server in soak_run["servers"].items()}, "http RSS (MiB):", http_rss)
    for name, server in soak_run["servers"].items():
        assert server["rss_slope_mib_per_min"] <= 8.0, (name, server)
        assert server["fd_slope_per_min"] <= 6.0, (name, server)
        assert server["task_slope_per_min"] <= 30.0, (name, server)
    assert soak_run["duration_s"] >= 235, soak_run["duration_s"]  # the CI mode: 240 s, judged over the last 120
    assert soak_run["exit_status"] == 0
