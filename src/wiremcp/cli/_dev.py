"""``wiremcp dev TARGET``: serve a server, restart it when its files change, show every envelope.

    wiremcp dev examples/echo.py              # stdio: a reloading proxy for a host (stdin not a terminal)
    wiremcp dev examples/echo.py              # on a terminal: inspect it again after every change
    wiremcp dev examples/echo.py --http       # Streamable HTTP on 127.0.0.1:8000/mcp, reloaded on change
    wiremcp dev examples/echo.py --web        # the web inspector as the client (docs/inspector.md)

Four ways, chosen by the options and what is on the other end (docs/tap.md, "wiremcp dev"):

* **stdio, for a host** (stdin is not a terminal: a host started it, its
  configuration naming ``wiremcp dev server.py``): dev is a proxy like
  ``tap`` in front of ``wiremcp run TARGET``. Host lines go to the current
  server process whole (a line is forwarded as soon as its newline arrives),
  server lines come back unchanged. On a change, the server is stopped and
  started again; requests in flight get a -32603 error naming the restart (a
  host is never left waiting), and a legacy session is carried over: dev
  replays the host's ``initialize`` and ``notifications/initialized`` to the
  new process (their answers are not forwarded) and, where the server
  declared ``listChanged``, tells the host its tools, prompts and resources
  changed. A 2026-07-28 host needs nothing: each request stands alone.
* **stdio, on a terminal**: there is no host to proxy for, so dev is the
  client: it runs ``wiremcp inspect --wire TARGET`` after each change.
* **--http**: the server runs as ``wiremcp run --http`` would, restarted on
  change, at the same URL; a tee in front of its ASGI app reports each
  envelope of the POST bodies and replies (JSON or SSE) to dev.
* **--web**: the web inspector (``cli/_web``, docs/inspector.md) is the
  client, in a thread of dev: it runs ``wiremcp run TARGET`` over stdio and
  reconnects after each change (`WebRunner`); the page's URL is on stdout.

Every envelope (with ``--web``: in the page instead) is printed to stderr with ``--wire``'s printer (`WirePrinter`,
coloured on a terminal); in the stdio proxy each also goes through the tap
checker and its problems are printed under it. Watched: the target file's
folder, or the target module's package folder, recursively, for ``*.py``
changes (watchfiles, the ``dev`` extra). The line
``wiremcp dev: watching …`` is printed once the watcher runs, and
``wiremcp dev: restarted …`` after each restart, once the new process
started.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, Callable, Iterator, cast

import orjson

from ._output import OK, Style, WirePrinter, fail, install_hint, missing_extra
from ._run import TargetError, address_problem, load_server
from ._target import parse_target
from ._wirecheck import WireChecker

__all__ = ["add_arguments", "handle", "watched_paths", "child_main"]

#: How long a stopping server gets between SIGTERM and SIGKILL, in seconds.
STOP_GRACE = 3.0
RESTART_ERROR = -32603


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp dev``."""
    p.add_argument("target", help="path/to/server.py or package.module, optionally :attribute")
    p.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="--http: address to bind (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="--http: port (default: 8000)")
    p.add_argument("--path", default="/mcp", help="--http: path of the MCP endpoint (default: /mcp)")
    p.add_argument("--watch", action="append", default=[], metavar="DIR", help="another folder to watch, repeatable")
    p.add_argument("--no-color", action="store_true", help="never colour the output")
    p.add_argument("--web", action="store_true", help="the web inspector is the client (docs/inspector.md); URL on stdout")
    p.add_argument("--web-port", type=int, default=0, metavar="PORT", help="--web: port (default: a free one)")


def _say(text: str) -> None:
    print(f"wiremcp dev: {text}", file=sys.stderr, flush=True)


def watched_paths(target: str, extra: list[str]) -> list[Path]:
    """The folder of a file target, or of the module (its package) a module target names."""
    parsed = parse_target(target)  # the rules every command follows (`_target`)
    spec = parsed.spec
    paths: list[Path] = []
    if parsed.kind == "file":
        paths.append(Path(spec).resolve().parent)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        found = importlib.util.find_spec(spec.split(".")[0])
        if found is not None and found.submodule_search_locations:
            paths.extend(Path(p).resolve() for p in found.submodule_search_locations)
        elif found is not None and found.origin:
            paths.append(Path(found.origin).resolve().parent)
        else:
            paths.append(Path.cwd())
    paths.extend(Path(p).resolve() for p in extra)
    return paths


def _changes(paths: list[Path], stop: threading.Event) -> Iterator[set[tuple[Any, str]]]:
    """Sets of changed ``*.py`` files; an empty set first, once the watcher runs."""
    from watchfiles import PythonFilter, watch

    logging.getLogger("watchfiles.main").setLevel(logging.ERROR)  # not "KeyboardInterrupt caught": dev says "stopped"
    for changes in watch(
        *paths, watch_filter=PythonFilter(), stop_event=stop, debounce=200, step=50,
        yield_on_timeout=True, rust_timeout=500, raise_interrupt=False,
    ):
        yield changes


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp dev``: serve, watch, restart until Ctrl-C (or the host closes stdin); the exit status."""
    if importlib.util.find_spec("watchfiles") is None:
        return fail("dev", f"needs watchfiles: {install_hint('dev')}")
    if args.http and importlib.util.find_spec("uvicorn") is None:
        return fail("dev", f"--http needs uvicorn: {install_hint('http')}")
    if args.http:
        problem = address_problem(args.host, args.port)
        if problem is not None:
            return fail("dev", problem)
    paths = watched_paths(args.target, args.watch)
    style = Style.for_stream(sys.stderr, args.no_color)
    if getattr(args, "web", False):
        if args.http:
            return fail("dev", "--web serves the server over stdio: it does not combine with --http")
        problem = missing_extra("--web", "uvicorn") or address_problem("127.0.0.1", args.web_port, "--web-port")
        if problem is not None:
            return fail("dev", problem)
        from ._web import WebRunner  # on first use: the web inspector is for --web only

        # WebRunner has _Runner's methods; _web does not import _dev, so it is not a subclass
        runner: _Runner = cast(_Runner, WebRunner(args.target, args.web_port, _child_env(), _say))
    elif args.http:
        runner = _HttpRunner(args, style)
    elif sys.stdin.isatty():
        runner = _InspectRunner(args)
    else:
        runner = _StdioProxy(args.target, style)
    stop = threading.Event()
    previous = _on_sigterm()
    try:
        runner.start()
        for changes in _changes(paths, stop):
            if not changes:
                if not runner.watching:
                    runner.watching = True
                    _say(f"watching {', '.join(map(str, paths))} (Ctrl-C to stop)")
                if runner.finished():
                    break
                continue
            names = sorted({os.path.relpath(path) for _, path in changes})
            runner.restart(", ".join(names[:3]) + (" …" if len(names) > 3 else ""))
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the cleanup short
        try:
            runner.stop()
        finally:
            signal.signal(signal.SIGTERM, previous)
    _say("stopped")
    return OK


def _on_sigterm() -> Any:
    """SIGTERM ends dev as Ctrl-C does: the server process is stopped before dev exits.

    Returns the handler it replaces. Without it, SIGTERM (a host closing,
    ``kill``, a process manager) killed dev at once and left its server
    process running, holding the port.
    """

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


class _Runner:
    watching = False

    def start(self) -> None: ...

    def restart(self, why: str) -> None: ...

    def stop(self) -> None: ...

    def finished(self) -> bool:
        """Whether dev should end (the host closed stdin)."""
        return False


def _child_env() -> dict[str, str]:
    """The environment of the server process: ours, with the current folder first on PYTHONPATH.

    ``wiremcp dev my_pkg.server:app`` run from the project folder finds the module, as the
    folder is where dev looked for it (`watched_paths`); the process shows `SchemaWarning`s, a `RerunWarning`
    for a handler that did visible work before asking the client, and a failing tool's traceback.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
    # what registration accepts silently (an untyped parameter, no return annotation), said at the def
    env["WIREMCP_SCHEMA_WARNINGS"] = "1"
    # what a running handler does that a developer wants told: visible work before a question
    # (it is done again with the answer), a tool's exception with its traceback (server/_definition.py)
    env["WIREMCP_DEV"] = "1"
    return env


def _stop_process(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGTERM)
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    except OSError:
        pass


class _InspectRunner(_Runner):
    """On a terminal: run ``wiremcp inspect --wire TARGET`` now and after each change."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.argv = [sys.executable, "-m", "wiremcp", "inspect", "--wire", args.target]
        if args.no_color:
            self.argv.append("--no-color")

    def start(self) -> None:
        subprocess.run(self.argv, env=_child_env())

    def restart(self, why: str) -> None:
        _say(f"{why} changed; inspecting again")
        subprocess.run(self.argv, env=_child_env())
        _say("restarted (inspected again)")


# -- stdio: a reloading proxy ------------------------------------------------------------------


class _StdioProxy(_Runner):
    """Host on our stdin/stdout, the current server process behind us."""

    def __init__(self, target: str, style: Style) -> None:
        self.argv = [sys.executable, "-m", "wiremcp", "run", target]
        self.printer = WirePrinter(sys.stderr, style)
        self.style = style
        self.checker = WireChecker()
        self.lock = threading.RLock()  # our stdout, the checker, the process and the session state
        self.process: subprocess.Popen[bytes] | None = None
        self.pending: dict[tuple[bool, Any], str] = {}  # the host's requests in flight
        self.initialize: bytes | None = None
        self.initialized: bytes | None = None
        self.capabilities: dict[str, Any] = {}
        self.replay_id: str | None = None
        self.generation = 0
        self.stdin_closed = threading.Event()
        self.out = sys.stdout.buffer

    def start(self) -> None:
        self._spawn()
        threading.Thread(target=self._from_host, daemon=True, name="dev-c2s").start()

    def finished(self) -> bool:
        return self.stdin_closed.is_set() and (self.process is None or self.process.poll() is not None)

    def _spawn(self) -> None:
        self.generation += 1
        process = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env=_child_env())
        self.process = process
        threading.Thread(target=self._from_server, args=(process, self.generation), daemon=True, name="dev-s2c").start()

    def restart(self, why: str) -> None:
        with self.lock:
            old = self.process
            self.process = None
        if old is not None:
            if old.stdin is not None:
                try:
                    old.stdin.close()
                except OSError:
                    pass
            _stop_process(old)
        with self.lock:
            for key, method in list(self.pending.items()):
                self._reply_restarted(key[1], method)
            self.pending.clear()
            self._spawn()
            if self.initialize is not None:
                self.replay_id = f"wiremcp-dev-replay-{self.generation}"
                request = orjson.loads(self.initialize)
                request["id"] = self.replay_id
                self._to_server(orjson.dumps(request) + b"\n")
        _say(f"{why} changed; restarted (pid {self.process.pid if self.process else '?'})")

    def stop(self) -> None:
        with self.lock:
            process, self.process = self.process, None
        if process is not None:
            if process.stdin is not None:
                try:
                    process.stdin.close()
                except OSError:
                    pass
            try:
                process.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                _stop_process(process)

    def _reply_restarted(self, request_id: Any, method: str) -> None:
        line = orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": RESTART_ERROR, "message": f"wiremcp dev restarted the server while {method} was in flight"},
            }
        ) + b"\n"
        self._to_host(line)

    def _to_host(self, line: bytes) -> None:
        with self.lock:
            try:
                self.out.write(line)
                self.out.flush()
            except (OSError, ValueError):
                pass
            self._show("s2c", line)

    def _to_server(self, line: bytes) -> None:
        process = self.process
        if process is None or process.stdin is None:
            return
        try:
            process.stdin.write(line)
        except (OSError, ValueError):
            pass

    def _show(self, direction: str, line: bytes) -> None:
        self.printer("send" if direction == "c2s" else "recv", line.rstrip(b"\r\n"))
        found = self.checker.check_line("c2s" if direction == "c2s" else "s2c", line)
        for item in found["problems"]:
            print(self.style("1;31", f"  ! {item['code']}: {item['message']}"), file=sys.stderr, flush=True)

    def _from_host(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(0, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                self._host_line(raw + b"\n")
        if buffer.strip():
            self._host_line(buffer)
        self.stdin_closed.set()
        with self.lock:
            process = self.process
        if process is not None and process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass

    def _host_line(self, line: bytes) -> None:
        if not line.strip():
            return
        with self.lock:  # recorded before it is written, so that its answer finds it
            self._show("c2s", line)
            self._track(line)
        self._to_server(line)  # outside the lock: a full pipe must not stop the other direction

    def _track(self, line: bytes) -> None:
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        if type(msg) is not dict:
            return
        method = msg.get("method")
        if "id" in msg and type(method) is str:
            self.pending[(type(msg["id"]) is str, msg["id"])] = method
            if method == "initialize":
                self.initialize = line
        elif method == "notifications/initialized":
            self.initialized = line

    def _from_server(self, process: subprocess.Popen[bytes], generation: int) -> None:
        assert process.stdout is not None
        buffer = b""
        while True:
            try:
                chunk = os.read(process.stdout.fileno(), 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                self._server_line(raw + b"\n", generation)
        if buffer.strip():
            self._server_line(buffer, generation)
        status = process.wait()
        if generation == self.generation and self.process is process and not self.stdin_closed.is_set():
            _say(f"the server exited with status {status}; waiting for a change to start it again")

    def _server_line(self, line: bytes, generation: int) -> None:
        with self.lock:
            if generation != self.generation:
                return  # an old process's last words: its requests were answered already
            try:
                msg = orjson.loads(line)
            except orjson.JSONDecodeError:
                msg = None
            if type(msg) is dict and "id" in msg and "method" not in msg:
                if self.replay_id is not None and msg.get("id") == self.replay_id:
                    self._after_replay(msg)
                    return
                key = (type(msg["id"]) is str, msg["id"])
                method = self.pending.pop(key, None)
                if method == "initialize" and type(msg.get("result")) is dict:
                    caps = msg["result"].get("capabilities")
                    self.capabilities = caps if type(caps) is dict else {}
            self._to_host(line)

    def _after_replay(self, msg: dict[str, Any]) -> None:
        self.replay_id = None
        if self.initialized is not None:
            self._to_server(self.initialized)
        result = msg.get("result")
        caps = result.get("capabilities") if type(result) is dict else None
        if type(caps) is not dict:
            return
        for kind in ("tools", "prompts", "resources"):
            if type(caps.get(kind)) is dict and caps[kind].get("listChanged"):
                self._to_host(orjson.dumps({"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}) + b"\n")


# -- HTTP: the server behind a tee ----------------------------------------------------------------


class _HttpRunner(_Runner):
    def __init__(self, args: argparse.Namespace, style: Style) -> None:
        self.args = args
        self.printer = WirePrinter(sys.stderr, style)
        self.process: subprocess.Popen[bytes] | None = None

    def _child_argv(self) -> list[str]:
        a = self.args
        code = "import sys; from wiremcp.cli._dev import child_main; sys.exit(child_main(sys.argv[1:]))"
        return [sys.executable, "-c", code, a.target, a.host, str(a.port), a.path]

    def start(self) -> None:
        read, write = os.pipe()
        env = {**_child_env(), "WIREMCP_DEV_FD": str(write)}
        self.process = subprocess.Popen(self._child_argv(), pass_fds=(write,), env=env)
        os.close(write)
        threading.Thread(target=self._records, args=(read,), daemon=True, name="dev-tee").start()

    def _records(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as handle:
            for line in handle:
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                self.printer("send" if record.get("dir") == "c2s" else "recv", record.get("data", "").encode())

    def restart(self, why: str) -> None:
        if self.process is not None:
            _stop_process(self.process)
        self.start()
        _say(f"{why} changed; restarted (pid {self.process.pid if self.process else '?'})")

    def stop(self) -> None:
        if self.process is not None:
            _stop_process(self.process)


def child_main(argv: list[str]) -> int:
    """The ``--http`` server process: the target's app behind `_Tee`, on uvicorn."""
    target, host, port, path = argv[0], argv[1], int(argv[2]), argv[3]
    from ..transports.http import asgi_app, uvicorn_config  # on first use: only --http's server process serves HTTP

    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        server = load_server(target)
    except TargetError as exc:
        return fail("dev", str(exc))
    fd = int(os.environ.get("WIREMCP_DEV_FD", "-1"))
    sink = os.fdopen(fd, "wb", buffering=0) if fd >= 0 else None
    app = asgi_app(server, path=path)
    import uvicorn

    config = uvicorn_config(_Tee(app, sink), host=host, port=port)
    sock = config.bind_socket()  # bound before it is announced: a client may connect at once
    print(f"wiremcp dev: serving {server.name!r} at http://{host}:{port}{path}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])
    return OK


class _Tee:
    """ASGI middleware: reports each POST body and each reply envelope (JSON or SSE data) to ``sink``."""

    def __init__(self, app: Any, sink: IO[bytes] | None) -> None:
        self.app = app
        self.sink = sink

    def _emit(self, direction: str, data: bytes) -> None:
        if self.sink is None or not data.strip():
            return
        try:
            self.sink.write(orjson.dumps({"dir": direction, "data": data.decode("utf-8", "replace")}) + b"\n")
        except OSError:
            pass

    async def __call__(self, scope: Any, receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        sse = False
        pending = bytearray()

        async def tee_receive() -> Any:
            message = await receive()
            if message.get("type") == "http.request":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    self._emit("c2s", bytes(body))
            return message

        async def tee_send(message: Any) -> None:
            nonlocal sse
            if message.get("type") == "http.response.start":
                for name, value in message.get("headers", ()):
                    if name.lower() == b"content-type" and value.startswith(b"text/event-stream"):
                        sse = True
            elif message.get("type") == "http.response.body":
                pending.extend(message.get("body", b""))
                if sse:
                    while b"\n\n" in pending:
                        event, _, rest = bytes(pending).partition(b"\n\n")
                        pending[:] = rest
                        data = b"\n".join(line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:"))
                        self._emit("s2c", data)
                elif not message.get("more_body", False):
                    self._emit("s2c", bytes(pending))
                    pending.clear()
            await send(message)

        await self.app(scope, tee_receive, tee_send)
