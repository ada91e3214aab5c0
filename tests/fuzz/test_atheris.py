"""Each fuzz target under atheris (coverage-guided), briefly and reproducibly.

``python -m tests.fuzz TARGET --runs N --seed 1`` in a subprocess: libFuzzer
mutates the inputs that reach new code of the instrumented ``wiremcp``
package, from a fixed seed, for a fixed number of inputs; a crash or a failed
invariant exits non-zero and names the input. atheris installs from PyPI on
Linux (the ``test`` extra); elsewhere this test skips, as declared.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .__main__ import TARGETS

ROOT = Path(__file__).resolve().parent.parent.parent
#: Inputs per target: a few seconds each, including the interpreter's start.
RUNS = 300

pytestmark = [
    pytest.mark.slow,
    pytest.mark.expected_skip("atheris is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("atheris") is None, reason="atheris is not installed (Linux only, test extra)"
    ),
]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_atheris_run(target: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [sys.executable, "-m", "tests.fuzz", target, "--runs", str(RUNS), "--seed", "1", "--seconds", "60"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=110,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    assert f"Done {RUNS} runs" in out.stderr, out.stderr[-2000:]
    assert not list(tmp_path.glob("crash-*"))
