"""Test set-up for the web inspector: the inspector process, and Debian's Chromium driven over DevTools.

* `InspectorProcess` runs ``wiremcp inspect --web -- python web_server.py``
  (or any TARGET) and reads the page's URL from its first stdout line.
* `Chromium` and `Page` are `wiremcp.testing.chromium`'s (public since the
  MCP Apps helpers use them): headless Debian Chromium, spoken to over the
  DevTools protocol with aiohttp's websocket client (docs/decisions.md,
  "Driving Chromium in the inspector tests"); a missing browser fails the
  test here. ``wait_for`` polls a JavaScript condition until it holds, and
  fails with what the page shows when it never does: the tests synchronise
  on what the page displays, never on sleeps.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from wiremcp.testing import chromium as _chromium
from wiremcp.testing.chromium import CHROMIUM, Page

__all__ = ["HERE", "SERVER", "CHROMIUM", "InspectorProcess", "Chromium", "Page"]

HERE = Path(__file__).resolve().parent
SERVER = HERE / "web_server.py"


class InspectorProcess:
    """``wiremcp inspect --web ARGS``: ``url``, ``port`` and ``token`` once it serves."""

    #: What the inspector wrote on stderr, once stopped.
    stderr: str = ""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "inspect", "--web", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            self.stop()
            raise AssertionError(f"no URL from the inspector: {line!r}\n{self.stderr}")
        self.url = line
        self.port = int(line.split(":")[2].split("/")[0])
        self.token = line.rstrip("/").rsplit("/", 1)[1]
        self.stderr = ""

    @classmethod
    def of_test_server(cls, *options: str) -> InspectorProcess:
        return cls(*options, "--", sys.executable, str(SERVER))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        _, err = self.proc.communicate()
        self.stderr = err or ""
        return self.proc.returncode


class Chromium(_chromium.Chromium):
    """`wiremcp.testing.chromium.Chromium`; a machine without it fails the test (CI installs it)."""

    def __init__(self) -> None:
        if not os.path.exists(CHROMIUM):
            pytest.fail(f"{CHROMIUM} is missing: .ci/system-packages installs Debian's chromium")
        super().__init__()
