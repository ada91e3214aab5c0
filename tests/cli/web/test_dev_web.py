"""``wiremcp dev --web``: the inspector is the client, and reconnects to the new server after an edit.

Synchronised on dev's own stderr lines (``watching``, ``restarted``), never on sleeps.
"""

from __future__ import annotations

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
