"""``wiremcp inspect --auth``: a real login against examples/oauth_demo.py, through the loopback
redirect handler and a stand-in browser ($BROWSER), with tokens kept in the file store."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def demo_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "examples/oauth_demo.py", "--port", str(port)], cwd=ROOT, stdin=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_inspect_auth_logs_in_once_then_uses_the_stored_token(demo_url, tmp_path):
    log = tmp_path / "browser.log"
    env = {
        **os.environ,
        "BROWSER": f"{sys.executable} {ROOT / 'tests' / 'auth' / 'fake_browser.py'} %s",
        "FAKE_BROWSER_LOG": str(log),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    argv = [sys.executable, "-m", "wiremcp", "inspect", "--auth", "--no-color", demo_url]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "whoami" in first.stdout
    opened = log.read_text().splitlines()
    assert len(opened) == 1 and "code_challenge_method=S256" in opened[0] and "resource=" in opened[0]
    [stored] = list((tmp_path / "state" / "wiremcp" / "oauth").iterdir())
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600

    assert opened[0] in first.stderr  # the URL is printed too, for when no browser opens

    # --oauth, the first name of --auth, still works (hidden from --help)
    second = subprocess.run(
        [*argv[:4], "--oauth", *argv[5:]], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(log.read_text().splitlines()) == 1  # no second login: the stored token was used
    helped = subprocess.run([sys.executable, "-m", "wiremcp", "inspect", "--help"], capture_output=True, text=True, timeout=60)
    assert "--auth" in helped.stdout and "--oauth" not in helped.stdout


def test_inspect_without_oauth_reports_the_401(demo_url):
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "inspect", "--no-color", demo_url],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "401" in done.stderr
