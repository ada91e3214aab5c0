"""Starting the real servers tests speak to: a free loopback port, waiting until it listens, the Node tools.

Import what you need (``from _servers import ...``: tests/ is on sys.path, as
for ``from conftest import ...``). Not a conftest.py: its helpers are plain
functions, and its one fixture-maker (`wiremcp_http`) is a context manager
each test module wraps in a fixture of its own.

Rules kept here:

* a missing tool (npm, a Node >= 20) skips on a developer machine and fails
  in CI (``CI`` set to true): there it is a broken set-up, not a reason to
  skip (`unavailable`);
* npm packages are installed with ``npm ci`` (the lock file's versions) on
  first use: a clean clone has no ``node_modules`` (`npm_ci`);
* Node is the first of ``CONFORMANCE_NODE``, the conformance suite's own
  and the one on PATH whose major version is 20 or more (`node20`);
* waiting for a port is a synchronisation point that also notices the
  server exiting, never a fixed sleep (`wait_listening`);
* a server process is stopped with SIGTERM (coverage writes its data), and
  killed when it has not exited 10 s later (`stop`);
* an ASGI app of a test folder is served by a real ``uvicorn`` process on a
  free loopback port, the app reading its own URL from the environment when
  it needs it before it starts (an OAuth resource: `uvicorn_app`);
* a request meant to break the rules is written with `raw_request`, which
  sends exactly the headers given (no ``Host`` at all when told so).
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_NODE = ROOT / "conformance" / "node_modules" / ".bin" / "node"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail in CI."""
    if in_ci():
        pytest.fail(f"{reason} (CI is set: this is a broken set-up, not a skip)")
    pytest.skip(reason)


def node_major(node: str) -> int:
    """The major version of the Node at ``node`` (0 when it does not run)."""
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


def npm_ci(folder: Path, what: str) -> None:
    """Install the packages of ``folder``'s lock file (``what`` names them in the skip's reason)."""
    npm = shutil.which("npm")
    if npm is None:
        unavailable(f"needs npm to install {what}")
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=folder, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"npm ci in {folder.relative_to(ROOT)} failed:\n{done.stdout}\n{done.stderr}")


def node20(what: str) -> str:
    """A Node >= 20 binary (``what`` names what needs it in the skip's reason)."""
    for candidate in (os.environ.get("CONFORMANCE_NODE"), str(CONFORMANCE_NODE), shutil.which("node")):
        if candidate and node_major(candidate) >= 20:
            return candidate
    unavailable(f"needs Node >= 20 for {what}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
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


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def serving_http(args: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``args`` (a server that listens on ``port``) until the block ends; its ``/mcp`` URL."""
    proc = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)
        if proc.stderr is not None:
            proc.stderr.close()


@contextmanager
def uvicorn_app(app: str, app_dir: Path, env: dict[str, str] | None = None, *, url_env: str | None = None) -> Iterator[str]:
    """``uvicorn MODULE:APP`` from ``app_dir`` on a free loopback port until the block ends; its ``/mcp`` URL.

    ``url_env``: the variable in which the app finds that URL (an app that is
    its own OAuth resource needs it before it starts)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = [sys.executable, "-m", "uvicorn", app, "--app-dir", str(app_dir), "--host", "127.0.0.1", "--port", str(port), "--no-access-log"]
    with serving_http(args, port, {**(env or {}), **({url_env: url} if url_env else {})}) as served:
        yield served


def raw_request(
    port: int, method: str, path: str, host: str | None, headers: dict[str, str] | None = None, body: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request to ``127.0.0.1:port`` with exactly these headers (``host`` None: no Host header at all).

    Returns the status, the response headers (names in lower case) and the body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            connection.putheader("Host", host)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@contextmanager
def wiremcp_http(script: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``wiremcp run SCRIPT --http`` on a free loopback port (needs uvicorn); its endpoint URL."""
    pytest.importorskip("uvicorn")
    port = free_port()
    args = [sys.executable, "-m", "wiremcp", "run", script, "--http", "--host", "127.0.0.1", "--port", str(port)]
    with serving_http(args, port, env) as url:
        yield url
