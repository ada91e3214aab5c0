"""Faults the client must report clearly, against real processes and real loopback HTTP.

Spec: basic/transports/streamable-http.mdx and stdio.mdx (Backward
Compatibility; stdio.mdx Unexpected Termination), basic/versioning.mdx,
2025-11-25 basic/transports.mdx (Resumability and Redelivery),
basic/patterns/cancellation.mdx.
"""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import sys
from typing import Any, Callable, Iterator

import orjson
import pytest

from _helpers import TESTS, Wire, run
from wiremcp.client import Client, RequestTimeout
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SCRIPTED_HTTP = str(TESTS / "servers" / "scripted_http.py")
STRAY = str(TESTS / "servers" / "stray_replies.py")


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


# -- replies the client never asked for (stdio) -------------------------------------------


def test_stray_duplicate_and_late_replies_are_logged_and_never_settle_another_call(caplog: pytest.LogCaptureFixture) -> None:
    """basic/index.mdx, Responses: a reply carries the id of the request it answers. A reply to an id
    this client never sent (result or error), a second reply to a finished request, and a reply to a
    request that timed out are each dropped with a warning naming the id; calls in flight meanwhile
    get their own replies, and nothing else."""
    caplog.set_level(logging.WARNING, logger="wiremcp.client")
    wire = Wire()

    def id_of(name: str) -> Any:
        return next(m["id"] for m in wire.sent if m.get("method") == "tools/call" and m["params"]["name"] == name)

    async def main() -> dict[str, Any]:
        async with Client.stdio(sys.executable, [STRAY], on_wire=wire) as c:
            held_a = asyncio.ensure_future(c.call_tool("hold", {"label": "a"}))
            # Ids this client never sends (it numbers requests from 1 and sends about ten): ints and a string.
            ids = [1000, 987654, "never-sent"]
            assert (await c.call_tool("stray", {"ids": ids})).text == "after stray"
            assert not held_a.done()

            assert (await c.call_tool("twice")).text == "first"
            # The server wrote "second" before answering release: by now the client has read it.
            assert (await c.call_tool("release", {"label": "a", "text": "A"})).text == "released"
            assert (await held_a).text == "A"

            held_c = asyncio.ensure_future(c.call_tool("hold", {"label": "c"}))
            with pytest.raises(RequestTimeout):
                await c.call_tool("late", timeout=0.2)
            # The late reply comes right after the server reads the cancellation, before this reply.
            assert (await c.call_tool("release", {"label": "c", "text": "C"})).text == "released"
            assert (await held_c).text == "C"
            assert c.in_flight == 0
            return {"stray": ids, "twice": id_of("twice"), "late": id_of("late")}

    ids = run(main())
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and r.name == "wiremcp.client"]
    for stray in ids["stray"]:
        assert f"ignored a reply for id {stray!r}, which is not in flight" in warnings
        assert f"the server reported an error for no request in flight (id {stray!r}): stray error" in warnings
    assert f"ignored a reply for id {ids['twice']!r}, which is not in flight" in warnings
    assert any(m.startswith(f"dropped the reply to request {ids['late']!r}: it came after") for m in warnings)
    # Each reply the server sent was received exactly once, and the late one did reach the client.
    late = [m for m in wire.received if m.get("id") == ids["late"]]
    assert [m["result"]["content"][0]["text"] for m in late] == ["late"]


# -- a legacy (2025-11-25) SSE stream that drops --------------------------------------------


@pytest.mark.parametrize("mode", ["legacy-sse-drop", "legacy-sse-reset"])
def test_a_dropped_legacy_sse_stream_resumes_with_last_event_id(scripted_http: Callable[[str], str], mode: str) -> None:
    """2025-11-25 basic/transports.mdx, Resumability and Redelivery: after the stream for a request
    ends early (closed by the server, or the connection cut mid-body), the client waits the server's
    ``retry`` delay, GETs with ``Last-Event-ID`` set to the last event id it saw, and gets the
    response replayed there."""
    url = scripted_http(mode)
    progress: list[Any] = []

    async def main() -> tuple[str, Any]:
        async with Client.http(url) as c:
            assert c.era is Era.LEGACY
            result = await c.call_tool("work", {}, on_progress=lambda p, total, message: progress.append(p))
            seen = orjson.loads((await c.call_tool("resumes")).text)
            return result.text, seen

    text, seen = run(main())
    assert text == "resumed work"
    assert seen == ["ev-1"]  # one resumption, from the last event id the client saw
    assert progress == [1]  # the event before the drop was delivered once
