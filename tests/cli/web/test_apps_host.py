"""The web inspector as an MCP Apps host, in headless Chromium (apps.mdx, host requirements).

Every test runs ``wiremcp inspect --web`` on a real server, through
`wiremcp.testing.apps.app_host`, and renders a tool's view: the two views of
examples/apps.py (the official App SDK's and the raw JSON-RPC one) initialize,
get the tool input and result, call tools through the host and resize; the
probe view of apps_server.py tries what a view may not do and gets the
spec's answers, and none of it reaches the server. The CSP is asserted from
the browser: the header it received with the view, and the violation it
reported for an undeclared origin.

``WIREMCP_APPS_SCREENSHOT=path.png`` saves the screenshot of the dice test
there (docs/img/inspector-apps.png was made so).
"""

from __future__ import annotations

import asyncio
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Literal

import pytest

from inspector_harness import HERE, Chromium, Page
from test_dev_web import DevWeb
from wiremcp.testing.apps import AppHost, Envelope, View, app_host

pytestmark = pytest.mark.slow

ROOT = HERE.parents[2]
APPS = str(ROOT / "src" / "wiremcp" / "examples" / "apps.py")
PROBE = str(HERE / "apps_server.py")
DEFAULT_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'; sandbox allow-scripts"
)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    browser = Chromium()
    try:
        yield browser
    finally:
        browser.close()


def run(coro: Any) -> None:
    asyncio.run(coro)


async def frame_follows_size(view: View, timeout: float = 60.0) -> None:
    """The frame's height becomes the last height the view reported (up to maxHeight, 600)."""
    deadline = time.monotonic() + timeout
    while True:
        sizes = [e for e in await view.envelopes() if e.method == "ui/notifications/size-changed"]
        wanted = f"{min(math.ceil(sizes[-1].message['params']['height']), 600)}px"
        if await view.frame_height() == wanted:
            return
        assert time.monotonic() < deadline, f"the frame is {await view.frame_height()}, the view asked for {wanted}"
        await asyncio.sleep(0.05)


def reply(envelopes: list[Envelope], view: View, method: str, **params: Any) -> Envelope:
    """The host's reply to the view's first ``method`` request whose params include ``params``."""
    for e in envelopes:
        if e.direction == "v2h" and e.method == method and e.id is not None:
            got = e.message.get("params") or {}
            if all(got.get(k) == v for k, v in params.items()):
                answer = view.reply_to(envelopes, e)
                assert answer is not None, f"{method} {params} was never answered"
                return answer
    raise AssertionError(f"the view never sent {method} {params}")


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_sdk_view_initializes_gets_input_and_result_calls_tools_and_resizes(chromium: Chromium, era: Literal["modern", "legacy"]) -> None:
    async def scenario() -> None:
        async with app_host(APPS, era=era, chromium=chromium) as host:
            view = await host.render("roll_dice", {"count": 3})
            init = await view.wait_for_envelope("ui/initialize")
            assert init.message["params"]["appInfo"] == {"name": "dice-view", "version": "1.0.0"}
            answer = await view.wait_for_reply(init)
            result = answer.message["result"]
            assert result["protocolVersion"] == "2026-01-26"
            assert set(result["hostCapabilities"]) >= {"serverTools", "serverResources", "openLinks", "logging", "sandbox"}
            context = result["hostContext"]
            assert context["theme"] in ("light", "dark") and context["displayMode"] == "inline"
            assert context["containerDimensions"]["maxHeight"] == 600 and context["containerDimensions"]["width"] > 0
            assert context["locale"] and context["platform"] == "web"
            assert context["toolInfo"]["tool"]["name"] == "roll_dice"
            await view.wait_initialized()
            tool_input = await view.wait_for_envelope("ui/notifications/tool-input")
            assert tool_input.direction == "h2v" and tool_input.message["params"] == {"arguments": {"count": 3}}
            tool_result = await view.wait_for_envelope("ui/notifications/tool-result")
            rolls = tool_result.message["params"]["structuredContent"]["rolls"]
            assert len(rolls) == 3
            # the view draws the result it was given
            await view.wait_for(f"document.getElementById('rolls').textContent.endsWith('= {sum(rolls)}')")
            # the view's own call of the app-only tool, through the host to the server
            history = await view.wait_for_envelope("tools/call", lambda e: e.message["params"]["name"] == "dice_history")
            assert "result" in (await view.wait_for_reply(history)).message
            # a click in the view: roll_dice again, forwarded to the server
            await view.click("#again")
            again = await view.wait_for_envelope(
                "tools/call", lambda e: e.message["params"]["name"] == "roll_dice" and e.direction == "v2h"
            )
            assert again.message["params"]["arguments"] == {"count": 2}
            assert "result" in (await view.wait_for_reply(again)).message
            await host.wait_for_server_envelope(lambda m: m.get("method") == "tools/call" and m["params"]["arguments"] == {"count": 2})
            calls = [m for m in await host.server_envelopes() if m.get("method") == "tools/call"]
            assert [c["params"]["name"] for c in calls][:1] == ["roll_dice"] and len(calls) >= 3
            # the SDK reports its size; the host sizes the frame to its height
            await view.wait_for_envelope("ui/notifications/size-changed")
            await frame_follows_size(view)
            assert await view.csp() == DEFAULT_CSP  # _meta.ui.csp absent: the restrictive default
            assert await view.problems() == []
            shot = os.environ.get("WIREMCP_APPS_SCREENSHOT")
            if shot and era == "modern":
                await host.page.evaluate("document.querySelector('#wire li[data-channel=\"view-host\"] details').open = true")
                await host.page.screenshot(Path(shot))

    run(scenario())


def test_the_raw_view_lists_and_adds_notes_through_the_host(chromium: Chromium) -> None:
    async def scenario() -> None:
        async with app_host(APPS, chromium=chromium) as host:
            view = await host.render("show_notes")
            await view.wait_initialized()
            await view.wait_for_envelope("ui/notifications/tool-result")
            listed = await view.wait_for_envelope("tools/call", lambda e: e.message["params"]["name"] == "list_notes")
            await view.wait_for_reply(listed)
            await view.fill("#text", "Paint the dice")
            await view.click("#add")
            added = await view.wait_for_envelope("tools/call", lambda e: e.message["params"]["name"] == "add_note")
            answer = await view.wait_for_reply(added)
            assert "Paint the dice" in answer.message["result"]["structuredContent"]["notes"]
            await view.wait_for("Array.from(document.querySelectorAll('#notes li')).some(li => li.textContent === 'Paint the dice')")
            assert await view.problems() == []
            # the wire view shows the postMessage envelopes beside the server's, marked view <-> host
            rows = await host.page.evaluate(
                "Array.from(document.querySelectorAll('#wire li[data-channel=\"view-host\"]')).map(r => r.querySelector('.arrow').textContent)"
            )
            assert any(r.startswith("→ view to host") for r in rows) and any(r.startswith("← host to view") for r in rows)
            assert any("sandbox to host" in r for r in rows)
            # Close view: ui/resource-teardown first, answered by the view, then the frame goes
            await host.click(f'.view[data-view="{view.number}"] [data-action=close]')
            teardown = await view.wait_for_envelope("ui/resource-teardown")
            assert teardown.direction == "h2v" and teardown.message["params"] == {"reason": "closed in the inspector"}
            assert (await view.wait_for_reply(teardown)).message["result"] == {}
            await host.page.wait_for(f"document.querySelector('.view[data-view=\"{view.number}\"]').dataset.state === 'closed'")
            assert await host.page.evaluate("document.querySelectorAll('.view iframe').length") == 0

    run(scenario())


def test_a_view_that_breaks_the_rules_is_refused_and_nothing_reaches_the_server(chromium: Chromium) -> None:
    async def scenario() -> None:
        async with app_host([sys.executable, PROBE], chromium=chromium) as host:
            view = await host.render("probe", {"level": 2})
            await host.page.wait_for("!!document.querySelector('.view .confirm')")
            await host.click(".view .confirm [data-action=refuse]")
            await view.wait_for_envelope("notifications/message", lambda e: e.message["params"]["data"] == "done")
            envelopes = await view.envelopes()
            first = envelopes[0]
            assert (first.sender, first.method) == ("sandbox", "ui/notifications/sandbox-proxy-ready")
            # a string, then "jsonrpc": "1.0": -32600, with the id when it can be read
            hello = next(e for e in envelopes if e.message == "hello")
            assert [p["code"] for p in hello.problems] == ["not-an-object"]
            after = envelopes[envelopes.index(hello) + 1]
            assert after.direction == "h2v" and after.message["id"] is None and after.message["error"]["code"] == -32600
            old = next(e for e in envelopes if isinstance(e.message, dict) and e.message.get("jsonrpc") == "1.0")
            assert [p["code"] for p in old.problems] == ["bad-jsonrpc"]
            assert view.reply_to(envelopes, old).message["error"]["code"] == -32600  # type: ignore[union-attr]
            # a call before ui/initialize
            early = reply(envelopes, view, "tools/call", name="app_echo", arguments={"text": "too early"})
            assert early.message["error"]["code"] == -32600
            # the sandbox's reserved message, sent by the view: flagged, not acted on
            reserved = [e for e in envelopes if e.method == "ui/notifications/sandbox-proxy-ready"]
            assert [e.sender for e in reserved] == ["sandbox", None]
            assert [p["code"] for p in reserved[1].problems] == ["sandbox-reserved"]
            # an app-invisible tool and a tool of no listed server: -32602, never forwarded
            assert reply(envelopes, view, "tools/call", name="secret").message["error"]["code"] == -32602
            assert reply(envelopes, view, "tools/call", name="other_server_tool").message["error"]["code"] == -32602
            assert reply(envelopes, view, "tools/call", name="app_echo", arguments={"text": "from the view"}).message["result"][
                "content"
            ] == [{"type": "text", "text": "echo: from the view"}]
            await host.wait_for_server_envelope(lambda m: m.get("method") == "tools/call" and m["params"]["name"] == "app_echo")
            names = [m["params"]["name"] for m in await host.server_envelopes() if m.get("method") == "tools/call"]
            assert names == ["probe", "app_echo"]
            # an unknown method: -32601, and the checker says why
            assert reply(envelopes, view, "ui/bogus").message["error"]["code"] == -32601
            bogus = next(e for e in envelopes if e.method == "ui/bogus")
            assert [p["code"] for p in bogus.problems] == ["unknown-method"]
            # display modes: fullscreen (declared by the view, offered by the host), pip refused with the current mode
            assert reply(envelopes, view, "ui/request-display-mode", mode="fullscreen").message["result"] == {"mode": "fullscreen"}
            changed = next(e for e in envelopes if e.method == "ui/notifications/host-context-changed")
            assert changed.message["params"] == {"displayMode": "fullscreen"}
            assert reply(envelopes, view, "ui/request-display-mode", mode="pip").message["result"] == {"mode": "fullscreen"}
            assert await view.display_mode() == "fullscreen"
            # size-changed: the frame follows the view's height
            assert await view.frame_height() == "222px"
            # ui/open-link, refused by the person
            denied = reply(envelopes, view, "ui/open-link", url="https://example.com/docs")
            assert denied.message["error"] == {"code": -32000, "message": "Link opening denied by user"}
            # CSP: the header the browser got, and the violation it reported for the undeclared origin
            policy = await view.csp()
            assert "connect-src 'self' http://127.0.0.1:7;" in policy and "frame-src 'none'" in policy and "object-src 'none'" in policy
            violations = [
                e.message["params"]["data"] for e in envelopes
                if e.method == "notifications/message" and isinstance(e.message["params"]["data"], dict)
            ]
            assert [(v["blocked"], v["directive"]) for v in violations] == [("http://127.0.0.1:9/undeclared", "connect-src")]
            assert violations[0]["policy"] == policy
            # the host shows why, beside the view
            shown = await view.host_text()
            for why in ("Unknown tool: secret", "Unknown tool: other_server_tool", "before ui/initialize", "Link opening denied by user",
                        "! sandbox-reserved", "! unknown-method", "connect-src"):
                assert why in shown, why
            # the host never answered anything before initialized, and never sent a second tool-result
            assert [e.method for e in envelopes if e.method and e.method.startswith("ui/notifications/tool-")] == [
                "ui/notifications/tool-input", "ui/notifications/tool-result"
            ]
            assert all(p["code"] != "host-before-initialized" for _, p in await view.problems())
            # the inspector is still serving
            assert await host.page.evaluate("document.querySelector('#status').textContent") == "live"

    run(scenario())


def test_the_main_page_frames_only_the_sandbox_and_the_sandbox_only_the_page(chromium: Chromium) -> None:
    async def scenario() -> None:
        async with app_host(APPS, chromium=chromium) as host:
            view = await host.render("roll_dice")
            await view.wait_initialized()
            page = host.page.response_headers(host.url)
            sandbox = await host.page.evaluate("document.querySelector('.view iframe').src.split('#')[0]")
            origin = sandbox.rsplit("/", 2)[0]
            assert origin != host.url.rsplit("/", 2)[0].rstrip("/")
            assert f"frame-src {origin};" in page["content-security-policy"]
            assert "frame-ancestors 'none'" in page["content-security-policy"]
            proxy = host.page.response_headers(sandbox)["content-security-policy"]
            page_origin = "http://127.0.0.1:" + host.url.split(":")[2].split("/")[0]
            assert f"frame-ancestors {page_origin} " in proxy and "script-src 'self';" in proxy
            assert await host.page.evaluate("document.querySelector('.view iframe').sandbox.value") == "allow-scripts allow-same-origin"

    run(scenario())


DEV_SERVER = '''import wiremcp

server = wiremcp.Server("devapps", version="1")
VIEW = """<!DOCTYPE html><html><body><p id="got">none</p><script type="module">
const send = (m) => window.parent.postMessage({ jsonrpc: "2.0", ...m }, "*");
window.addEventListener("message", (e) => {
  if (e.data.method === "ui/notifications/tool-result") document.getElementById("got").textContent = e.data.params.content[0].text;
  if (e.data.id === 1) send({ method: "ui/notifications/initialized", params: {} });
});
send({ id: 1, method: "ui/initialize", params: { appInfo: { name: "v", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
</script></body></html>"""
server.ui_resource("ui://dev/view.html", html=VIEW)


@server.tool(ui="ui://dev/view.html")
def show() -> str:
    return "ANSWER"


@server.tool(visibility="app")
def for_views() -> str:
    return "app only"
'''


def test_dev_web_is_a_host_too_and_renders_the_view_again_after_an_edit(chromium: Chromium, tmp_path: Path) -> None:
    source = tmp_path / "srv.py"
    source.write_text(DEV_SERVER.replace("ANSWER", "first"))
    dev = DevWeb(tmp_path)

    async def scenario() -> None:
        async with Page(chromium) as page:
            await page.goto(dev.url)
            # the client declared Apps: the app-only tool is listed
            await page.wait_for("Array.from(document.querySelectorAll('#tools button')).map(b => b.dataset.name).join() === 'show,for_views'")
            host = AppHost(dev.url, page, dev.proc)
            view = await host.render("show")
            await view.wait_initialized()
            await view.wait_for("document.getElementById('got').textContent === 'first'")
            source.write_text(DEV_SERVER.replace("ANSWER", "second"))
            await asyncio.to_thread(dev.wait_for, "srv.py changed; restarted")
            await page.wait_for("document.querySelectorAll('#tools button').length === 2")
            again = await host.render("show")
            await again.wait_for("document.getElementById('got').textContent === 'second'")
            assert await again.problems() == [] and again.number == view.number + 1

    try:
        dev.wait_for("wiremcp dev: watching")
        run(scenario())
    finally:
        dev.stop()
