"""MCP Apps over real transports, in both eras: ``examples/apps.py`` over stdio and loopback HTTP.

* stdio: ``wiremcp run examples/apps.py`` as a subprocess, spoken to line by
  line (the exact envelopes), as a 2026-07-28 client and in a 2025-11-25
  session (``initialize`` with ``capabilities.extensions``, as apps.mdx shows);
* HTTP: ``wiremcp run examples/apps.py --http --port 0``, spoken to with
  wiremcp's `Client` in either era, as an Apps host and as a host without Apps;
* a tool linked to a resource that does not exist stops ``wiremcp run`` (stdio
  and HTTP) before it serves, with the message naming the tool and the URI.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import META, ROOT, StdioPeer, call, request, wiremcp_cmd
from wiremcp.server.apps import RESOURCE_URI_META_KEY, UI_EXTENSION, UI_MIME_TYPE

APPS = str(ROOT / "examples" / "apps.py")
BROKEN = str(Path(__file__).parent / "broken_link.py")
UI_CAPS = {"extensions": {UI_EXTENSION: {"mimeTypes": [UI_MIME_TYPE]}}}
APPS_META = {**META, "io.modelcontextprotocol/clientCapabilities": UI_CAPS}
MODEL_TOOLS = ["roll_dice", "show_notes"]
ALL_TOOLS = ["roll_dice", "dice_history", "show_notes", "list_notes", "add_note"]
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "apps", "version": "1.0.0"}}

pytestmark = pytest.mark.slow


@pytest.fixture
def apps(spawn: Any) -> StdioPeer:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", APPS))
    return peer


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    out: dict[str, Any] = reply["result"]
    return out


def legacy(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


def initialize(peer: StdioPeer, capabilities: dict[str, Any]) -> dict[str, Any]:
    reply = peer.ask(legacy(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                                              "clientInfo": {"name": "host", "version": "0"}}))
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return result_of(reply)


def check_views(resources: list[dict[str, Any]]) -> None:
    assert resources == [
        {"uri": "ui://apps/dice.html", "name": "dice", "title": "Dice", "description": "Shows dice rolls; rolls again on request.",
         "mimeType": UI_MIME_TYPE, "size": resources[0]["size"], "_meta": {"ui": {"prefersBorder": True}}},
        {"uri": "ui://apps/notes.html", "name": "notes", "title": "Notes", "description": "A list of notes with a field to add one.",
         "mimeType": UI_MIME_TYPE, "size": resources[1]["size"], "_meta": {"ui": {"prefersBorder": False}}},
    ]


def check_dice_page(contents: list[dict[str, Any]]) -> None:
    (item,) = contents
    assert (item["uri"], item["mimeType"], item["_meta"]) == ("ui://apps/dice.html", UI_MIME_TYPE, {"ui": {"prefersBorder": True}})
    page = item["text"]
    assert page.startswith("<!DOCTYPE html>")
    assert "new McpApps.App(" in page and "const McpApps={" in page  # the SDK bundle is inlined...
    assert not re.search(r"<script[^>]*\bsrc=", page) and "https://" not in page.split("<script", 1)[0]  # ...no CDN


def check_tool_meta(tools: list[dict[str, Any]]) -> None:
    by_name = {t["name"]: t for t in tools}
    assert by_name["roll_dice"]["_meta"] == {"ui": {"resourceUri": "ui://apps/dice.html"}, RESOURCE_URI_META_KEY: "ui://apps/dice.html"}
    assert by_name["dice_history"]["_meta"] == {"ui": {"visibility": ["app"]}}
    assert by_name["add_note"]["_meta"]["ui"] == {"resourceUri": "ui://apps/notes.html", "visibility": ["app"]}
    assert "visibility" not in by_name["show_notes"]["_meta"]["ui"]


# -- stdio, 2026-07-28 ---------------------------------------------------------------------


def test_stdio_modern_discover_declares_the_extension(apps: StdioPeer) -> None:
    caps = result_of(apps.ask(request(1, "server/discover")))["capabilities"]
    assert caps["extensions"] == {UI_EXTENSION: {}}


def test_stdio_modern_ui_resources_are_listed_and_read(apps: StdioPeer) -> None:
    check_views(result_of(apps.ask(request(1, "resources/list")))["resources"])
    check_dice_page(result_of(apps.ask(request(2, "resources/read", {"uri": "ui://apps/dice.html"})))["contents"])
    notes = result_of(apps.ask(request(3, "resources/read", {"uri": "ui://apps/notes.html"})))["contents"][0]
    assert notes["mimeType"] == UI_MIME_TYPE and 'request("ui/initialize"' in notes["text"]


def test_stdio_modern_an_apps_host_gets_every_tool(apps: StdioPeer) -> None:
    tools = result_of(apps.ask(request(1, "tools/list", meta=APPS_META)))["tools"]
    assert [t["name"] for t in tools] == ALL_TOOLS
    check_tool_meta(tools)
    added = result_of(apps.ask(request(2, "tools/call", {"name": "add_note", "arguments": {"text": "from the view"}}, meta=APPS_META)))
    assert added["structuredContent"] == {"notes": ["Buy dice", "from the view"]}
    assert added["content"] == [{"type": "text", "text": "2 note(s):\n- Buy dice\n- from the view"}]


def test_stdio_modern_a_host_without_apps_gets_text_and_no_app_only_tool(apps: StdioPeer) -> None:
    tools = result_of(apps.ask(request(1, "tools/list")))["tools"]
    assert [t["name"] for t in tools] == MODEL_TOOLS
    rolled = result_of(apps.ask(call(2, "roll_dice", {"count": 3, "sides": 1})))
    assert rolled["content"] == [{"type": "text", "text": "Rolled 1, 1, 1 (total 3)"}]  # the fallback text
    assert apps.ask(call(3, "add_note", {"text": "sneaky"})) == {
        "jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool: add_note", "data": {"name": "add_note"}},
    }
    assert result_of(apps.ask(call(4, "show_notes")))["structuredContent"] == {"notes": ["Buy dice"]}  # nothing was added


def test_stdio_modern_negotiation_is_per_request(apps: StdioPeer) -> None:
    assert len(result_of(apps.ask(request(1, "tools/list", meta=APPS_META)))["tools"]) == 5
    assert len(result_of(apps.ask(request(2, "tools/list")))["tools"]) == 2
    other_mime = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {UI_EXTENSION: {"mimeTypes": ["text/uri-list"]}}}}
    assert len(result_of(apps.ask(request(3, "tools/list", meta=other_mime)))["tools"]) == 2


# -- stdio, 2025-11-25 -------------------------------------------------------------------


def test_stdio_legacy_an_apps_host_negotiates_in_initialize(apps: StdioPeer) -> None:
    result = initialize(apps, UI_CAPS)
    assert result["capabilities"]["extensions"] == {UI_EXTENSION: {}}
    tools = result_of(apps.ask(legacy(1, "tools/list")))["tools"]
    assert [t["name"] for t in tools] == ALL_TOOLS
    check_tool_meta(tools)
    history = result_of(apps.ask(legacy(2, "tools/call", {"name": "dice_history", "arguments": {}})))
    assert history["content"] == [{"type": "text", "text": "No rolls yet."}]
    check_views(result_of(apps.ask(legacy(3, "resources/list")))["resources"])
    check_dice_page(result_of(apps.ask(legacy(4, "resources/read", {"uri": "ui://apps/dice.html"})))["contents"])


def test_stdio_legacy_a_host_without_apps(apps: StdioPeer) -> None:
    result = initialize(apps, {})
    assert result["capabilities"]["extensions"] == {UI_EXTENSION: {}}  # the server's offer stands
    assert [t["name"] for t in result_of(apps.ask(legacy(1, "tools/list")))["tools"]] == MODEL_TOOLS
    assert apps.ask(legacy(2, "tools/call", {"name": "list_notes", "arguments": {}}))["error"] == {
        "code": -32602, "message": "Unknown tool: list_notes", "data": {"name": "list_notes"},
    }
    shown = result_of(apps.ask(legacy(3, "tools/call", {"name": "show_notes", "arguments": {}})))
    assert shown["content"] == [{"type": "text", "text": "1 note(s):\n- Buy dice"}]


# -- HTTP, both eras, wiremcp's Client ------------------------------------------------------


class HTTPServer:
    """``wiremcp run FILE --http --port 0``, stderr in a file; knows its port once it is up."""

    def __init__(self, path: str) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-apps-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        args = wiremcp_cmd("run", path, "--http", "--port", "0", "--log-level", "INFO")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT)
        deadline = time.monotonic() + 30
        while True:
            found = re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", self.log_path.read_text(errors="replace"))
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}/mcp"
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise AssertionError("the server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def apps_http() -> Iterator[HTTPServer]:
    pytest.importorskip("uvicorn")
    server = HTTPServer(APPS)
    yield server
    server.stop()


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_http_an_apps_host(apps_http: HTTPServer, era: str) -> None:
    from wiremcp import Client

    async def main() -> None:
        async with Client.http(apps_http.url, era=era, capabilities=UI_CAPS) as client:
            assert (await client.discover()).capabilities["extensions"] == {UI_EXTENSION: {}}
            tools = await client.list_tools()
            assert [t["name"] for t in tools] == ALL_TOOLS
            check_tool_meta(tools)
            check_views(await client.list_resources())
            check_dice_page((await client.read_resource("ui://apps/dice.html")).contents)
            await client.call_tool("roll_dice", {"count": 2, "sides": 1})
            history = await client.call_tool("dice_history")  # the module's server: earlier tests rolled too
            assert not history.is_error and re.fullmatch(r"\d+ roll\(s\) so far: totals (\d+, )*2", history.text), history.text

    asyncio.run(main())


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_http_a_host_without_apps(apps_http: HTTPServer, era: str) -> None:
    from wiremcp import Client
    from wiremcp.client import RemoteError

    async def main() -> None:
        async with Client.http(apps_http.url, era=era) as client:
            assert (await client.discover()).capabilities["extensions"] == {UI_EXTENSION: {}}
            assert [t["name"] for t in await client.list_tools()] == MODEL_TOOLS
            rolled = await client.call_tool("roll_dice", {"count": 2, "sides": 1})
            assert rolled.text == "Rolled 1, 1 (total 2)"
            with pytest.raises(RemoteError) as caught:
                await client.call_tool("dice_history")
            assert (caught.value.code, caught.value.message) == (-32602, "Unknown tool: dice_history")

    asyncio.run(main())


# -- the link check: `wiremcp run` refuses to serve -----------------------------------------


def test_stdio_a_tool_linked_to_a_missing_resource_stops_the_server() -> None:
    proc = subprocess.run(wiremcp_cmd("run", BROKEN), input=b"", capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode != 0 and proc.stdout == b""
    assert (
        "tool 'show_weather' shows 'ui://broken/missing.html', but no resource is registered at that URI"
        in proc.stderr.decode()
    )


def test_http_a_tool_linked_to_a_missing_resource_stops_the_server() -> None:
    pytest.importorskip("uvicorn")
    proc = subprocess.run(wiremcp_cmd("run", BROKEN, "--http", "--port", "0"), stdin=subprocess.DEVNULL,
                          capture_output=True, cwd=ROOT, timeout=60)
    assert proc.returncode != 0
    assert "tool 'show_weather' shows 'ui://broken/missing.html'" in proc.stderr.decode()
