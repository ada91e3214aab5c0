"""Smoke test for the benchmark harness in bench/ (no timing assertions).

Runs ``bench/run.py --tiny --impl wiremcp,floor`` (stdio, then HTTP) and checks that
every case completed with zero errors for both contenders and that the one
Markdown table (wiremcp / official / floor, ratios, targets) was printed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
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
def test_bench_tiny_stdio_wiremcp_and_floor(tmp_path: Path) -> None:
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
        [sys.executable, str(RUN), "--tiny", "--only", "stdio", "--impl", "wiremcp,floor", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"

    data = json.loads(out.read_text())
    assert data["unavailable"] == {}, data["unavailable"]
    samples = data["samples"]
    # 3 stdio cases (100 B and 10 KB at 1 in flight, 100 B at 16) x 2 contenders, 1 repetition
    assert sorted((s["impl"], s["inflight"], s["payload"]) for s in samples) == sorted(
        (impl, inflight, payload) for impl in ("wiremcp", "floor") for inflight, payload in ((1, 100), (1, 10_000), (16, 100))
    )
    for s in samples:
        assert s["transport"] == "stdio" and s["era"] == "modern"
        assert s["ok"], s["error_messages"]
        assert s["errors"] == 0, s["error_messages"]
        assert s["requests"] > 0
        assert s["cold_start_ms"] > 0

    assert "| | wiremcp | official | floor | wiremcp/official | wiremcp/floor | target | |" in proc.stdout.replace("|  |", "| |")
    assert "| stdio 10 KB, 1 in flight (req/s, ↑) |" in proc.stdout
    assert "| stdio cold start to first reply (ms, ↓) |" in proc.stdout
    # the official SDK was not run: its column and the ratio to it are empty, the floor's is not
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| stdio 100 B, 1 in flight"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "—" and cells[4] == "—", row
    assert cells[1][0].isdigit() and cells[3][0].isdigit() and cells[5].endswith("×"), row
    assert "failed: 0, errors: 0" in proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bench_tiny_http_wiremcp_and_floor(tmp_path: Path) -> None:
    """The HTTP rows: wiremcp on uvicorn and the bare ASGI floor on the same uvicorn."""
    if importlib.util.find_spec("uvicorn") is None:
        pytest.skip("uvicorn (the [http] extra) is not installed")
    wiremcp_bin = _wiremcp_bin()
    if wiremcp_bin is None:
        pytest.skip("the wiremcp console script is not installed")
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, str(RUN), "--tiny", "--only", "http", "--impl", "wiremcp,floor", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT,
        env={**os.environ, "WIREMCP_BIN": wiremcp_bin},
    )
    assert proc.returncode == 0, f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    data = json.loads(out.read_text())
    assert data["unavailable"] == {}, data["unavailable"]
    assert sorted((s["impl"], s["inflight"]) for s in data["samples"]) == [
        ("floor", 1), ("floor", 16), ("wiremcp", 1), ("wiremcp", 16)
    ]
    for s in data["samples"]:
        assert s["transport"] == "http" and s["payload"] == 100
        assert s["ok"] and s["errors"] == 0, s["error_messages"]
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| HTTP 100 B, 16 connections"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1][0].isdigit() and cells[3][0].isdigit() and cells[5].endswith("×"), row
    assert "failed: 0, errors: 0" in proc.stdout


@pytest.mark.parametrize("case", ["stdio", "floor", "http", "asgi-floor"])
def test_instructions_harness_runs_each_case(case: str) -> None:
    """bench/instructions.py's measured work, without valgrind: each case serves its requests and checks every reply."""
    if case in ("http", "asgi-floor") and importlib.util.find_spec("uvicorn") is None:
        pytest.skip("the [http] extra is not installed")
    script = ROOT / "bench" / "instructions.py"
    proc = subprocess.run(
        [sys.executable, str(script), case, "--child", "--count", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_instructions_of_a_served_http_server() -> None:
    """bench/instructions.py served-http: `wiremcp run --http` under callgrind answers every POST and stops on SIGINT."""
    if shutil.which("valgrind") is None or importlib.util.find_spec("uvicorn") is None:
        pytest.skip("needs valgrind and the [http] extra")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "instructions.py"), "served-http", "--n", "3,6"],
        capture_output=True, text=True, timeout=280, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    m = re.search(r"served-http: (-?[\d,]+) instructions per request", proc.stdout)
    assert m and int(m.group(1).replace(",", "")) > 10_000, proc.stdout


@pytest.mark.timeout(120)
def test_proxy_grant_bench_reads_a_grant_on_every_store(tmp_path: Path) -> None:
    """bench/proxy_grant.py: each store (Redis a real redis-server) opens the grant it was given, and a figure is kept."""
    if importlib.util.find_spec("cryptography") is None:
        pytest.skip("the [auth] extra is not installed")
    out = tmp_path / "grant.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "proxy_grant.py"), "--n", "50", "--reps", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=100, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    figures = json.loads(out.read_text())["us_per_check"]
    assert sorted(figures) == ["memory", "redis", "sqlite"]
    assert all(len(v) == 1 and v[0] > 0 for v in figures.values()), figures
    assert "| sqlite |" in proc.stdout
