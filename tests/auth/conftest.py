"""Fixtures shared by tests/auth: ``node``, a Node >= 20 with oidc-provider installed in tests/auth/as/.

The npm packages are installed with ``npm ci`` on first use (a clean clone
has no ``node_modules``). Without npm or a recent Node the tests that need
the real authorization server are skipped on a developer machine, and fail
in CI (``CI`` set to true): there a missing tool is a broken set-up, not a
reason to skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _servers import node20, npm_ci

AS_DIR = Path(__file__).resolve().parent / "as"


@pytest.fixture(scope="session")
def node() -> str:
    """A Node >= 20 binary with oidc-provider installed next to tests/auth/as/server.mjs."""
    pytest.importorskip("jwt")
    if not (AS_DIR / "node_modules" / "oidc-provider").exists():
        npm_ci(AS_DIR, "oidc-provider (tests/auth/as)")
    return node20("oidc-provider")
