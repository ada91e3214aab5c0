"""The two views of ``examples/apps.py`` run in a real browser, inside a minimal MCP Apps host.

``apps_host.py`` (Starlette on uvicorn, loopback) serves the example server at
``/mcp`` and a host page at ``/`` that follows apps.mdx; headless Chromium,
driven over the WebDriver protocol by ``chromedriver`` (plain HTTP, no client
library), opens the host page. Each test waits on what the page shows, never
on a fixed time:

* the dice view, written with the official App SDK bundle inlined, does the
  ``ui/initialize`` handshake, draws the tool result the host passes it,
  calls the app-only tool ``dice_history`` through the host, and calls
  ``roll_dice`` when its button is clicked;
* the notes view, raw JSON-RPC over ``postMessage``, does the same handshake,
  calls ``list_notes`` when it starts and ``add_note`` from its button.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import pytest

from conftest import ROOT

HERE = Path(__file__).parent
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
T = TypeVar("T")

pytestmark = pytest.mark.slow


def _started(proc: subprocess.Popen[bytes], pattern: str, what: str) -> re.Match[bytes]:
    """Read the process's output until ``pattern`` shows (its port), or fail with what it said."""
    assert proc.stdout is not None
    seen = b""
    for line in proc.stdout:
        seen += line
        found = re.search(pattern.encode(), line)
        if found:
            return found
    raise AssertionError(f"{what} did not start: {seen.decode(errors='replace')}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


@pytest.fixture(scope="module")
def host_url() -> Iterator[str]:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    args = [sys.executable, "-m", "uvicorn", "apps_host:app", "--app-dir", str(HERE), "--port", "0", "--log-level", "info", "--no-access-log"]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    try:
        found = _started(proc, r"Uvicorn running on http://127\.0\.0\.1:(\d+)", "the host")
        yield f"http://127.0.0.1:{int(found.group(1))}/"
    finally:
        _stop(proc)


class Browser:
    """One WebDriver session of headless Chromium (the W3C WebDriver protocol over HTTP)."""

    def __init__(self, driver_url: str) -> None:
        self.base = driver_url
        options = {"args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]}
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium:
            options["binary"] = chromium  # type: ignore[assignment]  # a str beside the list of args
        session = self._call("POST", "/session", {"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}})
        self.session = f"/session/{session['sessionId']}"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as response:
            return json.loads(response.read())["value"]

    def do(self, method: str, path: str, body: Any = None) -> Any:
        return self._call(method, self.session + path, body)

    def open(self, url: str) -> None:
        self.do("POST", "/url", {"url": url})

    def run(self, script: str) -> Any:
        return self.do("POST", "/execute/sync", {"script": script, "args": []})

    def find(self, css: str) -> str:
        element: str = self.do("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]
        return element

    def into_view_frame(self) -> None:
        self.do("POST", "/frame", {"id": {ELEMENT: self.find("iframe")}})

    def back_to_host(self) -> None:
        self.do("POST", "/frame", {"id": None})

    def log(self) -> list[str]:
        lines: list[str] = self.run("return [...document.querySelectorAll('p.log')].map((p) => p.textContent)")
        return lines

    def close(self) -> None:
        self.do("DELETE", "")


def wait_for(check: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """Poll ``check`` until it gives a value (a synchronisation point with a generous deadline, not a timing test)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def driver_url() -> Iterator[str]:
    chromedriver = shutil.which("chromedriver")
    if chromedriver is None:
        pytest.skip("chromedriver is not installed (.ci/system-packages installs chromium and chromedriver)")
    proc = subprocess.Popen([chromedriver, "--port=0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        found = _started(proc, r"started successfully on port (\d+)", "chromedriver")
        yield f"http://127.0.0.1:{int(found.group(1))}"
    finally:
        _stop(proc)


@pytest.fixture
def browser(driver_url: str) -> Iterator[Browser]:
    browser = Browser(driver_url)
    try:
        yield browser
    finally:
        browser.close()


def page(host_url: str, tool: str, arguments: dict[str, Any] | None = None) -> str:
    return host_url + "?" + urllib.parse.urlencode({"tool": tool, "args": json.dumps(arguments or {})})


def logged(browser: Browser, prefix: str, count: int = 1) -> list[str] | None:
    lines = [line for line in browser.log() if line.startswith(prefix)]
    return lines if len(lines) >= count else None


def test_the_sdk_view_shows_the_result_and_calls_tools(browser: Browser, host_url: str) -> None:
    browser.open(page(host_url, "roll_dice", {"count": 3, "sides": 1}))
    wait_for(lambda: logged(browser, "view called dice_history"), "the view's first call")
    log = browser.log()
    assert log[:4] == [
        f"resource ui://apps/dice.html text/html;profile=mcp-app {log[0].rsplit(' ', 1)[1]}",
        'model called roll_dice: [{"type":"text","text":"Rolled 1, 1, 1 (total 3)"}]',
        'view initialize {"name":"dice-view","version":"1.0.0"} 2026-01-26',
        "view initialized",
    ]
    browser.into_view_frame()
    # the SDK's ontoolresult drew the host's ui/notifications/tool-result
    assert wait_for(lambda: browser.run("return document.getElementById('rolls').textContent") == "1 + 1 + 1 = 3" or None,
                    "the drawn result")
    assert re.fullmatch(r"\d+ roll\(s\) so far: totals .*3",
                        wait_for(lambda: browser.run("return document.getElementById('history').textContent"), "the history"))
    browser.do("POST", f"/element/{browser.find('#again')}/click", {})
    drawn = wait_for(lambda: re.fullmatch(r"(\d) \+ (\d) = (\d+)", browser.run("return document.getElementById('rolls').textContent")),
                     "the new roll")
    assert int(drawn.group(1)) + int(drawn.group(2)) == int(drawn.group(3))
    browser.back_to_host()
    (called,) = wait_for(lambda: logged(browser, "view called roll_dice"), "the view's roll_dice call")
    assert f"(total {drawn.group(3)})" in called


def test_the_vanilla_view_speaks_raw_json_rpc(browser: Browser, host_url: str) -> None:
    browser.open(page(host_url, "show_notes"))
    wait_for(lambda: logged(browser, "view called list_notes"), "the view's first call")
    log = browser.log()
    assert log[1:4] == [
        'model called show_notes: [{"type":"text","text":"1 note(s):\\n- Buy dice"}]',
        'view initialize {"name":"notes-view","version":"1.0.0"} 2026-01-26',
        "view initialized",
    ]
    browser.into_view_frame()
    notes = "return [...document.querySelectorAll('#notes li')].map((li) => li.textContent)"
    assert wait_for(lambda: browser.run(notes), "the drawn notes") == ["Buy dice"]
    browser.do("POST", f"/element/{browser.find('#text')}/value", {"text": "Water the plants"})
    browser.do("POST", f"/element/{browser.find('#add')}/click", {})
    assert wait_for(lambda: browser.run(notes) if len(browser.run(notes)) == 2 else None, "the new note") == [
        "Buy dice",
        "Water the plants",
    ]
    browser.back_to_host()
    (called,) = wait_for(lambda: logged(browser, "view called add_note"), "the view's add_note call")
    assert called == 'view called add_note: [{"type":"text","text":"2 note(s):\\n- Buy dice\\n- Water the plants"}]'
