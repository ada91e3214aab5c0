"""Structured logs and Prometheus metrics without OpenTelemetry, through ``wiremcp run`` (docs/observability.md).

``--log-format json``: every line the server writes on stderr is one JSON
object, and each request served adds one with its method, target, id,
duration and outcome (over stdio, a real process; with telemetry on, the
line carries the trace id of the client's trace). ``--metrics PORT``: the
Prometheus text format on its own port, read over real loopback HTTP while a
2025-11-25 session, a subscription and requests of every outcome come and go.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the telemetry tests need the [otel] extra")
pytest.importorskip("prometheus_client", reason="the metrics endpoint needs the [otel] extra")

from opentelemetry import trace  # noqa: E402

from wiremcp import Client  # noqa: E402
from wiremcp.client import RemoteError  # noqa: E402

from test_otel import providers  # noqa: E402,F401 - this process's SDK providers (a module fixture)

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SERVER = str(HERE / "traced_server.py")
CLEAN = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "WIREMCP_"))}


@pytest.fixture(autouse=True)
def _providers(providers: None) -> None:
    """The SDK's providers, so the client's spans (and the trace id the log lines carry) are real."""


def test_json_log_lines_over_stdio() -> None:
    stderr = bytearray()

    async def main() -> str:
        client = Client.stdio(
            sys.executable, ["-m", "wiremcp", "run", SERVER, "--log-format", "json", "--log-level", "INFO"],
            env={**CLEAN, "WIREMCP_OTEL": "1"}, on_stderr=stderr.extend, telemetry=True, era="modern",
        )
        async with client:
            with trace.get_tracer("tests").start_as_current_span("agent turn") as turn:
                await client.call_tool("echo", {"text": "hi"})
                await client.call_tool("broken")
                with pytest.raises(RemoteError):
                    await client.request("no/such/method")
        return format(turn.get_span_context().trace_id, "032x")

    trace_id = asyncio.run(main())
    deadline = time.monotonic() + 10
    while b"no/such/method" not in stderr and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [orjson.loads(line) for line in bytes(stderr).splitlines() if line.strip()]
    # every line is JSON with the same four leading fields
    assert lines and all(list(line)[:4] == ["time", "level", "logger", "message"] for line in lines)
    for line in lines:  # ISO 8601, UTC, milliseconds
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", line["time"])
        assert abs(datetime.fromisoformat(line["time"]).timestamp() - time.time()) < 300
    assert any(line["logger"] == "wiremcp.cli" and "serving 'traced'" in line["message"] for line in lines)
    served = [line for line in lines if line["logger"] == "wiremcp.requests"]
    by_method = {(line["method"], line.get("target")): line for line in served}
    echo = by_method[("tools/call", "echo")]
    assert echo["outcome"] == "ok" and echo["level"] == "INFO" and echo["message"] == "tools/call ok"
    assert type(echo["id"]) is int and echo["duration_ms"] >= 0
    assert echo["trace_id"] == trace_id and len(echo["span_id"]) == 16
    assert by_method[("tools/call", "broken")]["outcome"] == "tool_error"
    missing = by_method[("no/such/method", None)]
    assert missing["outcome"] == "error" and missing["code"] == -32601 and "no/such/method" in missing["error"]
    assert missing["message"] == "no/such/method error"
    assert {line["id"] for line in served} == {line["id"] for line in served if type(line["id"]) is int}


class MetricsServer:
    """``wiremcp run traced_server.py --http --port 0 --metrics 0``: the MCP URL and the metrics URL once up."""

    def __init__(self) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-metrics-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "run", SERVER, "--http", "--port", "0", "--metrics", "0", "--log-level", "INFO"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT, env=CLEAN,
        )
        deadline = time.monotonic() + 30
        while True:
            text = self.log_path.read_text(errors="replace")
            mcp = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", text)
            metrics = re.search(r"metrics at (http://127\.0\.0\.1:\d+/metrics)", text)
            if mcp and metrics:
                self.url, self.metrics_url = mcp.group(1), metrics.group(1)
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"the server did not start:\n{text}")
            time.sleep(0.05)

    def scrape(self) -> dict[str, float]:
        with urllib.request.urlopen(self.metrics_url, timeout=10) as reply:
            assert reply.headers["Content-Type"].startswith("text/plain")
            text = reply.read().decode()
        samples: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        return samples

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


def test_prometheus_metrics_over_http() -> None:
    pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")
    server = MetricsServer()
    try:
        before = server.scrape()
        assert before["wiremcp_requests_in_flight"] == 0 and before["wiremcp_sessions_open"] == 0

        async def main() -> tuple[dict[str, float], dict[str, float]]:
            async with Client.http(server.url, era="legacy") as legacy, Client.http(server.url, era="modern") as modern:
                await legacy.call_tool("echo", {"text": "a"})
                await modern.call_tool("echo", {"text": "b"})
                await modern.call_tool("broken")
                with pytest.raises(RemoteError):
                    await modern.request("no/such/method")
                async with modern.listen(tools=True):
                    during = await asyncio.to_thread(server.scrape)
            await asyncio.sleep(0.2)  # the DELETE of the legacy session has been answered; let the count settle
            return during, await asyncio.to_thread(server.scrape)

        during, after = asyncio.run(main())
    finally:
        server.stop()
    calls = 'wiremcp_requests_total{method="tools/call",outcome="ok"}'
    assert during[calls] == 2
    assert during['wiremcp_requests_total{method="tools/call",outcome="tool_error"}'] == 1
    assert during['wiremcp_requests_total{method="other",outcome="error"}'] == 1  # a made-up method is "other"
    assert during['wiremcp_request_duration_seconds_count{method="tools/call"}'] == 3
    assert during['wiremcp_request_duration_seconds_bucket{le="0.01",method="tools/call"}'] <= 3
    assert during["wiremcp_sessions_open"] == 1
    assert during["wiremcp_subscriptions_open"] == 1
    assert during["wiremcp_requests_in_flight"] == 1  # the subscriptions/listen stream
    assert after["wiremcp_sessions_open"] == 0 and after["wiremcp_subscriptions_open"] == 0
    assert after["wiremcp_requests_in_flight"] == 0
    # leaving `listen` closes the stream (HTTP): the server's call is cancelled
    assert after['wiremcp_requests_total{method="subscriptions/listen",outcome="cancelled"}'] == 1


def test_metrics_count_one_process_so_not_with_workers() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", "examples/echo.py", "--http", "--workers", "2", "--metrics", "0"],
        capture_output=True, text=True, cwd=ROOT, env=CLEAN, timeout=60,
    )
    assert done.returncode == 2
    assert "--metrics serves one process's counts; it does not combine with --workers" in done.stderr
