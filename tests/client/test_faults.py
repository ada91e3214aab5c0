"""Faults the client must report clearly, against real processes and real loopback HTTP.

Spec: basic/transports/streamable-http.mdx and stdio.mdx (Backward
Compatibility; stdio.mdx Unexpected Termination), basic/versioning.mdx,
2025-11-25 basic/transports.mdx (Resumability and Redelivery),
basic/patterns/cancellation.mdx.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any, Callable, Iterator

import orjson
import pytest

from _helpers import TESTS, run
from wiremcp.client import Client, RequestTimeout
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SCRIPTED_HTTP = str(TESTS / "servers" / "scripted_http.py")


def start_announcing(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    """Start a server process and read the URL it announces on stderr."""
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(r"(http://\S+)", line)
        if found:
            return proc, found.group(1)
    proc.kill()
    raise AssertionError("the server did not announce its URL")


@pytest.fixture
def scripted_http() -> Iterator[Callable[[str], str]]:
    procs: list[subprocess.Popen[str]] = []

    def start(mode: str) -> str:
        proc, url = start_announcing([sys.executable, SCRIPTED_HTTP, mode])
        procs.append(proc)
        return url

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


# -- the era probe over HTTP ----------------------------------------------------------


def test_a_slow_http_server_is_a_timeout_not_a_legacy_server(scripted_http: Callable[[str], str]) -> None:
    """streamable-http.mdx, Backward Compatibility: only a 4xx without a recognized modern error body
    means legacy. A server/discover that gets no reply within probe_timeout is a RequestTimeout naming
    the probe; the client does not run initialize (which this server would accept) and remembers nothing."""
    url = scripted_http("slow-discover")
    sent: list[Any] = []

    async def main() -> Client:
        client = Client.http(url, probe_timeout=0.5, on_wire=lambda d, b: sent.append(orjson.loads(b)) if d == "send" else None)
        with pytest.raises(RequestTimeout, match=r"era probe \(server/discover\) within 0.5 s") as info:
            await client.connect()
        assert "a slow server is reported, not taken for a legacy one" in str(info.value)
        return client

    client = run(main())
    assert [m.get("method") for m in sent] == ["server/discover"]
    assert client.era is not Era.LEGACY and len(client.eras) == 0
