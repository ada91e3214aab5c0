"""The strict-skip rule of tests/conftest.py, run on a small suite in a subprocess.

With ``WIREMCP_STRICT_SKIPS`` (or ``CI``) set, an undeclared skip fails, a
declared one (marker or tests/expected_skips.txt) stays a skip, an xfail stays
an xfail, and collecting no test at all exits 1 instead of 5. Without it, skips
are skips.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

DEMO = '''
import pytest

def test_passes():
    pass

def test_plain_skip():
    pytest.skip("no dependency here")

@pytest.mark.expected_skip("platform has no")
def test_declared_skip():
    pytest.skip("this platform has no widget")

def test_listed_skip():
    pytest.skip("listed reason: allowed by the file")

@pytest.mark.skipif(True, reason="a skipif condition")
def test_skipif():
    pass

@pytest.mark.xfail(reason="known", strict=True)
def test_xfail():
    assert False
'''


def _run(tmp_path: Path, strict: bool, *args: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "expected_skips.txt").write_text("listed reason  # a declared one\n", encoding="utf-8")
    (tmp_path / "test_demo.py").write_text(DEMO, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "WIREMCP_STRICT_SKIPS")}
    if strict:
        env["WIREMCP_STRICT_SKIPS"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
         f"--rootdir={tmp_path}", "-c", os.devnull, str(tmp_path), *args],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )


@pytest.mark.slow
def test_strict_mode_fails_undeclared_skips(tmp_path: Path) -> None:
    out = _run(tmp_path, strict=True)
    assert out.returncode == 1, out.stdout
    lines = out.stdout.splitlines()
    assert any(line.startswith("FAILED") and "test_plain_skip" in line for line in lines), out.stdout
    assert any(line.startswith("ERROR") and "test_skipif" in line for line in lines), out.stdout
    assert any(line.startswith("SKIPPED") and "this platform has no widget" in line for line in lines), out.stdout
    assert any(line.startswith("SKIPPED") and "listed reason" in line for line in lines), out.stdout
    assert any(line.startswith("XFAIL") and "test_xfail" in line for line in lines), out.stdout
    assert any(line.startswith("PASSED") and "test_passes" in line for line in lines), out.stdout
    assert "1 failed, 1 passed, 2 skipped, 1 xfailed, 1 error" in out.stdout, out.stdout


@pytest.mark.slow
def test_without_strict_mode_skips_stay_skips(tmp_path: Path) -> None:
    out = _run(tmp_path, strict=False)
    assert out.returncode == 0, out.stdout
    assert "1 passed, 4 skipped, 1 xfailed" in out.stdout, out.stdout


@pytest.mark.slow
def test_strict_mode_fails_an_empty_run(tmp_path: Path) -> None:
    out = _run(tmp_path, True, "-k", "no_test_has_this_name")
    assert out.returncode == 1, out.stdout
    assert "no tests were collected (exit status 5)" in out.stdout, out.stdout
    loose = _run(tmp_path, False, "-k", "no_test_has_this_name")
    assert loose.returncode == 5, loose.stdout
