"""Instructions per request with callgrind: the load-independent figures of bench/README.md.

    python bench/instructions.py stdio            # LineServer.feed, in-process, 100 B echo
    python bench/instructions.py http             # MCPApp, one ASGI call per request, in-process
    python bench/instructions.py asgi-floor       # the bare ASGI handler (fixtures/raw_asgi.py), in-process
    python bench/instructions.py floor            # the stdio floor's work (loads, result, dumps), in-process
    python bench/instructions.py pipe             # a whole `wiremcp run examples/echo.py` fed requests on a pipe,
                                                  # one at a time (each after the last reply)
    python bench/instructions.py pipe-floor       # the same for fixtures/raw_echo.py
    python bench/instructions.py pipe-threaded    # bench/sync_tools.py's servers the same way: pipe-threaded,
                                                  # pipe-inline, pipe-async (fixtures/sync_echo.py),
                                                  # pipe-thread-floor (fixtures/raw_thread_echo.py),
                                                  # pipe-official (the official SDK; try --n 200,600)
    python bench/instructions.py cold             # a whole `wiremcp run examples/echo.py` answering one request
    python bench/instructions.py cold-floor       # the same for fixtures/raw_echo.py
    python bench/instructions.py handshake        # a whole `wiremcp run examples/echo.py` making a host's first
                                                  # three exchanges (handshake.py: server/discover, tools/list,
                                                  # tools/call; --era legacy: initialize, initialized + tools/list,
                                                  # tools/call), each sent after the last reply
    python bench/instructions.py handshake-official  # the same for fixtures/official_echo.py (bench/.venv-official)
    python bench/instructions.py handshake-floor  # the same for fixtures/raw_echo.py
    python bench/instructions.py client-http      # wiremcp's Client over HTTP (client_bench.py's worker, aiohttp),
                                                  # per tools/call at --inflight 1 (or 16), against
                                                  # `wiremcp run examples/echo.py --http` (outside valgrind)
    python bench/instructions.py client-http-official  # the same for the official mcp.Client (bench/.venv-official)
    python bench/instructions.py served-http      # a whole `wiremcp run examples/echo.py --http` (uvicorn) sent
                                                  # requests on one kept-alive connection, one at a time (each
                                                  # after the last reply); served-http-floor: fixtures/raw_asgi.py
                                                  # on uvicorn; served-http-official: the official SDK (try --n 200,600)
    python bench/instructions.py part-call        # one piece of the path in a loop: part-empty (the loop
                                                  # itself), part-loads, part-decode, part-request-dict (Decoder),
                                                  # part-fused-call (FastPath.check: msgspec, the checks),
                                                  # part-answer (FastPath.serve: the whole fused stage,
                                                  # checks, the tool's run, the reply), part-receive
                                                  # (ServerConnection.receive), part-handle (the
                                                  # general path: ServerConnection.request), part-headers
                                                  # (HeaderRules.check_fields), part-check-call (check_call)

Each in-process case runs the same work N = 1,000 and 3,000 times under
``valgrind --tool=callgrind`` and prints (I(3000) - I(1000)) / 2000: the
instructions of one request, with start-up and the first-call costs
differenced away. ``cold`` runs the whole process once, fed one 100 B
``tools/call`` on a pipe, and prints its total in millions (on uvloop when
the server picks it: stdin and stdout are pipes, as in ``run.py``);
``handshake*`` do the same for a host's first three exchanges (also counted up to the moment the server sleeps waiting for more after the reply, by a ``callgrind_control`` dump). The
counts are user-space instructions only (the kernel's work for system calls
is not in them), deterministic to a few hundred per request, and do not
depend on the machine's load: the measure to judge a small change by.

``--payload`` sets the echoed text's size (default 100); ``--n`` the two
counts (default ``1000,3000``). Needs ``valgrind`` on PATH. Internally the
script runs itself as the measured child with ``--child CASE N``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from driver import (  # noqa: E402
    POST_HEADERS, NotAvailable, RequestFactory, free_port, make_payload, modern_http_headers, wait_port,
)


def _lines(n: int, payload: int) -> bytes:
    factory = RequestFactory("modern", make_payload(payload))
    return b"".join(factory.body(i) + b"\n" for i in range(1, n + 1))


def _echo_server() -> Any:
    import runpy

    return runpy.run_path(os.path.join(ROOT, "examples", "echo.py"))["server"]


def run_stdio(n: int, payload: int) -> None:
    from wiremcp.transports.stdio._lines import LineServer

    data = _lines(n, payload)
    out: list[bytes] = []

    async def main() -> None:
        ls = LineServer(_echo_server(), out.append)
        ls.feed(data)
        ls.feed_eof()
        await ls.wait_closed()

    asyncio.run(main())
    assert len(out) == n, len(out)
    text = make_payload(payload).encode()
    assert all(b'"result"' in line and text in line for line in out), out[:1]


def run_floor(n: int, payload: int) -> None:
    import orjson

    out: list[bytes] = []
    for line in _lines(n, payload).splitlines():
        msg = orjson.loads(line)
        text = msg["params"]["arguments"]["text"]
        result = {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}
        out.append(orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + b"\n")
    assert len(out) == n


def _asgi_loop(app: Any, n: int, payload: int) -> None:
    factory = RequestFactory("modern", make_payload(payload))
    base = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
    ] + [(k.lower().encode(), v.encode()) for k, v in modern_http_headers().items()]
    statuses: list[int] = []

    async def main() -> None:
        for i in range(1, n + 1):
            body = factory.body(i)
            headers = base + [(b"content-length", str(len(body)).encode())]
            scope = {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "POST",
                "scheme": "http",
                "path": "/mcp",
                "raw_path": b"/mcp",
                "query_string": b"",
                "root_path": "",
                "headers": headers,
                "client": ("127.0.0.1", 50000),
                "server": ("127.0.0.1", 8000),
            }
            sent = False

            async def receive() -> dict[str, Any]:
                nonlocal sent
                if not sent:
                    sent = True
                    return {"type": "http.request", "body": body, "more_body": False}
                await asyncio.Event().wait()
                raise AssertionError

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    statuses.append(message["status"])

            await app(scope, receive, send)

    asyncio.run(main())
    assert statuses == [200] * n, statuses[:3]


def run_http(n: int, payload: int) -> None:
    from wiremcp.transports.http import MCPApp

    _asgi_loop(MCPApp(_echo_server()), n, payload)


def run_asgi_floor(n: int, payload: int) -> None:
    sys.path.insert(0, os.path.join(HERE, "fixtures"))
    from raw_asgi import app  # type: ignore[import-not-found]

    _asgi_loop(app, n, payload)


def _part(name: str) -> Callable[[int, int], None]:
    """One piece of the stdio/HTTP request path, in a loop over the same input (for the breakdown)."""

    def run(n: int, payload: int) -> None:
        import orjson

        from wiremcp.jsonrpc import MCP, Decoder

        server = _echo_server()
        line = RequestFactory("modern", make_payload(payload)).body(1)
        decoder = Decoder(MCP)
        params = decoder.decode(line).params  # type: ignore[union-attr]
        if name == "part-loads":
            f: Callable[[], Any] = lambda: orjson.loads(line)  # noqa: E731
        elif name == "part-decode":
            f = lambda: decoder.decode(line)  # noqa: E731
        elif name == "part-request-dict":
            f = lambda: decoder.request_dict(line)  # noqa: E731
        elif name == "part-fused-call":
            from wiremcp.server._intake import FastPath

            stage = FastPath(server, decoder)
            f = lambda: stage.check(line)  # noqa: E731
        elif name == "part-answer":
            from wiremcp.server._intake import FastPath

            stage = FastPath(server, decoder)
            assert stage.serve(line) is not None
            f = lambda: stage.serve(line)  # noqa: E731
        elif name == "part-receive":  # the fused stage through the server's one entry point
            from wiremcp.server.transport import ServerConnection

            conn = ServerConnection(server, lambda data: None, decoder=decoder)
            f = lambda: conn.receive(line)  # noqa: E731
        elif name == "part-handle":
            from wiremcp.jsonrpc import Request
            from wiremcp.server.transport import ServerConnection

            conn = ServerConnection(server, lambda data: None)
            request = Request(1, "tools/call", params)
            f = lambda: conn.request(request)  # noqa: E731
        elif name == "part-headers":
            from wiremcp.transports.http._headers import HeaderRules

            headers = {k.lower().encode(): v.encode() for k, v in modern_http_headers().items()}
            rules = HeaderRules(server)
            f = lambda: rules.check_fields(headers, "tools/call", params)  # noqa: E731
        elif name == "part-check-call":  # what the fused HTTP path runs instead of check_fields
            from wiremcp.transports.http._headers import HeaderRules

            headers = {k.lower().encode(): v.encode() for k, v in modern_http_headers().items()}
            rules = HeaderRules(server)
            from wiremcp.server._intake import FastPath

            found = FastPath(server, decoder).check(line)
            assert found is not None and rules.check_call(headers, found)
            f = lambda: rules.check_call(headers, found)  # noqa: E731
        else:  # part-empty: the loop itself
            f = lambda: None  # noqa: E731
        for _ in range(n):
            f()

    return run


PARTS = (
    "part-empty",
    "part-receive",
    "part-loads",
    "part-decode",
    "part-request-dict",
    "part-fused-call",
    "part-answer",
    "part-handle",
    "part-headers",
    "part-check-call",
)


def _wiremcp_cmd() -> list[str]:
    wiremcp = os.environ.get("WIREMCP_BIN", os.path.join(os.path.dirname(sys.executable), "wiremcp"))
    return [wiremcp, "run", os.path.join(ROOT, "examples", "echo.py")]


def _floor_cmd() -> list[str]:
    return [sys.executable, os.path.join(HERE, "fixtures", "raw_echo.py")]


def _sync_cmd(server: str) -> Callable[[], list[str]]:
    def cmd() -> list[str]:
        return [*_wiremcp_cmd()[:2], f"{os.path.join(HERE, 'fixtures', 'sync_echo.py')}:{server}"]

    return cmd


def _thread_floor_cmd() -> list[str]:
    return [sys.executable, os.path.join(HERE, "fixtures", "raw_thread_echo.py")]


def _official_cmd() -> list[str]:
    return [os.path.join(HERE, ".venv-official", "bin", "python"), os.path.join(HERE, "fixtures", "official_echo.py")]


#: Whole processes making a host's first three exchanges (handshake.py), one step at a time.
HANDSHAKE: dict[str, Callable[[], list[str]]] = {
    "handshake": _wiremcp_cmd,
    "handshake-official": _official_cmd,
    "handshake-floor": _floor_cmd,
}

#: Whole processes fed the requests through a pipe, one in flight (reads and writes included).
#: The ``pipe-`` cases of bench/sync_tools.py's servers: a plain ``def`` tool in the worker pool
#: (threaded), on the loop (inline), an ``async def`` tool, the thread floor, the official SDK.
PIPED: dict[str, Callable[[], list[str]]] = {
    "pipe": _wiremcp_cmd, "pipe-floor": _floor_cmd,
    "pipe-threaded": _sync_cmd("threaded"), "pipe-inline": _sync_cmd("inline"), "pipe-async": _sync_cmd("async_"),
    "pipe-thread-floor": _thread_floor_cmd, "pipe-official": _official_cmd,
}

CASES: dict[str, Callable[[int, int], None]] = {
    "stdio": run_stdio,
    "http": run_http,
    "asgi-floor": run_asgi_floor,
    "floor": run_floor,
    **{name: _part(name) for name in PARTS},
}


def _env() -> dict[str, str]:
    # Bytecode caches in place, as after `pip install` (and as run.py measures a cold start).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"  # the same dict probes in every run: counts repeat to the instruction
    return env


def _warm(argv: list[str], stdin: bytes | None = None) -> None:
    """Run once outside valgrind, so that both measured runs find the bytecode caches written."""
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, env=_env(), check=True)


def _callgrind_lockstep(argv: list[str], n: int, payload: int) -> int:
    """``argv`` under callgrind, sent ``n`` requests one at a time: each written after the last reply.

    One request in flight, as `run.py`'s 1-in-flight cases: every line arrives
    in a read of its own, so the count does not depend on where the kernel
    cuts a pipelined stream (which decides how many lines `wiremcp run`
    answers before its event loop starts).
    """
    factory = RequestFactory("modern", make_payload(payload))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        errors = os.path.join(tmp, "stderr")
        with open(errors, "wb") as err:
            proc = subprocess.Popen(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=_env(),
            )
            assert proc.stdin is not None and proc.stdout is not None
            for i in range(1, n + 1):
                proc.stdin.write(factory.body(i) + b"\n")
                proc.stdin.flush()
                reply = proc.stdout.readline()
                if b'"result"' not in reply:
                    proc.kill()
                    sys.exit(f"{argv}: request {i} got {reply[:300]!r}")
            proc.stdin.close()
            code = proc.wait()
        return _collected(argv, code, open(errors, "rb").read())


def _idle(pid: int, timeout: float = 300.0) -> None:
    """Wait until every thread of ``pid`` sleeps (the server waits for its next message)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    states.append(f.read().rsplit(") ", 1)[1].split()[0])
            except OSError:
                continue
        if states and all(s == "S" for s in states):
            time.sleep(0.2)  # and still so a moment later (not between two system calls)
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(") ", 1)[1].split()[0] == "S":
                    return
        time.sleep(0.05)
    sys.exit(f"process {pid} did not go idle within {timeout:.0f} s")


def _summary(path: str) -> int:
    with open(path) as f:
        m = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if m is None:
        sys.exit(f"no summary in {path}")
    return int(m.group(1))


def _callgrind_handshake(argv: list[str], era: str) -> tuple[int, int]:
    """``argv`` under callgrind, making the host's three exchanges of ``era`` (each after the last reply).

    Two counts: up to the moment the server waits for its next message after
    the call's reply (a dump by ``callgrind_control`` once every thread of it
    sleeps: what it did to answer, and whatever it does right after before
    reading again), and the total to its exit at end of input.
    """
    from handshake import steps

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        errors = os.path.join(tmp, "stderr")
        with open(errors, "wb") as err:
            proc = subprocess.Popen(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=_env(),
            )
            assert proc.stdin is not None and proc.stdout is not None
            for step in steps(era):
                for line in step.lines:
                    proc.stdin.write(line + b"\n")
                proc.stdin.flush()
                while True:  # the reply to this step (a server may also write notifications)
                    reply = proc.stdout.readline()
                    msg = orjson_loads(reply) if reply else None
                    if not isinstance(msg, dict) or msg.get("id") == step.req_id:
                        break
                problem = step.check(msg)
                if problem:
                    proc.kill()
                    sys.exit(f"{argv}: {problem}")
            _idle(proc.pid)
            subprocess.run(["callgrind_control", "--dump=idle", str(proc.pid)], check=True, capture_output=True, timeout=120)
            proc.stdin.close()
            code = proc.wait()
        total = _collected(argv, code, open(errors, "rb").read())
        dumps = sorted(f for f in os.listdir(tmp) if f.startswith("cg.out."))
        if len(dumps) != 1:
            sys.exit(f"expected one dump of callgrind_control, found {dumps}")
        return _summary(os.path.join(tmp, dumps[0])), total


#: Whole HTTP servers (as run.py starts them, uvicorn included) sent the requests on one connection,
#: one in flight: the HTTP counterpart of `PIPED`, with every contender's server measured the same way.
SERVED: dict[str, str] = {
    "served-http": "wiremcp", "served-http-floor": "floor", "served-http-official": "official",
}


def _callgrind_served(case: str, n: int, payload: int) -> int:
    """The server of ``case`` under callgrind, sent ``n`` POSTs one at a time, then stopped (SIGINT)."""
    import http.client
    import signal

    import run

    port = free_port()
    argv = [a.replace("{port}", str(port)) for a in run.server_command(SERVED[case], "http")]
    factory = RequestFactory("modern", make_payload(payload))
    headers = {**POST_HEADERS, **modern_http_headers()}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        errors = os.path.join(tmp, "stderr")
        with open(errors, "wb") as err:
            proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                                    stdout=subprocess.DEVNULL, stderr=err, env=_env())
            try:
                try:  # under valgrind a server starts in tens of seconds
                    wait_port(port, proc, timeout=300)
                except NotAvailable as exc:
                    sys.exit(f"{argv} did not listen ({exc}): {open(errors, 'rb').read().decode()[-2000:]}")
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                for i in range(1, n + 1):
                    conn.request("POST", "/mcp", body=factory.body(i), headers=headers)
                    resp = conn.getresponse()
                    reply = resp.read()
                    if resp.status != 200 or b'"result"' not in reply:
                        sys.exit(f"{argv}: request {i} got {resp.status} {reply[:300]!r}")
                conn.close()
            finally:
                proc.send_signal(signal.SIGINT)
                code = proc.wait(timeout=300)
        return _collected(argv, None, open(errors, "rb").read())  # stopped by SIGINT: any exit status


#: Clients (client_bench.py's workers) and their interpreters.
CLIENTS: dict[str, str] = {
    "client-http": sys.executable,
    "client-http-official": os.path.join(HERE, ".venv-official", "bin", "python"),
}


def _callgrind_client(case: str, lo: int, hi: int, inflight: int) -> float:
    """Instructions per call of one client over HTTP: (I(hi) - I(lo)) / (hi - lo), one server for both."""
    import client_bench

    proc, url = client_bench.start_http_server("wiremcp")
    impl = "wiremcp" if case == "client-http" else "official"
    try:
        counts = []
        for calls in (lo, hi):
            argv = [CLIENTS[case], os.path.join(HERE, "client_bench.py"), "--worker", impl, "--url", url,
                    "--calls", str(calls), "--warmup", "50", "--inflight", str(inflight)]
            counts.append(_callgrind(argv))
    finally:
        client_bench.stop(proc)
    return (counts[1] - counts[0]) / (hi - lo)


def orjson_loads(data: bytes) -> Any:
    import orjson

    return orjson.loads(data)


def _callgrind(argv: list[str], stdin: bytes | None = None) -> int:
    env = _env()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
        )
        return _collected(argv, proc.returncode, proc.stderr)


def _collected(argv: list[str], code: int | None, stderr: bytes) -> int:
    """valgrind's total (its ``Collected : N`` line); a failed run (``code`` not 0; None: any) ends the script with its stderr."""
    m = re.search(rb"Collected : (\d+)", stderr)
    if (code is not None and code != 0) or m is None:
        sys.exit(f"{argv} failed ({code}):\n{stderr.decode()[-2000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case", choices=[*CASES, *PIPED, *SERVED, *HANDSHAKE, *CLIENTS, "cold", "cold-floor"])
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern", help="for handshake*")
    ap.add_argument("--inflight", type=int, default=1, help="for client-http*: calls in flight")
    ap.add_argument("--payload", type=int, default=100)
    ap.add_argument("--n", default="1000,3000")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        CASES[args.case](args.count, args.payload)
        return
    if args.case in ("cold", "cold-floor"):
        cmd = _wiremcp_cmd() if args.case == "cold" else _floor_cmd()
        _warm(cmd, _lines(1, args.payload))
        total = _callgrind(cmd, _lines(1, args.payload))
        print(f"{args.case}: {total / 1e6:.1f} M instructions")
        return
    if args.case in CLIENTS:
        lo, hi = (int(x) for x in args.n.split(",")) if args.n != "1000,3000" else (200, 600)
        per_call = _callgrind_client(args.case, lo, hi, args.inflight)
        print(f"{args.case}: {per_call:,.0f} instructions per call ({args.inflight} in flight, 100 B echo)")
        return
    if args.case in HANDSHAKE:
        from handshake import steps

        cmd = HANDSHAKE[args.case]()
        # bytecode caches written for every module the handshake loads (not only a first call's)
        _warm(cmd, b"".join(line + b"\n" for step in steps(args.era) for line in step.lines))
        idle, total = _callgrind_handshake(cmd, args.era)
        print(f"{args.case} ({args.era}): {idle / 1e6:.1f} M instructions to the call's reply and idle, "
              f"{total / 1e6:.1f} M to exit at end of input")
        return
    lo, hi = (int(x) for x in args.n.split(","))
    if args.case in SERVED:
        a = _callgrind_served(args.case, lo, args.payload)
        b = _callgrind_served(args.case, hi, args.payload)
        print(f"{args.case}: {(b - a) / (hi - lo):,.0f} instructions per request ({args.payload} B, uvicorn included)")
        return
    if args.case in PIPED:
        cmd = PIPED[args.case]()
        _warm(cmd, _lines(1, args.payload))
        a = _callgrind_lockstep(cmd, lo, args.payload)
        b = _callgrind_lockstep(cmd, hi, args.payload)
        print(f"{args.case}: {(b - a) / (hi - lo):,.0f} instructions per request ({args.payload} B)")
        return
    me = [sys.executable, os.path.abspath(__file__), args.case, "--child", "--payload", str(args.payload)]
    _warm([*me, "--count", "1"])
    a = _callgrind([*me, "--count", str(lo)])
    b = _callgrind([*me, "--count", str(hi)])
    print(f"{args.case}: {(b - a) / (hi - lo):,.0f} instructions per request ({args.payload} B)")


if __name__ == "__main__":
    main()
