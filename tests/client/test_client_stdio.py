"""Our Client against a real `wiremcp run` subprocess over stdio.

Spec: basic/transports/stdio.mdx (framing, cancellation, shutdown, stderr),
basic/index.mdx (Requests, _meta, ResultType), basic/patterns/cancellation.mdx,
basic/patterns/progress.mdx, server/utilities/logging.mdx, server/tools.mdx,
server/utilities/caching.mdx.
"""

from __future__ import annotations

from pathlib import Path

from typing import Any

import asyncio
import signal
import sys

import orjson
import pytest

from _helpers import Wire, run, sample_cmd
from wiremcp.client import Client, ConnectionClosed, RemoteError, RequestTimeout, ToolCallError
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow


def client(**options: Any) -> Any:
    command, args = sample_cmd()
    return Client.stdio(command, args, **options)


def test_connect_probes_and_reports_the_server() -> None:
    """stdio.mdx, Backward Compatibility: the discover probe finds a modern server; server/discover.mdx fields."""

    async def main() -> None:
        async with client() as c:
            assert c.era is Era.MODERN
            assert c.protocol_version == "2026-07-28"
            assert c.server_info == {"name": "sample", "version": "9.9.9"}
            assert "tools" in c.server_capabilities
            d = await c.discover()
            assert "2026-07-28" in d.supported_versions

    run(main())


def test_every_request_carries_meta() -> None:
    """basic/index.mdx, _meta: protocolVersion, clientCapabilities, clientInfo on every request."""

    async def main() -> None:
        async with client(name="tester", version="7", elicitation=lambda p: {"action": "decline"}) as c:
            seen = orjson.loads((await c.call_tool("whoami")).text)
            assert seen["protocolVersion"] == "2026-07-28"
            assert seen["clientInfo"] == {"name": "tester", "version": "7"}
            assert seen["clientCapabilities"] == {"elicitation": {"form": {}}}
            traced = orjson.loads((await c.call_tool("whoami", meta={"traceparent": "00-" + "a" * 32 + "-" + "b" * 16 + "-01"})).text)
            assert traced["trace"]["traceparent"].startswith("00-aaaa")

    run(main())


def test_tools_and_results() -> None:
    """server/tools.mdx: list, call; a tool execution error is a result (isError), not an exception."""

    async def main() -> None:
        async with client() as c:
            names = [t["name"] for t in await c.list_tools()]
            assert names[:3] == ["echo", "add", "slow"]
            assert [t["name"] async for t in c.iter_tools()] == names
            assert (await c.call_tool("add", {"a": 2, "b": 40})).text == "42"
            failed = await c.call_tool("fail", {"message": "nope"})
            assert failed.is_error and failed.text == "nope"
            with pytest.raises(ToolCallError, match="nope"):
                failed.raise_for_error()
            with pytest.raises(RemoteError) as info:
                await c.call_tool("no-such-tool")
            assert info.value.code == -32602 and info.value.method == "tools/call"

    run(main())


def test_many_in_flight_out_of_order() -> None:
    """basic/index.mdx, Requests: concurrent requests on one stream, replies matched by id in any order."""

    async def main() -> None:
        async with client() as c:
            delays = [0.3, 0.2, 0.1, 0.0]
            results = await asyncio.gather(
                *[c.call_tool("slow", {"seconds": d, "label": f"r{i}"}) for i, d in enumerate(delays)],
                *[c.call_tool("echo", {"text": f"e{i}"}) for i in range(20)],
            )
            assert [r.text for r in results[:4]] == ["r0", "r1", "r2", "r3"]
            assert [r.text for r in results[4:]] == [f"e{i}" for i in range(20)]
            assert c.in_flight == 0

    run(main())


def test_timeout_cancels_on_the_wire() -> None:
    """cancellation.mdx, Timeouts; stdio.mdx, Cancellation: a timed-out request is cancelled with notifications/cancelled."""
    sent = []

    async def main() -> None:
        async with client(on_wire=lambda d, b: sent.append((d, orjson.loads(b)))) as c:
            with pytest.raises(RequestTimeout):
                # 2 s, less than the server's shutdown_grace (5 s): were the work not stopped, closing
                # stdin would let it finish, and its reply would be read before the server exits.
                await c.call_tool("slow", {"seconds": 2}, timeout=0.2)
            # The connection is still good, and the server stopped the cancelled work.
            assert (await c.call_tool("echo", {"text": "after"})).text == "after"
            assert c.in_flight == 0

    run(main())
    cancels = [m for d, m in sent if d == "send" and m.get("method") == "notifications/cancelled"]
    call_id = next(m["id"] for d, m in sent if d == "send" and m.get("params", {}).get("name") == "slow")
    assert cancels and cancels[0]["params"]["requestId"] == call_id
    # No reply for the cancelled request ever came (stdio.mdx: MUST NOT send further messages for it).
    assert not [m for d, m in sent if d == "recv" and m.get("id") == call_id]


def test_task_cancellation_cancels_on_the_wire() -> None:
    """cancellation.mdx: cancelling the awaiting task sends notifications/cancelled."""
    sent = []

    async def main() -> None:
        async with client(on_wire=lambda d, b: sent.append((d, orjson.loads(b)))) as c:
            task = asyncio.ensure_future(c.call_tool("slow", {"seconds": 30}))
            await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert (await c.call_tool("echo", {"text": "ok"})).text == "ok"

    run(main())
    assert any(m.get("method") == "notifications/cancelled" for d, m in sent if d == "send")


def test_progress_and_log_routing() -> None:
    """progress.mdx: progressToken routes notifications/progress; logging.mdx: per-request logLevel."""

    async def main() -> None:
        async with client() as c:
            progress = []
            r = await c.call_tool("steps", {"count": 3}, on_progress=lambda p, t, m: progress.append((p, t, m)))
            assert r.text == "done"
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            logs: list[Any] = []
            r = await c.call_tool("chatty", {"level": "info"}, on_log=logs.append, log_level="warning")
            assert r.text == "warning,error"
            assert [m["level"] for m in logs] == ["warning", "error"]
            # Without on_log the request does not ask for logs, and none are sent.
            assert (await c.call_tool("chatty", {"level": "info"})).text == ""

    run(main())


def test_list_results_are_cached_for_ttl() -> None:
    """caching.mdx: a fresh cached tools/list is served without a request; refresh=True re-fetches."""
    sent = []

    async def main() -> None:
        async with client(on_wire=lambda d, b: sent.append((d, b))) as c:
            first = await c.list_tools()
            second = await c.list_tools()
            assert first == second
            n = sum(1 for d, b in sent if d == "send" and b"tools/list" in b)
            assert n == 1
            await c.list_tools(refresh=True)
            assert sum(1 for d, b in sent if d == "send" and b"tools/list" in b) == 2

    run(main())


def test_stderr_is_captured() -> None:
    """stdio.mdx: the client MAY capture the server's stderr; it is not an error."""
    chunks: list[bytes] = []

    async def main() -> Any:
        async with client(on_stderr=chunks.append) as c:
            assert (await c.call_tool("shout", {"text": "hi"})).text == "HI"
            await asyncio.sleep(0.1)
            return c

    c = run(main())
    assert "stderr marker" in c.transport.stderr_text()
    assert b"".join(chunks).decode().count("stderr marker") == 1
    assert c.transport.returncode == 0  # closing stdin was enough (stdio.mdx, Shutdown)


def test_shutdown_escalates_to_signals(tmp_path: Path) -> None:
    """stdio.mdx, Shutdown: close stdin, wait, then SIGTERM, then SIGKILL."""
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stderr.write('SIGTERM ignored\\n')\n"
        "sys.stderr.flush()\n"
        "for line in sys.stdin:\n"
        "    pass\n"
        "time.sleep(60)\n"
    )

    async def main() -> Any:
        from wiremcp.transports.stdio.client import StdioTransport

        ready = asyncio.Event()

        def on_stderr(_: bytes) -> None:
            if "SIGTERM ignored" in t.stderr_text():
                ready.set()

        t = StdioTransport(sys.executable, [str(script)], exit_timeout=0.2, term_timeout=0.2, on_stderr=on_stderr)
        c = Client(t, era="modern")
        await c.connect()
        # A synchronisation point: SIGTERM sent before the script ignores it would end the script at once.
        await asyncio.wait_for(ready.wait(), 30)
        await c.aclose()
        return t

    t = run(main())
    assert t.returncode == -signal.SIGKILL  # stdin closed, SIGTERM ignored: only SIGKILL ended it


def test_server_exit_fails_requests_in_flight(tmp_path: Path) -> None:
    """stdio.mdx, Unexpected Termination: in-flight requests are lost; the error says how the server ended."""
    script = tmp_path / "dies.py"
    script.write_text("import sys\nsys.stdin.readline()\nsys.stderr.write('fatal: out of cheese\\n')\nsys.exit(3)\n")

    async def main() -> None:
        async with Client.stdio(sys.executable, [str(script)], era="modern") as c:
            with pytest.raises(ConnectionClosed, match="out of cheese"):
                await c.call_tool("echo", {"text": "x"})
            with pytest.raises(ConnectionClosed):
                await c.call_tool("echo", {"text": "x"})

    run(main())


def test_raw_lines_through_the_stdio_transport() -> None:
    """basic/index.mdx: a request without _meta gets -32602; a non-JSON line gets -32700 with id null; a notification nothing.

    Raw lines are the transport's own `write_line` (not the client's, not the
    transport contract); their replies reach the client, which drops them as
    matching no request of its own, and the connection stays good.
    """
    wire = Wire()

    async def main() -> None:
        async with client(on_wire=wire) as c:
            c.transport.write_line(b'{"jsonrpc": "2.0", "id": "raw-1", "method": "tools/call", "params": {"name": "echo"}}')
            reply = await wire.reply(lambda m: type(m) is dict and m.get("id") == "raw-1")
            assert reply["error"]["code"] == -32602 and "result" not in reply
            c.transport.write_line(b'{"jsonrpc": "2.0", "id": 5, oops}')
            reply = await wire.reply(lambda m: type(m) is dict and "id" not in m)
            assert reply["error"]["code"] == -32700
            before = len(wire.received)
            c.transport.write_line(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}')
            assert (await c.call_tool("echo", {"text": "after"})).text == "after"
            # Only the echo's reply came after the notification: a notification gets none.
            assert [m.get("id") for m in wire.received[before:]] == [wire.sent[-1]["id"]]
            assert c.in_flight == 0

    run(main())
    assert not hasattr(Client, "send_raw")


def test_bad_command() -> None:
    async def main() -> None:
        with pytest.raises(ConnectionClosed, match="cannot start"):
            async with Client.stdio("/no/such/binary-xyz"):
                pass

    run(main())


def test_timeouts_share_one_timer_and_the_earliest_wins() -> None:
    """cancellation.mdx, Timeouts: per-request timeouts; a later, shorter timeout fires first."""
    async def main() -> None:
        async with Client.stdio(*sample_cmd()) as c:
            long = asyncio.ensure_future(c.call_tool("slow", {"seconds": 0.3, "label": "long"}, timeout=30))
            await asyncio.sleep(0.05)
            with pytest.raises(RequestTimeout):
                # guard: a timer left at the 30 s deadline would fail this wait instead
                await asyncio.wait_for(c.call_tool("slow", {"seconds": 5}, timeout=0.1), 3)
            assert (await long).text == "long"
            assert (await c.call_tool("echo", {"text": "after"}, timeout=5)).text == "after"

    run(main())
