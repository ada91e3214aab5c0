"""The wiremcp client and CLI against official `mcp` 1.x servers, and official 1.x clients against wiremcp.

Each test names the issue-24 defect it guards. The peers are the real SDK releases, pinned in
tests/peers.py and built once per machine; nothing is mocked.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _servers import ROOT, wiremcp_http
from interop._official import official_client, official_http, official_stdio
from wiremcp.client import Client
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(asyncio.wait_for(coro, 60))


# -- defect 1: the era probe against an official 1.x server over HTTP ----------------------------


@pytest.mark.parametrize("release", ["mcp-1.20.0", "mcp-1.30.0"])
def test_client_falls_back_to_initialize_against_official_http_server(release: str, tmp_path: Path) -> None:
    """The probe's 400 "Missing session ID" (a JSON-RPC error with id "server-error") means legacy."""
    with official_http(release, tmp_path) as peer:

        async def go() -> None:
            async with Client.http(peer.url) as client:
                assert client.era is Era.LEGACY
                assert (await client.call_tool("add", {"a": 2, "b": 3})).text == "5"

        run(go())
        exchanges = peer.exchanges()
    # The probe was refused, and the session id that 400 minted was never used (nor DELETEd).
    probe = exchanges[0]
    assert probe["method"] == "POST" and probe["status"] == 400 and probe["sent"] is None
    minted_ok = {e["minted"] for e in exchanges if e["minted"] and e["status"] < 400}
    used = {e["sent"] for e in exchanges if e["sent"]}
    assert used and used <= minted_ok, exchanges
    if probe["minted"]:
        assert probe["minted"] not in used, exchanges
    assert [e for e in exchanges if e["method"] == "DELETE"], exchanges  # the real session was ended


# -- defect 3: legacy clients get log messages without logging/setLevel -----------------------------

EVERYTHING = str(ROOT / "src" / "wiremcp" / "examples" / "everything.py")


def _logged(out: dict) -> list[str]:  # type: ignore[type-arg]
    return [entry["data"] for entry in out["logs"]]


def test_official_client_gets_logs_by_default_over_stdio() -> None:
    """An mcp 1.20 client with a logging callback (no logging/setLevel) sees ctx.info, as from an official server."""
    argv = [sys.executable, "-m", "wiremcp", "run", EVERYTHING]
    out = official_client("mcp-1.20.0", "stdio", json.dumps(argv), "test_logging_tool")
    assert out["protocolVersion"] == "2025-06-18" and out["isError"] is False
    assert _logged(out) == ["a log message that only a request with logLevel sees"]


def test_official_client_gets_logs_by_default_over_http() -> None:
    with wiremcp_http(EVERYTHING) as url:
        out = official_client("mcp-1.20.0", "http", url, "test_tool_with_logging")
    assert out["isError"] is False
    assert len(_logged(out)) >= 1, out


def test_legacy_log_level_setting_off_restores_silence() -> None:
    """WIREMCP_LEGACY_LOG_LEVEL=off: nothing until the client calls logging/setLevel."""
    argv = [sys.executable, "-m", "wiremcp", "run", EVERYTHING]
    with_env = {**os.environ, "WIREMCP_LEGACY_LOG_LEVEL": "off"}
    out = official_client("mcp-1.20.0", "stdio", json.dumps(argv), "test_logging_tool", env=with_env)
    assert out["isError"] is False and out["logs"] == []


def test_legacy_log_level_setting_parses() -> None:
    from wiremcp import Server

    assert Server("t").legacy_log_level == "debug"
    assert Server("t", legacy_log_level="Warning").legacy_log_level == "warning"
    assert Server("t", legacy_log_level="off").legacy_log_level is None
    with pytest.raises(ValueError, match="WIREMCP_LEGACY_LOG_LEVEL='loud'"):
        os.environ["WIREMCP_LEGACY_LOG_LEVEL"] = "loud"
        try:
            Server("t")
        finally:
            del os.environ["WIREMCP_LEGACY_LOG_LEVEL"]


# -- defect 4: what the era probe provoked stays out of the CLI's output --------------------------


def _cli(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiremcp", *words], capture_output=True, text=True, timeout=90)


@pytest.mark.parametrize("command", [["inspect"], ["call", "add", "a=2", "b=3"]])
def test_cli_hides_what_the_probe_provoked_from_an_official_stdio_server(command: list[str]) -> None:
    python, args = official_stdio("mcp-1.20.0")
    done = _cli(*command, "--", python, *args)
    assert done.returncode == 0, done.stderr
    assert ("add(a: integer, b: integer)" if command == ["inspect"] else "5") in done.stdout
    assert "validation error" not in done.stderr and "server/discover'" not in done.stderr, done.stderr
    assert "while refusing the era probe, server/discover" in done.stderr and "--wire shows them" in done.stderr
    assert len(done.stderr.splitlines()) <= 5, done.stderr  # the server's own later lines, and the note


def test_cli_wire_shows_what_the_probe_provoked() -> None:
    python, args = official_stdio("mcp-1.20.0")
    done = _cli("call", "--wire", "add", "a=2", "b=3", "--", python, *args)
    assert done.returncode == 0, done.stderr
    assert "Failed to validate request" in done.stderr and "input_value='server/discover'" in done.stderr
    assert "refusing the era probe" not in done.stderr
