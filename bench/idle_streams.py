"""Idle streams: what N open, silent SSE streams cost one server process in RSS.

    python bench/idle_streams.py                       # N = 1,000 and 10,000, every contender
    python bench/idle_streams.py --n 1000 --impl wiremcp,floor --json out.json

Two kinds of stream, each opened N times from this one process over raw
non-blocking sockets on one ``selectors`` loop (no client library), on
loopback, one connection per stream:

- ``listen``: a modern (2026-07-28) ``POST subscriptions/listen`` asking for
  list changes; open once its ``notifications/subscriptions/acknowledged``
  event has arrived;
- ``GET``: a 2025-11-25 session (``initialize``, ``notifications/initialized``
  on one keep-alive connection, then closed), then ``GET`` with its
  ``Mcp-Session-Id`` on a new connection: the session's standalone stream;
  open once the 200 head has arrived. The sessions are created first (all
  N), then the GETs sent, so that the figure of the sessions and of the
  streams can be told apart. The floor has no sessions: its GETs open at once.

Contenders: ``wiremcp run examples/everything.py --http`` with its caps
raised to N (``WIREMCP_LIMIT_CONCURRENCY``, ``WIREMCP_MAX_SUBSCRIPTIONS``,
``WIREMCP_MAX_LISTENS_PER_CLIENT``, ``WIREMCP_MAX_SESSIONS``,
``WIREMCP_MAX_SESSIONS_PER_CLIENT``); the official SDK
(``fixtures/official_echo.py``, ``--stateful`` for GET streams; a kind it
does not serve is n/a); the floor, ``fixtures/raw_sse.py`` (a bare ASGI app
holding SSE responses open on the same uvicorn settings). Each (contender,
kind, N) starts a fresh server; RLIMIT_NOFILE is raised to its hard limit
here first, and the server inherits it.

Measured: VmRSS of the server's process tree (``/proc``) after a warm-up
(streams opened and closed once, so that lazy imports are in), then with
all N streams open (after a settle of ``--settle`` seconds), and the
difference per stream in KiB. For GET streams, ``sessions`` is the RSS
with the N sessions made and no stream open yet.
"""

from __future__ import annotations

import argparse
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver  # noqa: E402

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
FIXTURES = BENCH / "fixtures"
OFFICIAL_PY = BENCH / ".venv-official" / "bin" / "python"
WIREMCP_BIN = Path(os.environ.get("WIREMCP_BIN", ROOT / ".venv" / "bin" / "wiremcp"))
WIREMCP_EXAMPLE = ROOT / "examples" / "everything.py"

CONTENDERS = ("wiremcp", "official", "floor")
KINDS = ("listen", "GET")
#: Streams being set up at once (the rest wait): below the server's listen backlog.
SETUP_WINDOW = 256
#: No progress at all for this long fails the run.
STALL_S = 30.0

LISTEN_PARAMS = {"notifications": {"toolsListChanged": True, "resourcesListChanged": True}, "_meta": driver.MODERN_META}


def server_command(contender: str, kind: str) -> list[str]:
    if contender == "wiremcp":
        return [str(WIREMCP_BIN), "run", str(WIREMCP_EXAMPLE), "--http", "--host", "127.0.0.1", "--port", "{port}"]
    if contender == "official":
        cmd = [str(OFFICIAL_PY), str(FIXTURES / "official_echo.py"), "--http", "--host", "127.0.0.1", "--port", "{port}"]
        return cmd + ["--stateful"] if kind == "GET" else cmd + ["--sse"]
    python = WIREMCP_BIN.parent / "python"
    return [str(python), str(FIXTURES / "raw_sse.py"), "--host", "127.0.0.1", "--port", "{port}"]


def server_env(contender: str, n: int) -> dict[str, str]:
    env = dict(os.environ)
    if contender == "wiremcp":
        room = str(n + 2 * SETUP_WINDOW)
        env.update(
            WIREMCP_LIMIT_CONCURRENCY=room,
            WIREMCP_MAX_SUBSCRIPTIONS=room,
            WIREMCP_MAX_LISTENS_PER_CLIENT="off",
            # Twice N: past 90 % of max_sessions live, idle sessions end after 60 s (pressure_idle_timeout),
            # sooner than N sessions are made on a busy machine.
            WIREMCP_MAX_SESSIONS=str(2 * n + 2 * SETUP_WINDOW),
            WIREMCP_MAX_SESSIONS_PER_CLIENT="off",
        )
    return env


def raise_nofile() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kib(pids: Sequence[int]) -> int:
    """VmRSS summed over ``pids`` (KiB)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


# --------------------------------------------------------------------------
# One stream's connection: a small state machine on raw bytes


#: The Host header: the address and port of the server of the run (the official SDK checks both).
_host = ["127.0.0.1"]


def _request(method: str, target: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {_host[0]}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class Conn:
    """One connection: its steps (requests) and where it is."""

    __slots__ = ("sock", "kind", "step", "buf", "out", "session", "status", "error")

    def __init__(self, sock: socket.socket, kind: str) -> None:
        self.sock = sock
        self.kind = kind
        self.step = 0
        self.buf = bytearray()
        self.out = b""
        self.session = ""
        self.status = 0
        self.error = ""

    def first(self, i: int) -> bytes:
        if self.kind == "listen":
            body = driver.rpc("subscriptions/listen", LISTEN_PARAMS, i)
            headers = {
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": driver.MODERN_VERSION, "Mcp-Method": "subscriptions/listen",
            }
            return _request("POST", "/mcp", headers, body)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        return _request("POST", "/mcp", headers, driver.initialize_body(i))

    def initialized(self) -> bytes:
        headers = {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": self.session, "MCP-Protocol-Version": driver.LEGACY_VERSION,
        }
        return _request("POST", "/mcp", headers, driver.INITIALIZED_BODY)

    def get(self) -> bytes:
        headers = {"Accept": "text/event-stream", "Mcp-Session-Id": self.session, "MCP-Protocol-Version": driver.LEGACY_VERSION}
        return _request("GET", "/mcp", headers)

    def reply(self) -> tuple[int, dict[bytes, bytes], bytes] | None:
        """A complete response at the front of ``buf`` (removed from it), or None while it is incomplete.

        An SSE response never completes: its head and first event are enough (``stream_open``)."""
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(buf[:end]).split(b"\r\n")
        status = int(head[0].split()[1])
        headers = {}
        for line in head[1:]:
            k, _, v = line.partition(b":")
            headers[k.strip().lower()] = v.strip()
        start = end + 4
        if b"content-length" in headers:
            size = int(headers[b"content-length"])
            if len(buf) < start + size:
                return None
            body = bytes(buf[start : start + size])
            del buf[: start + size]
            return status, headers, body
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            stop = buf.find(b"\r\n0\r\n\r\n", start)
            if stop < 0:
                if headers.get(b"content-type", b"").startswith(b"text/event-stream") and b"\n\n" in buf[start:]:
                    body = bytes(buf[start:])  # an SSE reply (initialize on an SSE transport): its first event
                    del buf[:]
                    return status, headers, body
                return None
            body = bytes(buf[start:stop])
            del buf[: stop + 7]
            return status, headers, body
        body = bytes(buf[start:])
        del buf[:]
        return status, headers, body


@dataclass
class Opened:
    ok: int = 0
    errors: int = 0
    messages: list[str] = field(default_factory=list)


def _connect(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    return sock


def drive(port: int, conns: list[Conn], n: int, kind: str, phase: str) -> Opened:
    """Take ``n`` connections (made here when ``conns`` is short) through ``phase``:
    ``listen`` (to the acknowledgement), ``session`` (initialize, initialized) or ``get`` (the 200 head).

    At most `SETUP_WINDOW` are in progress at once. Connections are kept in ``conns``."""
    sel = selectors.DefaultSelector()
    done = Opened()
    todo = list(range(n))
    todo.reverse()
    active = 0
    last = time.monotonic()

    def start(i: int) -> None:
        nonlocal active
        if i >= len(conns):
            conns.append(Conn(_connect(port), kind))
        c = conns[i]
        if phase == "get":
            if c.step:  # its session was made on a connection of its own, closed since
                c.sock = _connect(port)
                c.buf.clear()
            c.out = c.get()
            c.step = 3
        else:
            c.out = c.first(i + 1)
            c.step = 1
        sel.register(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
        active += 1

    def finish(c: Conn, error: str = "") -> None:
        nonlocal active
        sel.unregister(c.sock)
        active -= 1
        if error:
            done.errors += 1
            if len(done.messages) < 5:
                done.messages.append(error)
            c.error = error
        else:
            done.ok += 1

    while todo or active:
        while todo and active < SETUP_WINDOW:
            start(todo.pop())
        events = sel.select(1.0)
        if events:
            last = time.monotonic()
        elif time.monotonic() - last > STALL_S:
            for key in list(sel.get_map().values()):
                finish(key.data, f"no progress for {STALL_S:g} s")
            break
        for key, mask in events:
            c: Conn = key.data
            try:
                if mask & selectors.EVENT_WRITE and c.out:
                    sent = c.sock.send(c.out)
                    c.out = c.out[sent:]
                    if not c.out:
                        sel.modify(c.sock, selectors.EVENT_READ, c)
                if mask & selectors.EVENT_READ:
                    data = c.sock.recv(65536)
                    if not data:
                        finish(c, f"connection closed at step {c.step}: {bytes(c.buf[:200])!r}")
                        continue
                    c.buf += data
                    _advance(c, sel, finish)
            except OSError as exc:
                finish(c, f"{type(exc).__name__}: {exc}")
    sel.close()
    return done


def _advance(c: Conn, sel: selectors.BaseSelector, finish: Any) -> None:
    if c.step == 1 and c.kind == "listen":
        if b"subscriptions/acknowledged" in c.buf:
            c.status = 200
            del c.buf[:]
            finish(c)
        elif b'"error"' in c.buf or (
            c.buf.startswith(b"HTTP/1.1 ") and not c.buf.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in c.buf
        ):
            finish(c, f"listen refused: {bytes(c.buf[:300])!r}")
        return
    got = c.reply() if c.step in (1, 2) else None
    if c.step == 1 and got is not None:  # initialize
        status, headers, body = got
        session = headers.get(b"mcp-session-id")
        if status != 200 or session is None:
            finish(c, f"initialize: {status} {body[:200]!r}")
            return
        c.session = session.decode()
        c.out = c.initialized()
        c.step = 2
        sel.modify(c.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, c)
    elif c.step == 2 and got is not None:  # notifications/initialized
        if got[0] not in (200, 202):
            finish(c, f"initialized: {got[0]} {got[2][:200]!r}")
            return
        finish(c)
        c.sock.close()  # the GET goes on a new connection (this one would time out while the others are made)
    elif c.step == 3 and b"\r\n\r\n" in c.buf:  # the GET's head
        if not c.buf.startswith(b"HTTP/1.1 200"):
            finish(c, f"GET: {bytes(c.buf[:300])!r}")
            return
        del c.buf[:]
        finish(c)


# --------------------------------------------------------------------------
# One run


@dataclass
class Result:
    impl: str
    kind: str
    n: int
    available: bool = True
    ok: bool = True
    opened: int = 0
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)
    rss_before_kib: int = 0
    rss_sessions_kib: int = 0  # GET: the N sessions made, no stream open
    rss_open_kib: int = 0
    kib_per_stream: float = 0.0
    kib_per_get_stream: float = 0.0  # GET: the streams alone, over the sessions
    setup_s: float = 0.0
    command: list[str] = field(default_factory=list)


def _close(conns: list[Conn]) -> None:
    for c in conns:
        c.sock.close()
    conns.clear()


def run_one(impl: str, kind: str, n: int, settle: float, warmup: int = 50) -> Result:
    port = driver.free_port()
    cmd = [c.replace("{port}", str(port)) for c in server_command(impl, kind)]
    res = Result(impl, kind, n, command=cmd)
    _host[0] = f"127.0.0.1:{port}"
    fd, err_path = tempfile.mkstemp(prefix="idle-streams-", suffix=".log")
    with os.fdopen(fd, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                cwd=str(ROOT), env=server_env(impl, n))
    server = driver.ServerProc(proc, time.perf_counter(), err_path, port)
    conns: list[Conn] = []
    try:
        driver.wait_port(port, proc)
        # The floor has no sessions: its GET streams open at once.
        phases = ("listen",) if kind == "listen" else ("get",) if impl == "floor" else ("session", "get")
        # Warm-up: the same streams, opened and closed (lazy imports, first allocations).
        for phase in phases:
            w = drive(port, conns, warmup, kind, phase)
            if w.errors:
                res.available = False
                res.error_messages = w.messages
                return res
        _close(conns)
        time.sleep(settle)
        pids = driver.process_tree(proc.pid)
        res.rss_before_kib = rss_kib(pids)
        t0 = time.perf_counter()
        for phase in phases:
            got = drive(port, conns, n, kind, phase)
            res.errors += got.errors
            res.error_messages += got.messages
            if phase == "session":
                time.sleep(settle)
                res.rss_sessions_kib = rss_kib(pids)
            if phase != "session":
                res.opened = got.ok
        res.setup_s = round(time.perf_counter() - t0, 2)
        time.sleep(settle)
        res.rss_open_kib = rss_kib(driver.process_tree(proc.pid))
        res.ok = res.errors == 0 and res.opened == n
        res.kib_per_stream = (res.rss_open_kib - res.rss_before_kib) / n
        if kind == "GET":
            res.kib_per_get_stream = (res.rss_open_kib - res.rss_sessions_kib) / n
    except driver.NotAvailable as exc:
        res.available = False
        res.error_messages.append(f"{exc}: {server.stderr_tail(400)}")
    finally:
        _close(conns)
        server.stop()
    return res


# --------------------------------------------------------------------------
# The table


#: The target per stream (KiB of server RSS).
TARGET_KIB = 8.0


def build_table(results: list[dict[str, Any]]) -> str:
    header = "| streams | wiremcp | official | floor | wiremcp − floor | target | |"
    lines = [header, "|---|---:|---:|---:|---:|---|---|"]
    keys = sorted({(r["kind"], r["n"]) for r in results}, key=lambda k: (KINDS.index(k[0]), k[1]))
    for kind, n in keys:
        cells: dict[str, str] = {}
        values: dict[str, float] = {}
        for impl in CONTENDERS:
            got = [r for r in results if r["impl"] == impl and r["kind"] == kind and r["n"] == n]
            if not got:
                cells[impl] = "—"
            elif not got[0]["available"]:
                cells[impl] = "n/a"
            elif not got[0]["ok"]:
                cells[impl] = f"FAILED ({got[0]['opened']:,} of {n:,} open, {got[0]['errors']} errors)"
            else:
                r = got[0]
                values[impl] = r["kib_per_stream"]
                before, sessions, after = (r[k] / 1024 for k in ("rss_before_kib", "rss_sessions_kib", "rss_open_kib"))
                extra = f", sessions {sessions:.1f}" if sessions else ""
                cells[impl] = f"{r['kib_per_stream']:.1f} KiB ({before:.1f}{extra} → {after:.1f} MiB)"
        gap = f"{values['wiremcp'] - values['floor']:.1f} KiB" if "wiremcp" in values and "floor" in values else "—"
        verdict = "—" if "wiremcp" not in values else ("met" if values["wiremcp"] <= TARGET_KIB else "**not met**")
        label = f"{n:,} idle {'subscriptions/listen' if kind == 'listen' else 'legacy GET'} streams"
        lines.append(f"| {label} | {cells['wiremcp']} | {cells['official']} | {cells['floor']} | {gap} | ≤{TARGET_KIB:g} KiB | {verdict} |")
    legend = (
        "\nserver RSS per open stream (KiB; VmRSS of the process tree, all streams open minus after warm-up), "
        "and RSS before → with the streams open; GET: a 2025-11-25 session per stream (initialize + initialized, "
        "then GET), its session counted in the stream's cost. floor = `fixtures/raw_sse.py`."
    )
    return "\n".join(lines) + "\n" + legend + "\n"


def run(contenders: Sequence[str], sizes: Sequence[int], kinds: Sequence[str] = KINDS, settle: float = 1.0,
        log: Any = None) -> list[dict[str, Any]]:
    """Every (kind, N, contender), a fresh server each; the results as dicts."""
    limit = raise_nofile()
    out: list[dict[str, Any]] = []
    for kind in kinds:
        for n in sizes:
            if n + 64 > limit:
                print(f"idle streams: N={n} needs {n + 64} file descriptors, RLIMIT_NOFILE is {limit}; skipped",
                      file=sys.stderr)
                continue
            for impl in contenders:
                if impl == "official" and not OFFICIAL_PY.exists():
                    r = Result(impl, kind, n, available=False, error_messages=["bench/.venv-official is missing"])
                else:
                    r = run_one(impl, kind, n, settle)
                out.append(asdict(r))
                if log is not None:
                    status = "ok" if r.ok and r.available else ("n/a" if not r.available else "FAILED")
                    print(f"idle {kind:6} N={n:<6} {impl:8} {r.kib_per_stream:6.1f} KiB/stream "
                          f"({r.rss_before_kib / 1024:.1f} → {r.rss_open_kib / 1024:.1f} MiB, {r.setup_s} s) {status} "
                          f"{'; '.join(r.error_messages)[:300]}", file=log)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--impl", default=",".join(CONTENDERS), help="comma-separated among wiremcp, official, floor")
    ap.add_argument("--n", default="1000,10000", help="stream counts, comma-separated (default 1000,10000)")
    ap.add_argument("--kind", default=",".join(KINDS), help="listen, GET, or both: listen,GET (the default)")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds before each RSS reading")
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args(argv)
    contenders = [c for c in CONTENDERS if c in args.impl.split(",")]
    sizes = [int(s) for s in args.n.split(",")]
    asked = args.kind.split(",")
    if not asked or set(asked) - set(KINDS):
        ap.error(f"--kind: one or more of {', '.join(KINDS)}, comma-separated; got {args.kind!r}")
    kinds = [k for k in KINDS if k in asked]
    results = run(contenders, sizes, kinds, args.settle, log=sys.stderr)
    table = build_table(results)
    print(table)
    if args.json_path:
        Path(args.json_path).write_bytes(driver.dumps({"results": results, "table": table}))
    return 0 if all(r["ok"] for r in results if r["available"]) else 1


if __name__ == "__main__":
    sys.exit(main())
