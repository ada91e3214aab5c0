"""Lifespan, shutdown, middleware, ctx.headers and mounting, over real transports.

Issue 16, items 5 and 6 and the composition half of 8: ``Server(lifespan=...)``
runs once per process on stdio, on ``wiremcp run --http`` and in a Starlette
host that mounts `MCPApp`; shutdown ends ``subscriptions/listen`` streams
(basic/patterns/subscriptions.mdx, Graceful Closure) and drains requests
within the grace period; middleware runs around every request in both eras
and its errors are proper JSON-RPC errors; a mounted server's entries are
served under its namespace (server/tools.mdx, "Tool Names").
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, MutableMapping

import pytest

from conftest import SERVERS, StdioPeer, call, request, wiremcp_cmd
from wiremcp import Server
from wiremcp.jsonrpc import JSONRPCError, Request
from wiremcp.server import Context, Invocation, Next
from wiremcp.testing import connect

SERVER_FILE = str(SERVERS / "lifecycle.py")


def _marks(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# -- lifespan: stdio -------------------------------------------------------------


@pytest.mark.slow
def test_stdio_runs_the_lifespan_once_and_handlers_see_its_value(tmp_path: Path) -> None:
    log = tmp_path / "marks"
    peer = StdioPeer(wiremcp_cmd("run", SERVER_FILE), env={"LIFECYCLE_LOG": str(log)})
    try:
        reply = peer.ask(call(1, "state"))
        assert reply["result"]["structuredContent"]["db"] == "connected"
        assert reply["result"]["structuredContent"]["pid"] == peer.proc.pid
        assert peer.ask(call(2, "headers"))["result"]["structuredContent"] == {"headers": None}
        # A listen stream open at end of input does not hold the process.
        peer.send(request("sub", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        assert peer.recv()["method"] == "notifications/subscriptions/acknowledged"
        code, _, err = peer.finish()
        assert code == 0, err
        # The mounted server's lifespan runs inside the parent's.
        assert _marks(log) == ["weather enter", "enter", "exit", "weather exit"]
    finally:
        peer.kill()


@pytest.mark.slow
def test_stdio_end_of_input_cancels_requests_past_the_grace_period(tmp_path: Path) -> None:
    log = tmp_path / "marks"
    peer = StdioPeer(wiremcp_cmd("run", SERVER_FILE), env={"LIFECYCLE_LOG": str(log)})
    try:
        peer.send(call("quick", "slow", {"seconds": 0.2}))
        peer.send(call("long", "slow", {"seconds": 30}))
        time.sleep(0.1)
        started = time.monotonic()
        code, rest, err = peer.finish()
        took = time.monotonic() - started
        assert code == 0, err
        assert b'"id":"quick"' in rest  # finished within the grace period: replied
        assert b'"id":"long"' not in rest  # cancelled after shutdown_grace (1 s): no reply
        assert took < 10
        assert "cancelled" in err
        assert _marks(log)[-2:] == ["exit", "weather exit"]
    finally:
        peer.kill()


# -- lifespan and shutdown: HTTP ---------------------------------------------------

uvicorn = pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from test_http import ServerProcess, _raw_request, _read_until, post, sse_events, _dechunk  # noqa: E402


def _listen_then_terminate(proc: ServerProcess, path: str = "/mcp") -> list[Any]:
    """Open a listen stream, SIGTERM the server, return the stream's events; the process must exit."""
    msg = request("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    sock = _raw_request(proc.port, msg)
    try:
        data = _read_until(sock, b"notifications/subscriptions/acknowledged")
        proc.proc.terminate()
        sock.settimeout(10)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    # uvicorn re-raises the signal it caught once it has shut down: killed by SIGTERM, after a clean shutdown.
    assert proc.proc.wait(10) in (0, -15), proc.log()
    events, _ = sse_events(_dechunk(data.partition(b"\r\n\r\n")[2]))
    return events


@pytest.mark.slow
def test_http_cli_runs_the_lifespan_and_shuts_down_with_a_listen_stream_open(tmp_path: Path) -> None:
    log = tmp_path / "marks"
    os.environ["LIFECYCLE_LOG"] = str(log)
    try:
        proc = ServerProcess(
            wiremcp_cmd("run", SERVER_FILE, "--http", "--port", "0"),
            r"serving 'lifecycle' .* at http://127\.0\.0\.1:(\d+)/mcp",
        )
    finally:
        del os.environ["LIFECYCLE_LOG"]
    try:
        reply = post(proc.port, call(1, "state"))
        assert reply.json["result"]["structuredContent"]["pid"] == proc.proc.pid
        seen = post(proc.port, call(2, "headers"), {"X-Test": "yes"}).json["result"]["structuredContent"]
        assert seen == {"headers": {"x-test": "yes", "has_accept": True, "authorization": None}}
        # A middleware's JSON-RPC error is the reply, with its code and data (any other code: 200).
        refused = post(proc.port, call(3, "blocked"))
        assert refused.status == 200
        assert refused.json["error"] == {"code": -32001, "message": "Forbidden by policy", "data": {"tool": "blocked"}}
        events = _listen_then_terminate(proc)
        assert events[-1]["id"] == "sub-1" and events[-1]["result"]["resultType"] == "complete"
        assert _marks(log) == ["weather enter", "enter", "exit", "weather exit"]
    finally:
        proc.stop()


@pytest.mark.slow
def test_a_starlette_host_runs_the_lifespan_and_a_listen_stream_does_not_block_its_shutdown(tmp_path: Path) -> None:
    """Without the signal hook uvicorn waits for the open stream before it runs the lifespan shutdown."""
    pytest.importorskip("starlette")
    log = tmp_path / "marks"
    os.environ["LIFECYCLE_LOG"] = str(log)
    try:
        proc = ServerProcess(
            [sys.executable, "-m", "uvicorn", "starlette_host:app", "--app-dir", str(SERVERS),
             "--host", "127.0.0.1", "--port", "0", "--no-access-log"],
            r"Uvicorn running on http://127\.0\.0\.1:(\d+)",
        )
    finally:
        del os.environ["LIFECYCLE_LOG"]
    try:
        assert _marks(log) == ["weather enter", "enter"]
        assert post(proc.port, call(1, "state")).json["result"]["structuredContent"]["db"] == "connected"
        started = time.monotonic()
        events = _listen_then_terminate(proc)
        assert time.monotonic() - started < 8
        assert events[-1]["id"] == "sub-1" and events[-1]["result"]["resultType"] == "complete"
        assert _marks(log) == ["weather enter", "enter", "exit", "weather exit"]
    finally:
        proc.stop()


def test_mcpapp_lifespan_events_enter_once_and_a_failing_lifespan_reports_startup_failed() -> None:
    from wiremcp.transports.http import MCPApp

    entered: list[str] = []

    @asynccontextmanager
    async def ok(server: Server) -> AsyncIterator[int]:
        entered.append("in")
        yield 7
        entered.append("out")

    @asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise RuntimeError("database unreachable")
        yield

    async def drive(app: MCPApp, events: list[str]) -> list[MutableMapping[str, Any]]:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for e in events:
            inbox.put_nowait({"type": e})
        sent: list[MutableMapping[str, Any]] = []

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app({"type": "lifespan"}, inbox.get, send)
        return sent

    async def main() -> None:
        server = Server("ok", lifespan=ok)
        app = MCPApp(server)
        async with app.lifespan(None):  # a host running it too: still entered once
            assert server.lifespan.value == 7
            sent = await drive(app, ["lifespan.startup", "lifespan.shutdown"])
            assert [m["type"] for m in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
            assert entered == ["in"]
        assert entered == ["in", "out"]
        with pytest.raises(RuntimeError, match="not running"):
            server.lifespan.value
        failing = MCPApp(Server("broken", lifespan=broken))
        sent = await drive(failing, ["lifespan.startup"])
        assert sent == [{"type": "lifespan.startup.failed", "message": "RuntimeError: database unreachable"}]

    asyncio.run(main())


# -- middleware -------------------------------------------------------------------


def _server_with_middleware(order: list[str]) -> Server:
    server = Server("mw")

    @server.middleware
    async def outer(call: Invocation, call_next: Next) -> dict[str, Any]:
        order.append(f"outer {call.method} legacy={call.legacy}")
        result = await call_next(call)
        order.append("outer done")
        return result

    @server.middleware
    async def cache(call: Invocation, call_next: Next) -> dict[str, Any]:
        if call.method == "tools/call" and call.params.get("name") == "cached":
            return {"resultType": "complete", "content": [{"type": "text", "text": "from cache"}]}
        if call.method == "tools/call" and call.params.get("name") == "limited":
            raise JSONRPCError("Rate limited: retry in 1 s", {"retryAfter": 1}, code=-32029)
        if call.method == "tools/call" and call.params.get("name") == "renamed":
            call.params = {**call.params, "name": "echo"}
        order.append(f"cache sees ctx.method={call.context.method}")
        return await call_next(call)

    @server.tool
    def echo(text: str = "hi") -> str:
        return text

    @server.tool
    def cached() -> str:
        return "computed"

    @server.tool
    def limited() -> str:
        return "never"

    @server.tool
    def renamed() -> str:
        return "never"

    return server


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_middleware_runs_in_order_and_short_circuits_in_both_eras(era: Any) -> None:
    order: list[str] = []
    server = _server_with_middleware(order)

    async def main() -> None:
        async with connect(server, era=era) as mcp:
            assert (await mcp.call_tool("echo", {"text": "x"})).text == "x"
            assert (await mcp.call_tool("cached")).text == "from cache"
            assert (await mcp.call_tool("renamed", {"text": "swapped"})).text == "swapped"
            with pytest.raises(Exception) as failure:
                await mcp.call_tool("limited")
            assert getattr(failure.value, "code", None) == -32029
            assert getattr(failure.value, "data", None) == {"retryAfter": 1}

    asyncio.run(main())
    legacy = era == "legacy"
    assert order[:3] == [f"outer tools/call legacy={legacy}", "cache sees ctx.method=tools/call", "outer done"]
    assert order.count("outer done") == 3  # the rate-limited call raised through `outer`


def test_middleware_is_fixed_when_serving_starts_and_adding_one_later_raises() -> None:
    """The chain is built once (Server.freeze); a late middleware raised nothing and never ran before."""
    server = Server("plain")
    seen: list[str] = []

    @server.tool
    def echo(text: str) -> str:
        return text

    async def passthrough(call: Invocation, call_next: Next) -> dict[str, Any]:
        seen.append(call.method)
        return await call_next(call)

    async def late(call: Invocation, call_next: Next) -> dict[str, Any]:
        seen.append("late")
        return await call_next(call)

    server.add_middleware(passthrough)

    async def main() -> None:
        async with connect(server) as mcp:
            with pytest.raises(RuntimeError, match=r"add_middleware\(.*register middleware and observers before serving"):
                server.add_middleware(late)
            assert (await mcp.call_tool("echo", {"text": "x"})).text == "x"

    asyncio.run(main())
    assert seen == ["tools/call"] and server.middlewares == (passthrough,)
    # nothing is replaced on the server: its methods are the class's
    assert not {"handle", "handle_in_session", "open_session"} & set(vars(server))


def test_middleware_returning_a_non_dict_is_an_internal_error() -> None:
    server = Server("bad")

    async def broken(call: Invocation, call_next: Next) -> Any:
        return "oops"

    server.add_middleware(broken)
    from conftest import META

    pending = server.handle(Request(1, "tools/list", {"_meta": META}))
    with pytest.raises(TypeError, match="returned str, not a result dict"):
        asyncio.run(pending)  # type: ignore[arg-type]


# -- mount ---------------------------------------------------------------------------


def test_mount_serves_the_child_under_its_namespace_and_follows_its_changes() -> None:
    parent = Server("parent")
    child = Server("child")

    @parent.tool
    def own() -> str:
        return "parent"

    @child.tool
    def greet(name: str) -> str:
        return f"hello {name}"

    @child.resource("child://readme")
    def readme() -> str:
        return "read me"

    @child.prompt
    def review(code: str) -> str:
        return f"Review {code}"

    @child.complete(prompt="review", argument="code", inline=True)
    def code_values(value: str) -> list[str]:
        return [x for x in ("python", "rust") if x.startswith(value)]

    events: list[Any] = []
    parent.bus.subscribe(events.append)
    parent.mount(child, namespace="kid")

    async def main() -> None:
        async with connect(parent) as mcp:
            names = [t["name"] for t in (await mcp.list_tools())]
            assert names == ["own", "kid_greet"]
            assert (await mcp.call_tool("kid_greet", {"name": "Ada"})).text == "hello Ada"
            read = await mcp.read_resource("child://readme")
            assert read.contents[0]["text"] == "read me"
            prompts = [p["name"] for p in (await mcp.list_prompts())]
            assert prompts == ["kid_review"]
            completed = await mcp.complete({"type": "ref/prompt", "name": "kid_review"}, "code", "py")
            assert completed.values == ["python"]

    asyncio.run(main())
    assert ("tools", None) in events and ("resources", None) in events and ("prompts", None) in events
    events.clear()

    @child.tool
    def later() -> str:
        return "added"

    assert events == [("tools", None)]  # the parent's listeners hear of the child's change
    assert "kid_later" in parent.tools
    child.notify_resource_updated("child://readme")
    assert events[-1] == ("updated", "child://readme")
    child.remove_tool("greet")
    assert "kid_greet" not in parent.tools
    parent.unmount("kid")
    assert list(parent.tools) == ["own"]
    assert not parent.resources


def test_mount_refuses_bad_namespaces_and_clashes() -> None:
    parent = Server("parent")
    child = Server("child")
    with pytest.raises(ValueError, match="namespace"):
        parent.mount(child, namespace="has space")
    with pytest.raises(ValueError, match="namespace"):
        parent.mount(child, namespace="a/b")
    with pytest.raises(TypeError, match="wiremcp.proxy"):
        parent.mount("http://example", namespace="x")  # type: ignore[arg-type]
    parent.mount(child, namespace="x")
    with pytest.raises(ValueError, match="already mounted"):
        parent.mount(child, namespace="y")


@pytest.mark.slow
def test_the_fastmcp_style_example_has_a_lifespan(tmp_path: Path) -> None:
    peer = StdioPeer(wiremcp_cmd("run", "examples/fastmcp_style.py"), env={"NOTES_DB": str(tmp_path / "notes.db")})
    try:
        reply = peer.ask(call(1, "uptime"))
        assert reply["result"]["content"][0]["text"].startswith("up for ")
        assert str(tmp_path / "notes.db") in reply["result"]["content"][0]["text"]
        code, _, err = peer.finish()
        assert code == 0, err
    finally:
        peer.kill()
