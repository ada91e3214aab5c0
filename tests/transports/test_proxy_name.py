"""The proxy names itself after its upstream (issue 28, item 8): not ``wiremcp-proxy 0.0.0``.

Real subprocesses over stdio: ``wiremcp proxy`` in front of a wiremcp server
of each era; the client reads the proxy's ``serverInfo`` as a host would (a
legacy ``initialize`` answer, a modern result's ``_meta``). ``--name`` still
wins.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from conftest import SERVERS
from wiremcp.client import Client

pytestmark = pytest.mark.slow

MODERN_ONLY = str(SERVERS / "modern_asks.py")  # Server("modern-asks", version="1.0.0", legacy=False)
LEGACY_ONLY = str(SERVERS / "legacy_only.py")


async def _info(*proxy_args: str, era: str) -> dict[str, object]:
    """The proxy's serverInfo as a client of ``era`` reads it: the initialize answer, or a result's _meta."""
    argv = ["-m", "wiremcp", "proxy", *proxy_args]
    async with Client.stdio(sys.executable, argv, era=era) as client:
        if era == "modern":
            result = await client.call_tool("echo", {"text": "x"})
            return dict(result.raw["_meta"]["io.modelcontextprotocol/serverInfo"])
        return dict(client.server_info or {})


def test_a_legacy_client_sees_the_modern_upstreams_name_and_version() -> None:
    info = asyncio.run(asyncio.wait_for(_info(MODERN_ONLY, era="legacy"), 60))
    assert info["name"] == "modern-asks (via wiremcp proxy)", info
    assert info["version"] == "1.0.0", info


def test_a_modern_client_sees_the_upstreams_name_in_each_result() -> None:
    info = asyncio.run(asyncio.wait_for(_info(MODERN_ONLY, era="modern"), 60))
    assert info["name"] == "modern-asks (via wiremcp proxy)", info
    assert info["version"] == "1.0.0", info


def test_a_legacy_upstream_names_the_proxy_too() -> None:
    upstream = asyncio.run(asyncio.wait_for(_upstream_info(), 60))
    info = asyncio.run(asyncio.wait_for(_info("--", sys.executable, LEGACY_ONLY, era="legacy"), 60))
    assert info["name"] == f"{upstream['name']} (via wiremcp proxy)", info
    assert info["version"] == upstream["version"], info


async def _upstream_info() -> dict[str, object]:
    async with Client.stdio(sys.executable, [LEGACY_ONLY], era="legacy") as client:
        return dict(client.server_info or {})


def test_name_given_wins() -> None:
    info = asyncio.run(asyncio.wait_for(_info("--name", "my-proxy", MODERN_ONLY, era="legacy"), 60))
    assert info["name"] == "my-proxy", info
    assert info["version"] == "1.0.0", info
