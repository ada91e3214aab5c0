"""``wiremcp dev``: the reloading stdio proxy and ``--http``, reloaded by editing a file.

Synchronisation is on dev's own lines, never on sleeps: ``wiremcp dev:
watching`` (the watcher runs) before the edit, ``restarted`` after it.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from conftest import StdioPeer, call

pytestmark = pytest.mark.slow

SERVER = '''import wiremcp

server = wiremcp.Server("devtest", version="1")


@server.tool()
def version() -> str:
    return "{answer}"
'''


class Dev(StdioPeer):
    """`wiremcp dev` as a host sees it, plus its stderr read line by line."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", "dev", *args, "--no-color"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        )
        self._buffer = b""
        self._err = b""
        self.err_lines: list[str] = []
        self._claimed: set[int] = set()

    def wait_for(self, words: str, timeout: float = 30.0) -> str:
        """The first stderr line not matched before that contains ``words`` (lines may come in any order)."""
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self._err:
                line, _, self._err = self._err.partition(b"\n")
                self.err_lines.append(line.decode(errors="replace"))
            for index, text in enumerate(self.err_lines):
                if index not in self._claimed and words in text:
                    self._claimed.add(index)
                    return text
            left = deadline - time.monotonic()
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            chunk = os.read(fd, 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"no {words!r} on stderr; saw:\n" + "\n".join(self.err_lines[-40:]))
            self._err += chunk


def edit(path: Path, answer: str) -> None:
    path.write_text(SERVER.format(answer=answer))


def test_stdio_reload_after_an_edit(tmp_path: Path) -> None:
    server = tmp_path / "srv.py"
    edit(server, "one")
    dev = Dev(["srv.py"], tmp_path)
    try:
        assert dev.ask(call(1, "version"))["result"]["content"][0]["text"] == "one"
        dev.wait_for("wiremcp dev: watching")
        edit(server, "two")
        assert "srv.py changed; restarted" in dev.wait_for("restarted")
        assert dev.ask(call(2, "version"))["result"]["content"][0]["text"] == "two"
        dev.wait_for('"text": "two"')  # every envelope is printed to stderr, the reply too
        assert any(line.startswith("→ sent") for line in dev.err_lines)
        assert any(line.startswith("← received") for line in dev.err_lines)
    finally:
        dev.close_stdin()
    assert dev.wait() == 0


def test_a_legacy_session_survives_the_reload_and_in_flight_requests_are_answered(tmp_path: Path) -> None:
    server = tmp_path / "srv.py"
    edit(server, "one")
    dev = Dev(["srv.py"], tmp_path)
    try:
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert dev.ask(init)["result"]["protocolVersion"] == "2025-11-25"
        dev.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        legacy_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "version", "arguments": {}}}
        assert dev.ask(legacy_call)["result"]["content"][0]["text"] == "one"
        dev.wait_for("wiremcp dev: watching")
        edit(server, "two")
        dev.wait_for("restarted")
        assert dev.recv()["method"] == "notifications/tools/list_changed"
        legacy_call["id"] = 2
        assert dev.ask(legacy_call)["result"]["content"][0]["text"] == "two"  # no new initialize needed
        assert not any(line.startswith("  ! ") for line in dev.err_lines)  # the tap checker found nothing wrong
    finally:
        dev.close_stdin()
    assert dev.wait() == 0


def test_a_request_in_flight_during_a_restart_gets_an_error(tmp_path: Path) -> None:
    server = tmp_path / "srv.py"
    server.write_text(
        "import asyncio\nimport wiremcp\nserver = wiremcp.Server('slow', version='1')\n\n"
        "@server.tool()\nasync def wait() -> str:\n    await asyncio.sleep(60)\n    return 'late'\n"
    )
    dev = Dev(["srv.py"], tmp_path)
    try:
        dev.wait_for("wiremcp dev: watching")
        dev.send(call(7, "wait"))
        dev.wait_for('"method": "tools/call"')  # forwarded
        server.write_text(server.read_text() + "\n# edited\n")
        reply = dev.recv()
        assert reply["id"] == 7 and reply["error"]["code"] == -32603
        assert "restarted the server while tools/call was in flight" in reply["error"]["message"]
    finally:
        dev.close_stdin()
    assert dev.wait() == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_http_reload_after_an_edit(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    server = tmp_path / "srv.py"
    edit(server, "one")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    dev = Dev(["srv.py", "--http", "--port", str(port)], tmp_path)

    def version() -> str:
        done = subprocess.run([sys.executable, "-m", "wiremcp", "call", url, "version"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    try:
        dev.wait_for(f"serving 'devtest' at {url}")
        dev.wait_for("wiremcp dev: watching")
        assert version() == "one"
        dev.wait_for('"text": "one"')  # the tee showed the reply
        edit(server, "two")
        dev.wait_for("restarted")
        dev.wait_for(f"serving 'devtest' at {url}")
        assert version() == "two"
    finally:
        dev.proc.terminate()
        dev.proc.wait(30)


def test_dev_without_watchfiles_says_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text(SERVER.format(answer="x"))
    done = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['watchfiles'] = None; from wiremcp.cli import main; sys.exit(main(['dev', 'srv.py']))"],
        capture_output=True, text=True, timeout=30, cwd=tmp_path, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2 and "pip install 'wiremcp[dev]'" in done.stderr


def test_the_tee_reports_json_and_sse_replies() -> None:
    from wiremcp.cli._dev import _Tee

    sink = _Sink()

    async def app(scope: object, receive: object, send: object) -> None:
        message = await receive()  # type: ignore[operator]
        assert message["body"] == b'{"a":1}'
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"id: 1\ndata: {\"b\":", "more_body": True})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"2}\n\n", "more_body": False})  # type: ignore[operator]

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b'{"a":1}', "more_body": False}

    async def send(message: object) -> None:
        pass

    import asyncio

    asyncio.run(_Tee(app, sink)({"type": "http"}, receive, send))  # type: ignore[arg-type]
    assert [orjson.loads(line) for line in sink.lines] == [{"dir": "c2s", "data": '{"a":1}'}, {"dir": "s2c", "data": '{"b":2}'}]


class _Sink:
    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.lines.append(data)
        return len(data)


def test_a_module_target_from_its_project_folder(tmp_path: Path) -> None:
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    edit(package / "server.py", "one")
    dev = Dev(["mypkg.server:server"], tmp_path)
    try:
        assert dev.ask(call(1, "version"))["result"]["content"][0]["text"] == "one"
        watching = dev.wait_for("wiremcp dev: watching")
        assert str(package) in watching
        edit(package / "server.py", "two")
        dev.wait_for("restarted")
        assert dev.ask(call(2, "version"))["result"]["content"][0]["text"] == "two"
    finally:
        dev.close_stdin()
    assert dev.wait() == 0


def test_on_a_terminal_dev_inspects_again_after_each_change(tmp_path: Path) -> None:
    import pty

    edit(tmp_path / "srv.py", "one")
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "dev", "srv.py", "--no-color"],
        stdin=terminal, stdout=terminal, stderr=terminal, cwd=tmp_path, close_fds=True,
    )
    os.close(terminal)
    seen = b""

    def until(words: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + 60
        while words not in seen:
            assert select.select([controller], [], [], max(deadline - time.monotonic(), 0))[0], seen.decode(errors="replace")
            seen += os.read(controller, 65536)

    try:
        until(b"wiremcp dev: watching")
        assert b"devtest 1" in seen and b"tools (1)" in seen and b"\xe2\x86\x92 sent" in seen  # the summary and the envelopes
        (tmp_path / "srv.py").write_text(SERVER.format(answer="two") + "\n\n@server.tool()\ndef added() -> str:\n    return 'new'\n")
        until(b"restarted (inspected again)")
        assert b"tools (2)" in seen and b"added()" in seen
    finally:
        proc.terminate()
        proc.wait(30)
        os.close(controller)


ASKING = '''import wiremcp
from typing import Annotated

server = wiremcp.Server("asking", version="1")


@server.tool()
async def chatty(ctx: wiremcp.Context) -> str:
    ctx.report_progress(1, 2, "looking")
    ctx.info("looked")
    answer = await ctx.elicit("Go on?", bool)
    return f"chatty {answer.value}"


@server.tool()
async def quiet(ctx: wiremcp.Context) -> str:
    answer = await ctx.elicit("Go on?", bool)
    ctx.report_progress(1, 1, "done")
    return f"quiet {answer.value}"


@server.tool()
def declared(go: Annotated[bool, wiremcp.Elicit("Go on?")]) -> str:
    return f"declared {go}"


def helper(n: int) -> int:
    return 10 // n


@server.tool()
def divide(n: int) -> int:
    return helper(n)
'''

#: What a host that answers elicitations and wants progress and log messages sends with each call.
ASKING_META = {
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    "progressToken": "p",
    "io.modelcontextprotocol/logLevel": "info",
}


def _round_one(dev: Dev, request_id: int, tool: str) -> dict[str, object]:
    """The first round's result of ``tool``, past its progress and log notifications."""
    dev.send(call(request_id, tool, **ASKING_META))
    while "id" not in (message := dev.recv()):
        pass
    result: dict[str, object] = message["result"]
    assert result["resultType"] == "input_required", result
    return result


def test_a_handler_that_asks_after_visible_work_is_warned_about(tmp_path: Path) -> None:
    """Issue 28 item 7: progress and log before a question are sent again when the handler re-runs; dev says so."""
    (tmp_path / "srv.py").write_text(ASKING)
    dev = Dev(["srv.py"], tmp_path)
    try:
        _round_one(dev, 1, "quiet")     # asks before anything visible: nothing to say
        _round_one(dev, 2, "declared")  # declared inputs: asked before the body runs
        _round_one(dev, 3, "chatty")
        line = dev.wait_for("RerunWarning")
        def_line = ASKING.splitlines().index("async def chatty(ctx: wiremcp.Context) -> str:") + 1
        assert line.startswith(f"{tmp_path / 'srv.py'}:{def_line}: RerunWarning: tool 'chatty' sent progress and a log message, "
                               "then asked the client (elicitation/create): with a 2026-07-28 client it runs again from the top")
        assert "declare the input as a parameter" in line and 'docs/server.md, "Declared inputs"' in line
        # the warnings of the earlier calls would have come first, on the same stream
        assert [text for text in dev.err_lines if "RerunWarning" in text] == [line]
    finally:
        dev.close_stdin()
    assert dev.wait() == 0


def test_a_tool_that_raises_shows_the_traceback_of_the_users_code(tmp_path: Path) -> None:
    """Issue 28 item 8b: the client gets the usual masked isError result, the developer the exception."""
    (tmp_path / "srv.py").write_text(ASKING)
    dev = Dev(["srv.py"], tmp_path)
    try:
        result = dev.ask(call(1, "divide", {"n": 0}))["result"]
        text = "Error in tool 'divide': an internal error occurred (the details are in the server's log)"
        assert result["isError"] is True and result["content"][0]["text"] == text
        dev.wait_for(f"wiremcp.server: tool 'divide' raised ZeroDivisionError; the client got: {text}")
        dev.wait_for("ZeroDivisionError: integer division or modulo by zero")
        start = next(i for i, line in enumerate(dev.err_lines) if "raised ZeroDivisionError" in line)
        end = next(i for i, line in enumerate(dev.err_lines) if line.startswith("ZeroDivisionError"))
        frames = [line.strip() for line in dev.err_lines[start + 1 : end] if line.strip().startswith("File ")]
        assert frames == [f'File "{tmp_path / "srv.py"}", line 33, in divide', f'File "{tmp_path / "srv.py"}", line 28, in helper']
    finally:
        dev.close_stdin()
    assert dev.wait() == 0
