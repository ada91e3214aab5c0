"""The worked ports of docs/migrate/ run end to end, and the official SDK's original answers as the port does.

- docs/migrate/bookmarks_official.py (the official SDK, run by bench/.venv-official's
  Python) and examples/tutorials/port_official_after.py (wiremcp) get the same
  calls over stdio and give the same results; the one difference the guide
  names (a ToolError's text is not prefixed) is asserted as such.
- examples/tutorials/port_fastmcp_after.py: every tool, the elicitation round
  and the resource template, over stdio in both eras; and the same session
  against its original, docs/migrate/notes_fastmcp.py, under FastMCP 4.2.3 (the
  peer of tests/peers.py): the same answers, but for the two differences the
  guide names (no elicitation on 2026-07-28 connections; log data as an object).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

import wiremcp

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL_PYTHON = ROOT / "bench" / ".venv-official" / "bin" / "python"
REQUIRE_INTEROP = bool(os.environ.get("WIREMCP_REQUIRE_INTEROP"))

pytestmark = pytest.mark.slow


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 90))


async def bookmarks_session(python: str, path: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    progress: list[tuple[Any, ...]] = []
    async with wiremcp.Client.stdio(python, [str(path)], timeout=30) as client:
        seen["tools"] = sorted(tool["name"] for tool in await client.list_tools())
        seen["add"] = (await client.call_tool("add_bookmark", {"url": "https://a.example", "title": "A"})).text
        bad = await client.call_tool("add_bookmark", {"url": "ftp://x", "title": "X"})
        seen["bad"] = (bad.is_error, bad.text)
        seen["count"] = (await client.call_tool("count_bookmarks")).structured_content
        seen["resource"] = (await client.read_resource("bookmarks://all")).text
        prompt = await client.get_prompt("summarize", {"topic": "cats"})
        seen["prompt"] = [(m["role"], m["content"]["text"]) for m in prompt.messages]
        seen["tidy"] = (await client.call_tool("tidy", on_progress=lambda *a: progress.append(a))).text
        seen["progress"] = progress
    return seen


@pytest.mark.skipif(not OFFICIAL_PYTHON.exists() and not REQUIRE_INTEROP, reason="bench/.venv-official is not set up")
def test_official_sdk_port_answers_as_the_original():
    original = run(bookmarks_session(str(OFFICIAL_PYTHON), ROOT / "docs" / "migrate" / "bookmarks_official.py"))
    port = run(bookmarks_session(sys.executable, ROOT / "examples" / "tutorials" / "port_official_after.py"))
    assert original.pop("bad") == (True, "Error executing tool add_bookmark: not a web address: ftp://x")
    assert port.pop("bad") == (True, "not a web address: ftp://x")
    assert port == original
    assert port["count"] == {"result": 1} and port["progress"] == [(1, 1, None)]


@pytest.mark.parametrize("server, era", [("port", "modern"), ("port", "legacy"), ("fastmcp", "legacy"), ("fastmcp", "modern")])
def test_fastmcp_port(server: str, era: str) -> None:
    """The port over stdio, both eras; and the same session against the original under FastMCP 4.2.3 (the peer of
    tests/peers.py). One real difference, asserted: FastMCP's ``ctx.elicit`` is refused on a 2026-07-28 connection
    (it has no MRTR), wiremcp's asks there too (docs/migrate/fastmcp.md, "Behaviours that differ")."""
    if server == "fastmcp":
        from peers import python_peer

        python, path = str(python_peer("fastmcp-4.2.3")), ROOT / "docs" / "migrate" / "notes_fastmcp.py"
    else:
        python, path = sys.executable, ROOT / "examples" / "tutorials" / "port_fastmcp_after.py"

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        assert params["message"] == "Delete every note?"
        return {"action": "accept", "content": {"sure": True}}

    async def main() -> None:
        logs: list[dict[str, Any]] = []
        async with wiremcp.Client.stdio(python, [str(path)], elicitation=confirm, timeout=60, era=era) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("write_note", {"title": "a", "body": "apples"})).text == "saved a"
            assert (await client.call_tool("read_note", {"title": "a"})).text == "apples"
            missing = await client.call_tool("read_note", {"title": "b"})
            assert missing.is_error and missing.text == "no note called b"
            assert (await client.read_resource("notes://a")).text == "apples"
            deleted = await client.call_tool("delete_all", log_level="info", on_log=logs.append)
            if server == "fastmcp" and era == "modern":
                assert deleted.is_error and "unavailable on 2026-07-28 connections" in deleted.text
                return
            assert deleted.text == "deleted"
            if server == "fastmcp":  # FastMCP sends a log's data as an object
                assert [entry["data"] for entry in logs] == [{"msg": "deleting 1 notes", "extra": None}]
            else:
                assert [entry["data"] for entry in logs] == ["deleting 1 notes"]
            assert (await client.call_tool("read_note", {"title": "a"})).is_error

    run(main())
