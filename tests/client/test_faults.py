"""Faults the client must report clearly, against real processes and real loopback HTTP.

Spec: basic/transports/streamable-http.mdx and stdio.mdx (Backward
Compatibility; stdio.mdx Unexpected Termination), basic/versioning.mdx,
2025-11-25 basic/transports.mdx (Resumability and Redelivery),
basic/patterns/cancellation.mdx.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import subprocess
import sys
import time
from typing import Any, Callable, Iterator

import orjson
import pytest

from _helpers import TESTS, Wire, run
from wiremcp.client import Client, ClientError, ConnectionClosed, NotSent, RequestTimeout
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SCRIPTED_HTTP = str(TESTS / "servers" / "scripted_http.py")
STRAY = str(TESTS / "servers" / "stray_replies.py")
JOURNAL = str(TESTS / "servers" / "journal.py")


def start_announcing(args: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """Start a server process and read the URL it announces on stderr."""
    proc = subprocess.Popen(
        args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env=None if env is None else {**os.environ, **env},
    )
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


# -- an HTTP server restarted under load ------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_listening(port: int) -> None:
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.01)
    raise AssertionError(f"nothing listens on port {port}")


def test_an_http_server_restarted_under_load(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The server is killed with calls in flight and started again on the same port.

    Calls in flight fail with a clear ConnectionClosed, and are not sent again (each may have run:
    the journal shows each once); a call made while nothing listens was never sent (NotSent), so it
    is tried exactly once more, then reported; after the restart the same client works again.
    """
    caplog.set_level(logging.WARNING, logger="wiremcp.client")
    journal = tmp_path / "journal"
    journal.write_text("")
    port = _free_port()
    env = {"WIREMCP_TEST_JOURNAL": str(journal)}
    args = [sys.executable, "-m", "wiremcp", "run", JOURNAL, "--http", "--port", str(port)]
    procs = [start_announcing(args, env)[0]]
    _wait_listening(port)
    url = f"http://127.0.0.1:{port}/mcp"

    async def main() -> list[Any]:
        async with Client.http(url, connect_retry_delay=0.05) as c:
            busy = [asyncio.ensure_future(c.call_tool("work", {"label": f"busy-{i}", "seconds": 60})) for i in range(8)]
            while journal.read_text().count("\n") < 8:  # every call has started on the server
                await asyncio.sleep(0.02)
            procs[0].kill()
            await asyncio.to_thread(procs[0].wait)
            failures = await asyncio.gather(*busy, return_exceptions=True)

            with pytest.raises(NotSent, match=r"tried twice, 0.05 s apart"):
                await c.call_tool("work", {"label": "while-down"})

            procs.append((await asyncio.to_thread(start_announcing, args, env))[0])
            await asyncio.to_thread(_wait_listening, port)  # the URL may be announced just before the bind
            assert (await c.call_tool("work", {"label": "after"})).text == "after"
            return failures

    try:
        failures = run(main())
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    for failure in failures:
        assert type(failure) is ConnectionClosed, failure
        assert str(failure).startswith(f"HTTP POST to {url} failed:")
    # Nothing that may have run was sent again; what was never sent never ran.
    assert sorted(journal.read_text().split()) == sorted([f"busy-{i}" for i in range(8)] + ["after"])
    retried = [r.getMessage() for r in caplog.records if "retrying once" in r.getMessage()]
    assert len(retried) == 1 and retried[0].startswith("tools/call was not sent (HTTP POST to")


def test_a_request_that_could_not_connect_is_sent_once_more(caplog: pytest.LogCaptureFixture) -> None:
    """A refused connect sent nothing: the client sends the request once more after
    connect_retry_delay, and the server, listening by then, gets it exactly once."""
    caplog.set_level(logging.WARNING, logger="wiremcp.client")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, not listening: a connect is refused
    port = sock.getsockname()[1]
    posts: list[Any] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))  # type: ignore[union-attr]  # a POST has one
        msg = orjson.loads(await reader.readexactly(length))
        posts.append(msg)
        text = msg["params"]["arguments"]["text"]
        body = orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": text}]}})
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    async def main() -> str:
        loop = asyncio.get_running_loop()
        servers: list[asyncio.Task[asyncio.Server]] = []

        class ListenOnRetry(logging.Handler):
            """Start listening the moment the client says it will retry (before the retry is due)."""

            def emit(self, record: logging.LogRecord) -> None:
                if "retrying once" in record.getMessage() and not servers:
                    servers.append(loop.create_task(asyncio.start_server(answer, sock=sock)))

        handler = ListenOnRetry()
        logging.getLogger("wiremcp.client").addHandler(handler)
        try:
            async with Client.http(f"http://127.0.0.1:{port}/mcp", era="modern", connect_retry_delay=0.05) as c:
                return (await c.call_tool("echo", {"text": "hi"})).text
        finally:
            logging.getLogger("wiremcp.client").removeHandler(handler)
            for task in servers:
                (await task).close()

    try:
        assert run(main()) == "hi"
    finally:
        sock.close()
    assert len(posts) == 1 and posts[0]["method"] == "tools/call"
    assert [r.getMessage().split(" (")[0] for r in caplog.records if "retrying once" in r.getMessage()] == ["tools/call was not sent"]


# -- a stdio server that crashes mid-request ------------------------------------------------

CRASHING = str(TESTS / "servers" / "crashing.py")


def test_a_crashed_stdio_server_fails_every_pending_call_and_can_be_restarted() -> None:
    """stdio.mdx, Unexpected Termination: every request in flight fails with ConnectionClosed (none
    hangs, none is answered by another); restart() starts a new server process on the same client."""

    async def main() -> tuple[list[Any], int, int]:
        async with Client.stdio(sys.executable, [CRASHING]) as c:
            first_pid = int((await c.call_tool("pid")).text)
            held = [asyncio.ensure_future(c.call_tool("hold", {"n": i})) for i in range(3)]
            crash = asyncio.ensure_future(c.call_tool("crash"))
            failures = list(await asyncio.gather(*held, crash, return_exceptions=True))
            assert c.in_flight == 0
            with pytest.raises(ConnectionClosed):
                await c.call_tool("pid")
            await c.restart()
            assert c.era is Era.MODERN and c.in_flight == 0
            second_pid = int((await c.call_tool("pid")).text)
            # Closing then connecting again does the same.
            await c.aclose()
            await c.connect()
            assert int((await c.call_tool("pid")).text) not in (first_pid, second_pid)
            return failures, first_pid, second_pid

    failures, first_pid, second_pid = run(main())
    assert second_pid != first_pid
    assert len(failures) == 4
    for failure in failures:
        assert type(failure) is ConnectionClosed, failure
        assert str(failure).startswith("the server closed its stdout")


def test_a_client_without_a_transport_factory_says_why_it_cannot_restart() -> None:
    async def main() -> None:
        from wiremcp.transports.stdio.client import StdioTransport

        c = Client(StdioTransport(sys.executable, [CRASHING]))
        await c.connect()
        await c.aclose()
        with pytest.raises(ClientError, match="no transport_factory"):
            await c.connect()

    run(main())
