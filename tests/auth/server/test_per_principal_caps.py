"""Issue 23, item 7: an authenticated request is counted against its principal's share of a per-client cap.

Two OAuth clients of the real authorization server (oidc-provider) reach
``wiremcp run examples/protected.py --http`` from one address, as they would
through a reverse proxy or a NAT. Before: they shared that address's
``max_listens_per_client`` (the second client's first listen got 429 once the
first held the cap). Now each principal (issuer, subject, client id) has its
own share; the cap is set with ``WIREMCP_MAX_LISTENS_PER_CLIENT``.
"""

from __future__ import annotations

import http.client
import json
from typing import Iterator

import pytest

from ._oauth import AuthorizationServer, ProtectedServer, request

CAP = 2


@pytest.fixture
def capped(auth_server: AuthorizationServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProtectedServer]:
    monkeypatch.setenv("WIREMCP_MAX_LISTENS_PER_CLIENT", str(CAP))
    server = ProtectedServer(auth_server.issuer)
    try:
        yield server
    finally:
        server.stop()


def listen(server: ProtectedServer, token: str, opened: list[http.client.HTTPConnection]) -> int:
    """Open a subscriptions/listen with ``token``; its status (200 once acknowledged; the stream stays open)."""
    body = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
    opened.append(conn)
    conn.request(
        "POST", "/mcp", json.dumps(body),
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen", "Authorization": f"Bearer {token}"},
    )  # fmt: skip
    resp = conn.getresponse()
    if resp.status != 200:
        resp.read()
        return resp.status
    while line := resp.fp.readline():
        if line.startswith(b"data:"):
            assert b"notifications/subscriptions/acknowledged" in line, line
            return 200
    raise AssertionError("the stream ended before its acknowledgement")


def test_two_principals_from_one_address_each_get_their_own_share(
    auth_server: AuthorizationServer, capped: ProtectedServer
) -> None:
    reader = auth_server.token("reader", capped.url, "mcp")
    admin = auth_server.token("admin", capped.url, "mcp")
    opened: list[http.client.HTTPConnection] = []
    try:
        assert [listen(capped, reader, opened) for _ in range(CAP + 1)] == [200] * CAP + [429]
        # before: [429, 429, 429] (one address, one share)
        assert [listen(capped, admin, opened) for _ in range(CAP + 1)] == [200] * CAP + [429]
        # a new token of the same principal does not open a new share
        again = auth_server.token("reader", capped.url, "mcp")
        assert listen(capped, again, opened) == 429
    finally:
        for conn in opened:
            conn.close()
