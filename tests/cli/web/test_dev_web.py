"""``wiremcp dev --web``: the inspector is the client, and reconnects to the new server after an edit.

Synchronised on dev's own stderr lines (``watching``, ``restarted``), never on sleeps.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector_harness import InspectorProcess
from test_app import events_until, fetch, post

pytestmark = pytest.mark.slow

SERVER = '''import wiremcp

server = wiremcp.Server("devweb", version="1")


@server.tool()
def {name}() -> str:
    return "{answer}"
'''


class DevWeb(InspectorProcess):
    """``wiremcp dev --web srv.py`` in ``folder``: the URL from stdout, dev's lines from stderr."""

    def __init__(self, folder: Path) -> None:  # not super().__init__: that one runs `inspect`
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "dev", "--web", "--no-color", "srv.py"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=folder, text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url
        self.port = int(self.url.split(":")[2].split("/")[0])
        self.token = self.url.rstrip("/").rsplit("/", 1)[1]
        self.lines: list[str] = []
        self.buffer = ""

    def wait_for(self, words: str, timeout: float = 60.0) -> str:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        while True:
            for index, line in enumerate(self.lines):
                if words in line:
                    del self.lines[: index + 1]
                    return line
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            chunk = os.read(fd, 65536).decode(errors="replace") if ready else ""
            if not chunk:
                raise AssertionError(f"no {words!r} on stderr; saw: {self.lines}")
            self.buffer += chunk
            *done, self.buffer = self.buffer.split("\n")
            self.lines.extend(done)


def test_dev_web_reconnects_after_an_edit(tmp_path: Path) -> None:
    source = tmp_path / "srv.py"
    source.write_text(SERVER.format(name="version", answer="one"))
    dev = DevWeb(tmp_path)
    try:
        dev.wait_for("wiremcp dev: the inspector is at " + dev.url)
        dev.wait_for("wiremcp dev: watching")
        state = fetch(dev, "GET", "api/state").json()
        assert state["serverInfo"] == {"name": "devweb", "version": "1"} and [t["name"] for t in state["tools"]] == ["version"]
        assert post(dev, "api/call", {"kind": "tool", "name": "version"}).json()["result"]["content"][0]["text"] == "one"

        source.write_text(SERVER.format(name="release", answer="two"))
        dev.wait_for("srv.py changed; restarted")
        state = fetch(dev, "GET", "api/state").json()
        assert [t["name"] for t in state["tools"]] == ["release"]
        assert post(dev, "api/call", {"kind": "tool", "name": "release"}).json()["result"]["content"][0]["text"] == "two"
        events = events_until(dev, lambda e: any(n == "wire" and '"two"' in d["text"] for n, d in e))
        texts = [d["text"] for n, d in events if n == "wire"]
        assert any('"one"' in text for text in texts)  # the history outlives the restart
        # the wire after the restart is checked afresh: ids start over without a duplicate-id problem
        assert all(d["problems"] == [] for n, d in events if n == "wire")

        source.write_text("def broken(:\n")
        line = dev.wait_for("srv.py changed")
        assert "the server did not start" in line
        state = fetch(dev, "GET", "api/state").json()
        assert state["connected"] is False and "SyntaxError" in state["error"]
    finally:
        if dev.proc.poll() is None:
            dev.proc.send_signal(signal.SIGINT)
        try:
            dev.proc.wait(20)
        except subprocess.TimeoutExpired:
            dev.proc.kill()
            dev.proc.wait()


def test_dev_web_and_http_are_exclusive(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text(SERVER.format(name="version", answer="one"))
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "dev", "--web", "--http", "srv.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "--web" in done.stderr and done.stdout == ""


WAITING = '''import asyncio
import wiremcp

server = wiremcp.Server("devweb", version="1")


@server.tool()
def search(query: str) -> str:
    return "{answer}: " + query


@server.tool()
async def wait() -> str:
    await asyncio.sleep(600)
    return "late"
'''

#: JavaScript: each wire row of the client-server channel as [summary, pending mark, data-pending, session].
ROWS = (
    "Array.from(document.querySelectorAll('#wire li[data-channel=\"client-server\"]')).map(r =>"
    " [r.querySelector('.summary').textContent, r.querySelector('.pending-mark').textContent, r.dataset.pending, r.dataset.session])"
)


def test_the_page_names_what_was_called_flags_unanswered_requests_and_labels_sessions(tmp_path: Path) -> None:
    """Issue 28 item 8c: a hint in the empty middle panel, the tool's name in its wire rows, a request
    without a reply flagged (never answered once the server restarted), ids of the new server's session labelled."""
    from inspector_harness import Chromium, Page

    source = tmp_path / "srv.py"
    source.write_text(WAITING.replace("{answer}", "one"))
    dev = DevWeb(tmp_path)
    browser = Chromium()

    async def scenario() -> None:
        async with Page(browser) as page:
            await page.goto(dev.url)
            await page.wait_for("document.querySelectorAll('#tools button').length === 2")
            hint = await page.evaluate("(() => { const h = document.querySelector('#work-hint'); return [h.hidden, h.textContent]; })()")
            assert hint == [False, "Pick a tool, resource or prompt on the left: its form opens here, and what the server answers shows below it."]
            await page.click("#tools button[data-name='search']")
            assert await page.evaluate("document.querySelector('#work-hint').hidden") is True

            await page.evaluate("window.wiremcpInspector.callTool('search', {query: 'mcp'})")
            rows = await page.wait_for(f"(() => {{ const r = {ROWS}.filter(r => r[0].includes('search')); return r.length === 2 && r; }})()")
            asked, answered = rows
            asked_id = asked[0].rsplit("#", 1)[1]
            assert asked == [f"tools/call search #{asked_id}", "", "", "1"]  # answered: no mark left
            assert answered == [f"result #{asked_id} to tools/call search", "", "", "1"]

            await page.evaluate("void window.wiremcpInspector.callTool('wait')")  # never answered by this server
            waiting = await page.wait_for(f"{ROWS}.find(r => r[0].startsWith('tools/call wait #')) || false")
            assert waiting[1:] == ["no reply yet", "waiting", "1"]

            dev.wait_for("wiremcp dev: watching")
            source.write_text(WAITING.replace("{answer}", "two"))
            dev.wait_for("srv.py changed; restarted")
            await page.evaluate("window.wiremcpInspector.callTool('search', {query: 'again'})")
            again = await page.wait_for(
                f"(() => {{ const r = {ROWS}.filter(r => r[0].startsWith('tools/call search') && r[3] === '2'); return r.length === 1 && r[0]; }})()"
            )
            assert again[0].startswith("tools/call search #") and again[0].endswith(" (session 2)") and again[1:3] == ["", ""]
            waited = await page.evaluate(f"{ROWS}.find(r => r[0].startsWith('tools/call wait #'))")
            assert waited[1:] == ["never answered (the server was restarted)", "never", "1"]

    try:
        dev.wait_for("wiremcp dev: the inspector is at " + dev.url)
        asyncio.run(scenario())
    finally:
        browser.close()
        if dev.proc.poll() is None:
            dev.proc.send_signal(signal.SIGINT)
        try:
            dev.proc.wait(20)
        except subprocess.TimeoutExpired:
            dev.proc.kill()
            dev.proc.wait()
