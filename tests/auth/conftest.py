"""Fixtures shared by tests/auth: ``node``, a Node >= 20 with oidc-provider installed in tests/auth/as/.

The npm packages are installed with ``npm ci`` on first use (a clean clone
has no ``node_modules``). Without npm or a recent Node the tests that need
the real authorization server are skipped on a developer machine, and fail
in CI (``CI`` set to true): there a missing tool is a broken set-up, not a
reason to skip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AS_DIR = ROOT / "tests" / "auth" / "as"
CONFORMANCE_NODE = ROOT / "conformance" / "node_modules" / ".bin" / "node"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip, or fail in CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set: this is a broken set-up, not a skip)")
    pytest.skip(reason)


def node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


@pytest.fixture(scope="session")
def node() -> str:
    """A Node >= 20 binary with oidc-provider installed next to tests/auth/as/server.mjs."""
    pytest.importorskip("jwt")
    if not (AS_DIR / "node_modules" / "oidc-provider").exists():
        npm = shutil.which("npm")
        if npm is None:
            unavailable("needs npm to install oidc-provider (tests/auth/as)")
        assert npm is not None
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=AS_DIR, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.fail(f"npm ci in tests/auth/as failed:\n{done.stdout}\n{done.stderr}")
    for candidate in (os.environ.get("CONFORMANCE_NODE"), str(CONFORMANCE_NODE), shutil.which("node")):
        if candidate and node_major(candidate) >= 20:
            return candidate
    unavailable("needs Node >= 20 for oidc-provider")
    raise AssertionError("unreachable")
