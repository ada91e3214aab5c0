"""The rough edges a new user hit (issue 17, item 6), each shown over a real process.

Spec: client/elicitation.mdx (answering a server's question from the command
line: accept with content, decline, cancel), basic/transports/stdio.mdx (the
server's stderr is its own; stdout carries only MCP), basic/transports/
streamable-http.mdx (a legacy 2025-11-25 SSE stream opens with a priming
event: an id and empty data), basic/authorization (401). The rest is the
command line's own contract (docs/hosts.md, docs/client.md).

Commands run as ``python -P -m wiremcp``: ``-P`` leaves the current folder
off sys.path, as the ``wiremcp`` console script does, so the module targets
resolve the way a user's shell resolves them.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest
from _servers import stop as stop_process

pytestmark = pytest.mark.slow

WIREMCP = [sys.executable, "-P", "-m", "wiremcp"]

PACKAGE_SERVER = '''
import sys
import wiremcp

app = wiremcp.Server("pkg", version="2.0")


@app.tool()
def add(a: int, b: int = 1) -> int:
    """Add two integers."""
    print(f"adding {a} and {b}", file=sys.stderr)
    return a + b
'''

TYPED_SERVER = '''
import wiremcp

server = wiremcp.Server("typed", version="1")


@server.tool()
def show(count: int, ratio: float, loud: bool, tags: list[str], extra: dict[str, int], name: str = "x") -> dict:
    """Return the arguments as they arrived."""
    return {"count": count, "ratio": ratio, "loud": loud, "tags": tags, "extra": extra, "name": name}


@server.prompt()
def greeting(who: str) -> str:
    """Greet someone."""
    return f"hello {who}"


@server.resource("mem://notes")
def notes() -> str:
    return "the notes"
'''

ASK_SERVER = '''
import wiremcp

server = wiremcp.Server("ask", version="3")

GUEST = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Guest name", "description": "as on the passport"},
        "adults": {"type": "integer", "default": 2},
        "breakfast": {"type": "boolean", "title": "Breakfast"},
        "room": {"type": "string", "enum": ["single", "double"], "default": "double"},
    },
    "required": ["name", "breakfast"],
}
ROOM = {"type": "object", "properties": {"floor": {"type": "integer"}}, "required": ["floor"]}


@server.tool()
async def book(ctx: wiremcp.Context) -> str:
    """Book a room: asks for the guest, then for the floor."""
    guest = await ctx.elicit("Who is the guest?", GUEST)  # a JSON Schema: the ElicitResult dict comes back
    if guest["action"] != "accept":
        return f"guest: {guest['action']}"
    room = await ctx.elicit("Which floor?", ROOM)
    if room["action"] != "accept":
        return f"floor: {room['action']}"
    return f"booked {guest['content']} on {room['content']}"
'''


def wiremcp(*args: str, cwd: Path, timeout: float = 60, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*WIREMCP, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, stdin=stdin)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder: my_pkg/server.py (a Server named app), typed.py, ask.py."""
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    (tmp_path / "my_pkg" / "server.py").write_text(PACKAGE_SERVER)
    (tmp_path / "typed.py").write_text(TYPED_SERVER)
    (tmp_path / "ask.py").write_text(ASK_SERVER)
    return tmp_path


# -- targets: one resolver --------------------------------------------------------------------


def test_a_module_target_resolves_from_the_project_folder_in_run_call_and_inspect(project: Path) -> None:
    """The current folder is on sys.path for ``run``; ``call`` and ``inspect`` take module:attr like ``run``."""
    done = wiremcp("call", "my_pkg.server:app", "add", "a=2", "b=40", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"
    done = wiremcp("inspect", "my_pkg.server", cwd=project)  # `app` is one of the conventional names
    assert done.returncode == 0, done.stderr
    assert "pkg 2.0" in done.stdout and "add(a: integer, b?: integer)" in done.stdout
    # `run` itself, started as the console script starts it (no current folder on sys.path)
    done = wiremcp("call", "add", '{"a": 1}', "--", *WIREMCP, "run", "my_pkg.server:app", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_a_target_that_is_not_a_server_says_what_it_found(project: Path) -> None:
    (project / "webapp.py").write_text(
        "from starlette.applications import Starlette\n\napi = Starlette()\nnumber = 7\n"
    )
    done = wiremcp("run", "webapp.py:api", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith("wiremcp run: webapp.py:api is a starlette.applications.Starlette, not a wiremcp.Server")
    assert "ASGI application" in done.stderr and "MCPApp" in done.stderr
    done = wiremcp("run", "webapp.py", cwd=project)  # no attribute named: the ASGI app it defines is named
    assert done.returncode == 2 and "webapp.py:api is a starlette.applications.Starlette" in done.stderr
    done = wiremcp("run", "webapp.py:number", cwd=project)
    assert done.returncode == 2 and "webapp.py:number is a int, not a wiremcp.Server" in done.stderr
    assert "ASGI" not in done.stderr
    done = wiremcp("inspect", "my_pkg.server:nothing", cwd=project)
    assert done.returncode == 2
    assert "my_pkg.server has no attribute 'nothing'; it has my_pkg.server:app" in done.stderr


def test_an_mcpapp_target_is_served_as_its_server(project: Path) -> None:
    (project / "mounted.py").write_text(
        "import wiremcp\nfrom wiremcp.transports.http import MCPApp\n\n"
        "server = wiremcp.Server('mounted', version='1')\n\n\n"
        "@server.tool()\ndef ping() -> str:\n    return 'pong'\n\n\nendpoint = MCPApp(server)\n"
    )
    done = wiremcp("call", "mounted.py:endpoint", "ping", cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pong"


def test_a_syntax_error_is_reported_once_with_file_and_line(project: Path) -> None:
    (project / "broken.py").write_text("import wiremcp\n\nserver = wiremcp.Server('b')\ndef f(:\n    pass\n")
    for command in ("inspect", "run"):
        done = wiremcp(command, "broken.py", cwd=project)
        assert done.returncode == 2
        assert done.stderr.count("SyntaxError") == 1, done.stderr
        assert f"wiremcp {command}: broken.py:4: SyntaxError: invalid syntax\n    def f(:\n          ^\n" == done.stderr
        assert done.stdout == ""


def test_an_exception_at_import_shows_the_users_frames_once(project: Path) -> None:
    (project / "raises.py").write_text("import wiremcp\n\n\ndef setup():\n    raise RuntimeError('no config')\n\n\nsetup()\n")
    done = wiremcp("inspect", "raises.py", cwd=project)
    assert done.returncode == 2
    assert done.stderr.count("Traceback") == 1 and done.stderr.count("RuntimeError: no config") == 1, done.stderr
    assert done.stderr.startswith("wiremcp inspect: importing raises.py failed:\nTraceback")
    assert 'raises.py", line 8, in <module>' in done.stderr and 'line 5, in setup' in done.stderr
    assert "importlib" not in done.stderr and "_target.py" not in done.stderr


# -- run ---------------------------------------------------------------------------------------


def test_port_without_http_is_a_usage_error(project: Path) -> None:
    done = wiremcp("run", "typed.py", "--port", "9000", cwd=project)
    assert done.returncode == 2
    assert "--port applies only with --http" in done.stderr


def test_a_port_in_use_names_the_address_and_the_way_out(project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = wiremcp("run", "typed.py", "--http", "--port", str(port), cwd=project)
    assert done.returncode == 2
    assert done.stderr == (
        f"wiremcp run: 127.0.0.1:{port} is already in use; stop what runs there, "
        "or pick another port with --port (0 picks a free one)\n"
    )


def test_stdio_start_is_logged_at_info(project: Path) -> None:
    done = wiremcp("run", "my_pkg.server:app", "--log-level", "INFO", cwd=project)  # stdin is empty: it ends at once
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    started = [line for line in done.stderr.splitlines() if "INFO wiremcp.cli:" in line]
    assert len(started) == 1 and started[0].endswith("serving 'pkg' version 2.0 over stdio, 1 tool(s)")
    assert "wiremcp.cli" not in wiremcp("run", "my_pkg.server:app", cwd=project).stderr  # WARNING by default


def test_demo_into_a_reader_that_stops_early_ends_quietly(project: Path) -> None:
    demo = subprocess.Popen([*WIREMCP, "demo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project)
    assert demo.stdout is not None and demo.stderr is not None
    assert demo.stdout.readline().startswith(b"wiremcp demo:")
    demo.stdout.close()  # `| head -1`
    err = demo.stderr.read()
    assert demo.wait(60) == 141
    assert err == b""


# -- call: arguments, names, stderr --------------------------------------------------------------


def test_call_takes_key_value_arguments_typed_by_the_input_schema(project: Path) -> None:
    done = wiremcp(
        "call", "typed.py", "show", "count=3", "ratio=0.5", "loud=yes", 'tags=["a", "b"]', 'extra={"k": 1}', "name=42",
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    assert '"count":3' in done.stdout.replace(" ", "") and '"ratio":0.5' in done.stdout.replace(" ", "")
    flat = done.stdout.replace(" ", "").replace("\n", "")
    assert '"loud":true' in flat and '"tags":["a","b"]' in flat and '"extra":{"k":1}' in flat
    assert '"name":"42"' in flat  # a string property keeps the text as it is
    done = wiremcp("call", "typed.py", "show", "count=three", cwd=project)
    assert done.returncode == 2 and done.stderr.strip() == "wiremcp call: count wants an integer, not 'three'"
    done = wiremcp("call", "typed.py", "show", "count", cwd=project)
    assert done.returncode == 2 and "key=value" in done.stderr
    # one JSON object is still the whole arguments
    done = wiremcp(
        "call", "typed.py", "show", '{"count": 1, "ratio": 2, "loud": false, "tags": [], "extra": {}}', cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert '"loud":false' in done.stdout.replace(" ", "")


def test_a_typo_in_a_name_suggests_the_close_ones(project: Path) -> None:
    done = wiremcp("call", "typed.py", "shwo", cwd=project)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "error -32602: Unknown tool: shwo; did you mean 'show'?"
    done = wiremcp("call", "typed.py", "shwo", "count=1", cwd=project)  # found while typing the arguments
    assert done.returncode == 2 and done.stderr.strip() == "wiremcp call: the server has no tool 'shwo'; did you mean 'show'?"
    done = wiremcp("prompt", "typed.py", "greting", "who=Ada", cwd=project)
    assert done.returncode == 1 and "did you mean 'greeting'?" in done.stdout
    done = wiremcp("read", "typed.py", "mem://note", cwd=project)
    assert done.returncode == 1 and "did you mean 'mem://notes'?" in done.stdout
    done = wiremcp("call", "typed.py", "zzzzzz", cwd=project)  # nothing close: no suggestion
    assert done.returncode == 1 and "did you mean" not in done.stdout


def test_the_servers_stderr_is_shown_after_success_unless_quiet(project: Path) -> None:
    done = wiremcp("call", "my_pkg.server:app", "add", "a=1", "b=2", cwd=project)
    assert done.returncode == 0 and done.stdout.strip() == "3"
    assert done.stderr == "adding 1 and 2\n"  # not dimmed: stderr is not a terminal
    done = wiremcp("call", "--quiet", "my_pkg.server:app", "add", "a=1", "b=2", cwd=project)
    assert done.returncode == 0 and done.stdout.strip() == "3" and done.stderr == ""
    done = wiremcp("inspect", "-q", "my_pkg.server:app", cwd=project)
    assert done.returncode == 0 and done.stderr == ""


# -- call: answering elicitation -----------------------------------------------------------------


def test_answers_given_on_the_command_line_one_per_question(project: Path) -> None:
    done = wiremcp("call", "ask.py", "book", "--answer", '{"name": "Ada", "breakfast": true}', "--answer", '{"floor": 3}', cwd=project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "booked {'name': 'Ada', 'breakfast': True} on {'floor': 3}"
    done = wiremcp("call", "ask.py", "book", "--answer", '{"name": "Ada", "breakfast": false}', "--answer", "decline", cwd=project)
    assert done.returncode == 0 and done.stdout.strip() == "floor: decline"
    assert "wiremcp call: declined the server's question 'Which floor?' (--answer)" in done.stderr
    done = wiremcp("call", "ask.py", "book", "--answer", "", cwd=project)  # an empty answer declines
    assert done.stdout.strip() == "guest: decline" and "declined" in done.stderr
    done = wiremcp("call", "ask.py", "book", "--answer", '"cancel"', cwd=project)
    assert done.stdout.strip() == "guest: cancel" and "cancelled" in done.stderr
    done = wiremcp("call", "ask.py", "book", "--answer", "[1]", cwd=project)
    assert done.returncode == 2 and "--answer wants a JSON object, decline or cancel" in done.stderr


def test_no_answer_left_and_no_terminal_cancels_and_says_so(project: Path) -> None:
    done = wiremcp("call", "ask.py", "book", "--answer", '{"name": "Ada", "breakfast": true}', cwd=project)
    assert done.returncode == 0 and done.stdout.strip() == "floor: cancel"
    assert "the server asks: 'Which floor?'; no --answer was left and stdin is not a terminal: cancelled" in done.stderr


class Terminal:
    """``wiremcp call`` with a pseudo-terminal for stdin; its stderr (the form) read as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [*WIREMCP, *args], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env={**os.environ, "NO_COLOR": "1"},
        )
        os.close(slave)
        self.err = b""

    def until(self, text: str, timeout: float = 30.0) -> None:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + timeout
        while text.encode() not in self.err:
            left = deadline - time.monotonic()
            ready = select.select([self.proc.stderr], [], [], max(left, 0))[0] if left > 0 else []
            chunk = os.read(self.proc.stderr.fileno(), 65536) if ready else b""
            if not chunk:
                raise AssertionError(f"no {text!r} on stderr; saw:\n{self.err.decode(errors='replace')}")
            self.err += chunk

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self) -> tuple[int, str, str]:
        assert self.proc.stdout is not None and self.proc.stderr is not None
        out = self.proc.stdout.read().decode()
        self.err += self.proc.stderr.read()
        status = self.proc.wait(30)
        os.close(self.master)
        return status, out, self.err.decode()


def test_on_a_terminal_the_question_is_a_form_from_the_schema(project: Path) -> None:
    term = Terminal(["call", "ask.py", "book"], project)
    try:
        term.until("The server asks: Who is the guest?")
        term.until("Guest name (name) [string]")
        term.until("as on the passport")
        term.until("  > ")
        term.type("Ada\n")
        term.until("adults, optional [integer] [default: 2]")
        term.type("two\n")  # not an integer: asked again, with the reason
        term.until("adults wants an integer, not 'two'; again:")
        term.type("\n")  # Enter: the default
        term.until("Breakfast (breakfast) [boolean]")
        term.type("y\n")
        term.until("choices: 1) single, 2) double")
        term.type("1\n")
        term.until("The server asks: Which floor?")
        term.type("4\n")
    finally:
        status, out, err = term.finish()
    assert status == 0, err
    assert out.strip() == "booked {'name': 'Ada', 'adults': 2, 'breakfast': True, 'room': 'single'} on {'floor': 4}"


def test_on_a_terminal_enter_on_a_required_field_declines_and_ctrl_d_cancels(project: Path) -> None:
    term = Terminal(["call", "ask.py", "book"], project)
    try:
        term.until("Guest name (name) [string]")
        term.type("\n")
    finally:
        status, out, err = term.finish()
    assert status == 0 and out.strip() == "guest: decline"
    assert "wiremcp call: declined (no answer for the required field 'name')" in err
    term = Terminal(["call", "ask.py", "book", "--answer", '{"name": "Ada", "breakfast": true}'], project)
    try:
        term.until("The server asks: Which floor?")
        term.until("  > ")
        term.type("\x04")  # Ctrl-D at the start of a line: end of input
    finally:
        status, out, err = term.finish()
    assert status == 0 and out.strip() == "floor: cancel"
    assert "wiremcp call: cancelled (end of input)" in err


# -- HTTP ----------------------------------------------------------------------------------------


class HttpServer:
    """``wiremcp run FILE --http --port 0``; knows its URL once it is listening."""

    def __init__(self, target: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*WIREMCP, "run", target, "--http", "--port", "0"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd,
        )
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline().decode()
        found = re.search(r"at (http://127\.0\.0\.1:\d+)/mcp", line)
        assert found, line
        self.base = found.group(1)

    def stop(self) -> None:
        stop_process(self.proc)


@pytest.fixture
def ask_http(project: Path) -> Iterator[HttpServer]:
    pytest.importorskip("uvicorn")
    server = HttpServer("ask.py", project)
    yield server
    server.stop()


def test_a_legacy_http_session_answers_questions_on_its_sse_stream(project: Path, ask_http: HttpServer) -> None:
    """2025-11-25: the reply is an SSE stream opening with a priming event (an id, empty data); the
    elicitation/create requests come on it, answered from --answer by POST; the result ends it."""
    done = wiremcp(
        "call", "--era", "legacy", f"{ask_http.base}/mcp", "book",
        "--answer", '{"name": "Bo", "breakfast": false}', "--answer", '{"floor": 1}', cwd=project,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "booked {'name': 'Bo', 'breakfast': False} on {'floor': 1}"


def test_a_wrong_path_says_there_is_no_mcp_endpoint(project: Path, ask_http: HttpServer) -> None:
    url = f"{ask_http.base}/mpc"
    done = wiremcp("inspect", url, cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith(f"wiremcp inspect: no MCP endpoint at {url} (HTTP 404")


DENY = '''
from http.server import BaseHTTPRequestHandler, HTTPServer


class Deny(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


httpd = HTTPServer(("127.0.0.1", 0), Deny)
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
'''


def test_a_401_names_authorization_and_the_way_to_log_in(project: Path) -> None:
    (project / "deny.py").write_text(DENY)
    server = subprocess.Popen([sys.executable, "deny.py"], stdout=subprocess.PIPE, cwd=project)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/mcp"
        done = wiremcp("call", url, "anything", cwd=project)
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 2
    assert done.stderr == (
        f"wiremcp call: the server at {url} requires authorization (HTTP 401 for initialize)\n"
        f"  use --auth (OAuth 2.1 in the browser), or log in first: wiremcp login {url}\n"
    )


SLOW = '''
import asyncio
import sys

import wiremcp

server = wiremcp.Server("slow", version="1")


@server.tool()
async def wait() -> str:
    print("wait started", file=sys.stderr, flush=True)
    await asyncio.sleep(120)
    return "late"
'''


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_with_a_request_in_flight_shuts_down_in_one_line(project: Path, signum: int) -> None:
    """The request in flight gets a -32603 reply once the grace period is over (not an HTTP 500), and
    the server's log says so in one line (no CancelledError traceback, no ASGI error)."""
    pytest.importorskip("uvicorn")
    (project / "slow.py").write_text(SLOW)
    server = subprocess.Popen(
        [*WIREMCP, "run", "slow.py", "--http", "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, cwd=project, env={**os.environ, "WIREMCP_SHUTDOWN_GRACE": "0.5"},
    )
    assert server.stderr is not None
    try:
        url = re.search(r"at (http://\S+)", server.stderr.readline().decode())
        assert url, "no URL announced"
        call = subprocess.Popen(
            [*WIREMCP, "call", url.group(1), "wait"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project, text=True
        )
        assert server.stderr.readline() == b"wait started\n"
        server.send_signal(signum)
        out, err = call.communicate(timeout=60)
        server.wait(60)
        rest = server.stderr.read().decode()
    finally:
        for proc in (server,):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert call.returncode == 1, err
    assert out.strip() == "error -32603: the server shut down before the request finished (cancelled after its shutdown grace period)"
    assert err == ""
    lines = rest.splitlines()
    assert len(lines) == 1 and lines[0].endswith("WARNING wiremcp.server: shutdown: 1 request(s) still running after 0.5 s were cancelled"), rest


# -- dev -----------------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads child processes from /proc")
def test_dev_http_stops_its_server_on_sigterm(project: Path) -> None:
    pytest.importorskip("uvicorn")
    pytest.importorskip("watchfiles")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    dev = subprocess.Popen(
        [*WIREMCP, "dev", "typed.py", "--http", "--port", str(port), "--no-color"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=project,
    )
    assert dev.stderr is not None
    seen = b""
    try:
        while b"wiremcp dev: watching" not in seen:
            line = dev.stderr.readline()
            assert line, seen.decode()
            seen += line
        children = _children(dev.pid)
        assert len(children) == 1
        dev.send_signal(signal.SIGTERM)
        assert dev.wait(30) == 0
    finally:
        if dev.poll() is None:
            dev.kill()
            dev.wait()
    assert not _alive(children[0])
    assert dev.stderr.read().decode().strip() == "wiremcp dev: stopped"
    with socket.socket() as sock:  # the port is free again
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))


def test_install_lines_work_from_a_clone_and_say_which_is_which() -> None:
    """Every install line in README.md and docs/ names the clone form or says it is for the index."""
    root = Path(__file__).resolve().parents[2]
    lines = []
    for path in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"pip install\b", line):
                lines.append((path.name, number, line))
    assert lines
    for name, number, line in lines:
        from_clone = re.search(r"pip install (-e |--editable )?['\"]?\.(\[[\w,]+\])?['\"]?", line)
        from_index = re.search(r"once (it is |wiremcp is |the package is )?(published|on the index)", line)
        named_package = re.search(r"pip install ['\"]?wiremcp", line)
        assert from_clone or from_index or not named_package, f"{name}:{number}: {line.strip()}"


