"""Smoke test for the benchmark harness in bench/ (no timing assertions).

Runs ``bench/run.py --tiny --only stdio --impl wiremcp`` and checks that every
case completed with zero errors and that the Markdown table was printed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "bench" / "run.py"
EXAMPLE = ROOT / "examples" / "echo.py"


def _wiremcp_bin() -> str | None:
    beside = Path(sys.executable).parent / "wiremcp"
    if beside.exists():
        return str(beside)
    return shutil.which("wiremcp")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bench_tiny_stdio_wiremcp(tmp_path: Path) -> None:
    try:
        import wiremcp  # noqa: F401
    except ImportError:
        pytest.skip("wiremcp is not importable yet")
    if importlib.util.find_spec("wiremcp.cli") is None or not EXAMPLE.exists():
        pytest.skip("the wiremcp CLI or examples/echo.py does not exist yet")
    wiremcp_bin = _wiremcp_bin()
    if wiremcp_bin is None:
        pytest.skip("the wiremcp console script is not installed")

    out = tmp_path / "bench.json"
    env = {**os.environ, "WIREMCP_BIN": wiremcp_bin}
    proc = subprocess.run(
        [sys.executable, str(RUN), "--tiny", "--only", "stdio", "--impl", "wiremcp", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"

    data = json.loads(out.read_text())
    # wiremcp must serve stdio; a legacy era it does not serve is a missing
    # feature (shown as "n/a (era not supported)"), not an error.
    unavailable = data["unavailable"]
    assert "wiremcp/stdio" not in unavailable, unavailable
    assert "wiremcp/stdio/modern" not in unavailable, unavailable
    legacy_reason = unavailable.get("wiremcp/stdio/legacy")
    assert legacy_reason is None or legacy_reason.startswith("legacy era (2025-11-25) not supported"), legacy_reason

    samples = [s for s in data["samples"] if s["available"]]
    # 2 eras (or 1) x 2 in-flight counts x 3 payloads, 1 repetition
    assert len(samples) == (6 if legacy_reason else 12)
    for s in samples:
        assert s["impl"] == "wiremcp" and s["transport"] == "stdio"
        assert s["ok"], s["error_messages"]
        assert s["errors"] == 0, s["error_messages"]
        assert s["requests"] > 0

    assert "| transport | era | in flight | payload | metric |" in proc.stdout
    assert "| stdio | modern | 16 | 1 MB | throughput (req/s) |" in proc.stdout
    assert "failed: 0, errors: 0" in proc.stdout
