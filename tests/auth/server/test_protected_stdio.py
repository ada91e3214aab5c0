"""Over stdio a protected server asks for no token (basic/authorization/index.mdx, Protocol
Requirements: STDIO implementations SHOULD NOT follow the HTTP authorization flow and take their
credentials from the environment): ``ctx.auth`` is None and declared scopes are not enforced.
"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.slow


def test_protected_example_over_stdio(spawn):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    peer = spawn(
        sys.executable, "-m", "wiremcp", "run", "examples/protected.py",
        env={"WIREMCP_AUTH_ISSUER": "https://auth.example.com", "WIREMCP_AUTH_RESOURCE": "https://mcp.example.com/mcp"},
    )

    def ask(id: int, tool: str, arguments: dict) -> dict:
        return peer.ask({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": tool, "arguments": arguments, "_meta": meta}})["result"]

    assert ask(1, "whoami", {})["structuredContent"] == {"subject": None, "client_id": None, "scopes": []}
    assert ask(2, "admin_echo", {"text": "local"})["content"] == [{"type": "text", "text": "local"}]


def test_protected_example_needs_its_configuration(spawn):
    peer = spawn(sys.executable, "-m", "wiremcp", "run", "examples/protected.py", env={"WIREMCP_AUTH_ISSUER": ""})
    code, _, err = peer.finish()
    assert code != 0 and "WIREMCP_AUTH_ISSUER" in err
