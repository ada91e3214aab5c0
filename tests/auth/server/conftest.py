"""Fixtures: the authorization server (oidc-provider) and ``examples/protected.py`` over HTTP (see _oauth)."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Iterator

import pytest

pytest.importorskip("jwt")

from ._oauth import AS_DIR, CONFORMANCE_NODE, AuthorizationServer, ProtectedServer, ec_key, node_major  # noqa: E402


@pytest.fixture(scope="session")
def node() -> str:
    """A Node >= 20.19 binary with oidc-provider installed next to server.mjs."""
    if not (AS_DIR / "node_modules" / "oidc-provider").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("needs npm to install oidc-provider (tests/auth/as)")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=AS_DIR, check=True, capture_output=True, timeout=600)
    for candidate in (os.environ.get("CONFORMANCE_NODE"), str(CONFORMANCE_NODE), shutil.which("node")):
        if candidate and node_major(candidate) >= 20:
            return candidate
    pytest.skip("needs Node >= 20 for oidc-provider")


@pytest.fixture(scope="module")
def auth_server(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthorizationServer]:
    server = AuthorizationServer(node, tmp_path_factory.mktemp("as")).start([ec_key("key-1")])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def protected(auth_server: AuthorizationServer) -> Iterator[ProtectedServer]:
    server = ProtectedServer(auth_server.issuer)
    try:
        yield server
    finally:
        server.stop()
