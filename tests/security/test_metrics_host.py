"""Issue 23, defect 6d: ``wiremcp run --http --metrics`` answered any ``Host`` (DNS rebinding).

The MCP endpoint refuses a ``Host`` or ``Origin`` outside its allow-list
with 403 (streamable-http.mdx, "Security & Endpoint"), but the metrics
endpoint beside it (prometheus_client's own server) answered every
request: a web page on a rebound name could read the method counts and
the open sessions of a local server. Now ``/metrics`` applies the same
lists. Over a real ``wiremcp run`` process, with raw HTTP requests carrying
a foreign ``Host`` and ``Origin``, for the MCP endpoint and the metrics
endpoint side by side.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest
from _servers import raw_request
from _servers import stop as stop_process

pytest.importorskip("prometheus_client", reason="the metrics endpoint needs the [otel] extra")

ROOT = Path(__file__).resolve().parents[2]
ECHO = str(ROOT / "src" / "wiremcp" / "examples" / "echo.py")

INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()


class Running:
    """``wiremcp run echo.py --http --port 0 --metrics 0 ARGS``; the two ports once both are up."""

    def __init__(self, *args: str) -> None:
        self.log = Path(tempfile.mkstemp(prefix="wiremcp-metrics-host-", suffix=".log")[1])
        with open(self.log, "wb") as sink:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "wiremcp", "run", ECHO, "--http", "--port", "0", "--metrics", "0", "--log-level", "INFO", *args],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.log.read_text()
            mcp = re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", text)
            metrics = re.search(r"metrics at http://127\.0\.0\.1:(\d+)/metrics", text)
            if mcp and metrics:
                self.mcp_port, self.metrics_port = int(mcp.group(1)), int(metrics.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        text = self.log.read_text()
        self.stop()
        raise AssertionError(f"the server did not start:\n{text}")

    def stop(self) -> None:
        stop_process(self.proc)
        self.log.unlink(missing_ok=True)


def mcp_post(server: Running, host: str, origin: str | None = None) -> int:
    """An ``initialize`` POST to the MCP endpoint with this ``Host`` (and ``Origin``); the status."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return raw_request(server.mcp_port, "POST", "/mcp", host, _with_origin(headers, origin), INITIALIZE)[0]


def metrics_get(server: Running, host: str | None, origin: str | None = None) -> tuple[int, bytes]:
    """A GET of ``/metrics`` with this ``Host`` (None: none at all) and ``Origin``; the status and the body."""
    status, _, body = raw_request(server.metrics_port, "GET", "/metrics", host, _with_origin({}, origin))
    return status, body


def _with_origin(headers: dict[str, str], origin: str | None) -> dict[str, str]:
    return headers if origin is None else {**headers, "Origin": origin}


@pytest.fixture(scope="module")
def server() -> Iterator[Running]:
    running = Running()
    try:
        yield running
    finally:
        running.stop()


def test_a_local_host_reads_the_metrics(server: Running) -> None:
    for host in (f"127.0.0.1:{server.metrics_port}", f"localhost:{server.metrics_port}", "localhost"):
        status, body = metrics_get(server, host)
        assert status == 200 and b"wiremcp_requests_in_flight" in body
    status, body = metrics_get(server, f"localhost:{server.metrics_port}", f"http://localhost:{server.mcp_port}")
    assert status == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "rebind.attacker.test:80", "127.0.0.1.nip.io:{port}"])
def test_a_foreign_host_is_refused_as_by_the_mcp_endpoint(server: Running, host: str) -> None:
    assert mcp_post(server, host.format(port=server.mcp_port)) == 403
    status, body = metrics_get(server, host.format(port=server.metrics_port))
    assert status == 403, body
    assert b"DNS-rebinding" in body and b"wiremcp_" not in body


def test_a_foreign_origin_is_refused_as_by_the_mcp_endpoint(server: Running) -> None:
    origin = "http://evil.example"
    assert mcp_post(server, f"localhost:{server.mcp_port}", origin) == 403
    status, body = metrics_get(server, f"localhost:{server.metrics_port}", origin)
    assert status == 403 and b"wiremcp_" not in body


def test_a_missing_host_is_refused(server: Running) -> None:
    assert metrics_get(server, None)[0] in (400, 403)


def test_allow_host_and_allow_origin_open_both_endpoints() -> None:
    running = Running("--allow-host", "mcp.example.com", "--allow-origin", "https://console.example.com")
    try:
        assert mcp_post(running, "mcp.example.com", "https://console.example.com") == 200
        status, body = metrics_get(running, "mcp.example.com", "https://console.example.com")
        assert status == 200 and b"wiremcp_requests_total" in body
        assert mcp_post(running, "localhost") == 403  # a list given replaces the defaults
        assert metrics_get(running, "localhost")[0] == 403
        assert metrics_get(running, "mcp.example.com", "http://evil.example")[0] == 403
    finally:
        running.stop()

