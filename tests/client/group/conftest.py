"""Fixtures for the group tests: a wiremcp stdio server (group_stdio.py), examples/protected.py over
HTTP with a real authorization server (tests/auth), and the official SDK's HTTP+SSE server
(tests/transports/sse)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
for extra in (TESTS, TESTS / "transports" / "sse"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from auth.conftest import node  # noqa: E402,F401 - the fixture: Node with oidc-provider
from sse_servers import SSEServer  # noqa: E402

STDIO_SERVER = str(HERE / "group_stdio.py")


def stdio_entry() -> dict[str, Any]:
    """The mcpServers entry of the wiremcp stdio server, as `wiremcp install` writes one."""
    return {"command": sys.executable, "args": ["-m", "wiremcp", "run", STDIO_SERVER]}


@pytest.fixture
def sse_server() -> Iterator[Callable[..., SSEServer]]:
    started: list[SSEServer] = []

    def start(*args: str) -> SSEServer:
        server = SSEServer(*args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def protected(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    """(the authorization server, examples/protected.py over HTTP trusting it)."""
    pytest.importorskip("jwt")
    from auth.server._oauth import AuthorizationServer, ProtectedServer, ec_key

    issuer = AuthorizationServer(node, tmp_path_factory.mktemp("as")).start([ec_key("key-1")])
    try:
        server = ProtectedServer(issuer.issuer)
        try:
            yield issuer, server
        finally:
            server.stop()
    finally:
        issuer.stop()
