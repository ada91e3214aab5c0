"""Fixtures: the authorization server (oidc-provider) and ``examples/protected.py`` over HTTP (see _oauth)."""

from __future__ import annotations

from typing import Iterator

import pytest

pytest.importorskip("jwt")

from ._oauth import AuthorizationServer, ProtectedServer, ec_key  # noqa: E402

# ``node`` (oidc-provider installed, Node >= 20) comes from tests/auth/conftest.py.


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
