"""What the group tests share: the wiremcp stdio server's mcpServers entry, and the fixtures (a real
authorization server with examples/protected.py over HTTP, from tests/auth; the official SDK's
HTTP+SSE server, from tests/transports/sse). Not a conftest.py: a second top-level ``conftest``
module would shadow tests/conftest.py, which other tests import from."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent
# Appended, never first: nothing here may shadow a module other tests import.
for extra in (TESTS, TESTS / "transports" / "sse"):
    if str(extra) not in sys.path:
        sys.path.append(str(extra))

from auth.conftest import node  # noqa: E402,F401 - the fixture: Node with oidc-provider
from sse_servers import SSEServer, needs_official, sse_server  # noqa: E402,F401 - sse_server: the fixture

STDIO_SERVER = str(HERE / "group_stdio.py")


def stdio_entry() -> dict[str, Any]:
    """The mcpServers entry of the wiremcp stdio server, as `wiremcp install` writes one."""
    return {"command": sys.executable, "args": ["-m", "wiremcp", "run", STDIO_SERVER]}


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
