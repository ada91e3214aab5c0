"""Servers for the task tests, as real processes (fixtures: import them into the test module).

``@modelcontextprotocol/server-everything`` (pinned in everything/package.json)
advertises ``tasks.requests.tools.call``, ``tasks.list`` and ``tasks.cancel``;
its ``simulate-research-query`` tool (``execution.taskSupport: "required"``)
runs four one-second stages and, with ``ambiguous: true``, asks for an
elicitation through ``tasks/result``. It is installed with ``npm ci`` on
first use (a clean clone has no ``node_modules``); without npm or a recent
Node the tests skip on a developer machine and fail in CI.

Not a ``conftest.py``: the suite's ``from conftest import ...`` means
tests/conftest.py, and a second module of that name would replace it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EVERYTHING_DIR = HERE / "everything"
EVERYTHING_JS = EVERYTHING_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
CONFORMANCE_NODE = ROOT / "conformance" / "node_modules" / ".bin" / "node"
#: The tool of server-everything that always runs as a task.
RESEARCH = "simulate-research-query"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    if in_ci():
        pytest.fail(f"{reason} (CI is set: this is a broken set-up, not a skip)")
    pytest.skip(reason)


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


@pytest.fixture(scope="session")
def everything() -> list[str]:
    """The command that starts server-everything (append ``stdio`` or ``streamableHttp``)."""
    if not EVERYTHING_JS.exists():
        npm = shutil.which("npm")
        if npm is None:
            unavailable("needs npm to install @modelcontextprotocol/server-everything (tests/client/tasks/everything)")
        assert npm is not None
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=EVERYTHING_DIR, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.fail(f"npm ci in tests/client/tasks/everything failed:\n{done.stdout}\n{done.stderr}")
    for candidate in (os.environ.get("CONFORMANCE_NODE"), str(CONFORMANCE_NODE), shutil.which("node")):
        if candidate and _node_major(candidate) >= 20:
            return [candidate, str(EVERYTHING_JS)]
    unavailable("needs Node >= 20 for @modelcontextprotocol/server-everything")
    raise AssertionError("unreachable")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Until ``port`` accepts connections: a synchronisation point, not a sleep."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else b''!r}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


@pytest.fixture
def everything_url(everything: list[str]) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free loopback port (a 2025-11-25 HTTP server)."""
    port = free_port()
    proc = subprocess.Popen(
        [*everything, "streamableHttp"], env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        _wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
