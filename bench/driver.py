"""A neutral MCP load driver that speaks raw JSON-RPC.

It imports neither wiremcp nor the official SDK: only the standard library
and, when it is installed, orjson (for decoding replies; it falls back to
``json``). The same code drives every server, so client overhead is the same
on both sides of a comparison.

Transports
    stdio   spawn the server, write newline-delimited JSON-RPC to its stdin,
            read replies from its stdout. ``inflight`` requests are kept
            outstanding on the one pipe and correlated by id.
    http    raw HTTP/1.1 keep-alive over ``inflight`` TCP connections to
            ``/mcp``, one request outstanding per connection. Replies may be
            ``application/json`` or ``text/event-stream``; both are accepted.

Both transports run in one thread on a ``selectors`` loop with non-blocking
file descriptors, so a 1 MB request can be written while a 1 MB reply is
read (no pipe deadlock) and no thread hops are added on the client side.

Eras
    modern  protocol revision 2026-07-28: every request carries
            ``params._meta`` with the protocol version, client capabilities
            and client info; HTTP requests carry ``MCP-Protocol-Version``,
            ``Mcp-Method`` and ``Mcp-Name``.
    legacy  protocol revision 2025-11-25: ``initialize`` then
            ``notifications/initialized``, then plain ``tools/call``. Over
            HTTP the ``Mcp-Session-Id`` the server returns, if any, is sent
            back on every later request.

Every reply is checked (id known, ``result.content[0].text`` equals the
payload); a run with any error is marked failed.

Command line (one case, JSON result on stdout)::

    python bench/driver.py --transport stdio --era modern --inflight 16 \
        --payload 10000 --duration 2 -- bench/.venv-official/bin/python \
        bench/fixtures/official_echo.py

For HTTP, ``{port}`` in the command is replaced by a free port.
"""

from __future__ import annotations

import argparse
import http.client
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

try:
    import orjson

    loads: Callable[[bytes | bytearray | memoryview | str], Any] = orjson.loads

    def dumps(obj: Any) -> bytes:
        return orjson.dumps(obj)

except ImportError:  # pragma: no cover - orjson is a wiremcp dependency
    import json

    def loads(data: bytes | bytearray | memoryview | str) -> Any:
        if isinstance(data, memoryview):
            data = bytes(data)
        return json.loads(data)

    def dumps(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


MODERN_VERSION = "2026-07-28"
LEGACY_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "bench", "version": "0"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
}
ERAS = ("modern", "legacy")
TRANSPORTS = ("stdio", "http")

#: No reply at all for this long fails the case (the server hung or died).
REPLY_TIMEOUT_S = 30.0
#: How long an HTTP server may take to accept its first connection.
HTTP_READY_TIMEOUT_S = 30.0
#: How long a server may take to exit after stdin is closed / SIGTERM.
SHUTDOWN_GRACE_S = 5.0
#: Keep at most this many error messages per run (the count is exact).
MAX_ERROR_MESSAGES = 10

CLK_TCK = os.sysconf("SC_CLK_TCK")

#: Bytes read per read()/recv() call, into one buffer allocated once (the
#: driver is single-threaded). Reading into a fresh 1 MiB bytes object per
#: call instead cost the driver ~10 µs per reply (measured: client CPU 31 ->
#: 21 µs per request on stdio at 1 in flight), for every server alike.
READ_SIZE = 1 << 20
_READ_BUF = bytearray(READ_SIZE)
_READ_VIEW = memoryview(_READ_BUF)


class NotAvailable(Exception):
    """The server command could not be started (exited before answering),
    or the server does not serve the requested era."""


#: Prefix of the NotAvailable reason when ``initialize`` is refused.
LEGACY_ERA_UNSUPPORTED = "legacy era (2025-11-25) not supported"


class CaseError(Exception):
    """A fatal error that ends a case (timeout, broken pipe, bad framing)."""


# --------------------------------------------------------------------------
# Payloads and requests


def make_payload(size: int) -> str:
    """ASCII text of exactly ``size`` bytes (no escapes needed in JSON)."""
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "
    reps = size // len(alphabet) + 1
    return (alphabet * reps)[:size]


class RequestFactory:
    """Builds ``tools/call`` request bodies cheaply: the params are encoded
    once and only the id is spliced in per request."""

    def __init__(self, era: str, payload: str) -> None:
        params: dict[str, Any] = {"name": "echo", "arguments": {"text": payload}}
        if era == "modern":
            params["_meta"] = MODERN_META
        self._head = b'{"jsonrpc":"2.0","id":'
        self._tail = b',"method":"tools/call","params":' + dumps(params) + b"}"

    def body(self, req_id: int) -> bytes:
        return b"".join((self._head, str(req_id).encode(), self._tail))


def check_reply(msg: Any, req_id: int, payload: str) -> str | None:
    """None if ``msg`` is a correct echo reply to ``req_id``, else why not."""
    if not isinstance(msg, dict):
        return f"reply is not an object: {type(msg).__name__}"
    if msg.get("id") != req_id:
        return f"reply id {msg.get('id')!r} != request id {req_id!r}"
    if "error" in msg:
        err = msg["error"]
        return f"JSON-RPC error {err.get('code')!r}: {str(err.get('message'))[:200]}"
    result: Any = msg.get("result")
    try:
        text = result["content"][0]["text"]
    except (TypeError, KeyError, IndexError):
        return f"result has no content[0].text: {str(result)[:200]}"
    if result.get("isError"):
        return f"tool error: {str(text)[:200]}"
    if text != payload:
        return f"echoed text differs (len {len(text)} vs {len(payload)})"
    return None


def rpc(method: str, params: dict[str, Any] | None, req_id: int | None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if req_id is not None:
        msg["id"] = req_id
    if params is not None:
        msg["params"] = params
    return dumps(msg)


def initialize_body(req_id: int) -> bytes:
    return rpc(
        "initialize",
        {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        req_id,
    )


INITIALIZED_BODY = rpc("notifications/initialized", None, None)


# --------------------------------------------------------------------------
# Process accounting (/proc)


def _proc_table() -> dict[int, int]:
    """pid -> ppid for every live process."""
    table: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rindex(b")") + 2 :].split()
        table[int(name)] = int(rest[1])
    return table


def process_tree(root: int) -> list[int]:
    """``root`` and all its live descendants (a wrapper command's children)."""
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def cpu_seconds(pids: Sequence[int]) -> float:
    """utime+stime (+cutime+cstime, so reaped children still count) summed
    over ``pids``, in seconds."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        rest = data[data.rindex(b")") + 2 :].split()
        # fields 14..17 of stat(5); rest[0] is field 3 (state)
        ticks += int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])
    return ticks / CLK_TCK


def peak_rss_kib(pids: Sequence[int]) -> int:
    """VmHWM summed over ``pids`` (kB)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


# --------------------------------------------------------------------------
# Transports. Each has submit(req_id, body) and poll(timeout) -> completions,
# where a completion is (req_id, decoded JSON-RPC message or None, error|None).


Completion = tuple[int, Any, "str | None"]


class StdioChannel:
    """Non-blocking newline-delimited JSON-RPC over a child's stdin/stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.wfd = proc.stdin.fileno()
        self.rfd = proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.rfd, selectors.EVENT_READ, "r")
        self.out: deque[memoryview] = deque()
        self.writing = False
        self.buf = bytearray()
        self.scan = 0
        self.eof = False

    def close(self) -> None:
        self.sel.close()

    def _want_write(self, on: bool) -> None:
        if on == self.writing:
            return
        self.writing = on
        if on:
            self.sel.register(self.wfd, selectors.EVENT_WRITE, "w")
        else:
            self.sel.unregister(self.wfd)

    def _flush(self) -> None:
        while self.out:
            chunk = self.out[0]
            try:
                n = os.write(self.wfd, chunk)
            except BlockingIOError:
                break
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise CaseError(f"server stdin closed: {exc}") from None
            if n == len(chunk):
                self.out.popleft()
            else:
                self.out[0] = chunk[n:]
                break
        self._want_write(bool(self.out))

    def send_line(self, data: bytes) -> None:
        self.out.append(memoryview(data + b"\n"))
        if len(self.out) == 1:
            self._flush()

    # The load loop's transport interface
    def submit(self, req_id: int, body: bytes) -> None:
        self.send_line(body)

    def poll(self, timeout: float) -> list[Completion]:
        comps: list[Completion] = []
        for key, _ in self.sel.select(timeout):
            if key.data == "w":
                self._flush()
                continue
            while True:
                try:
                    n = os.readv(self.rfd, (_READ_BUF,))
                except BlockingIOError:
                    break
                if not n:
                    self.eof = True
                    self.sel.unregister(self.rfd)
                    break
                self.buf += _READ_VIEW[:n]
                if n < READ_SIZE:
                    break
            self._lines(comps)
        if self.eof and not comps:
            raise CaseError(f"server closed stdout (exit code {self.proc.poll()})")
        return comps

    def _lines(self, comps: list[Completion]) -> None:
        buf = self.buf
        start = 0
        while True:
            nl = buf.find(b"\n", max(self.scan, start))
            if nl < 0:
                self.scan = len(buf)
                break
            line = memoryview(buf)[start:nl]
            start = nl + 1
            self.scan = start
            if not line.nbytes:
                line.release()
                continue
            try:
                msg = loads(line)
            except ValueError as exc:
                line.release()
                raise CaseError(f"server wrote a line that is not JSON: {exc}") from None
            line.release()
            if not isinstance(msg, dict):
                raise CaseError("server wrote a JSON value that is not an object")
            if "id" not in msg or msg.get("method") is not None:
                continue  # notification (log, progress) or server request: ignore
            rid = msg["id"]
            comps.append((rid if isinstance(rid, int) else -1, msg, None))
        if start:
            del buf[:start]
            self.scan -= start

    def wait_reply(self, req_id: int, timeout: float = REPLY_TIMEOUT_S) -> Any:
        """Blocking helper for handshakes: the reply to ``req_id``."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CaseError(f"no reply to request {req_id} within {timeout:.0f} s")
            for rid, msg, _ in self.poll(min(left, 0.5)):
                if rid == req_id:
                    return msg
            if self.proc.poll() is not None and not self.out:
                # drain what is left, then give up
                for rid, msg, _ in self.poll(0):
                    if rid == req_id:
                        return msg
                raise CaseError(f"server exited with code {self.proc.returncode}")


class _HttpConn:
    """One keep-alive HTTP/1.1 connection with at most one request in flight."""

    __slots__ = ("sock", "out", "buf", "req_id", "head", "need", "chunked", "body", "close_after", "status", "mask")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.out: memoryview | None = None
        self.buf = bytearray()
        self.req_id = -1
        self.mask = 0  # the events the selector watches for this socket (0: not registered)
        self.reset()

    def reset(self) -> None:
        self.head: dict[bytes, bytes] | None = None
        self.status = 0
        self.need = -1
        self.chunked = False
        self.body = bytearray()
        self.close_after = False


def parse_sse(data: bytes | bytearray) -> list[Any]:
    """The JSON values of every ``data:`` event in an SSE body."""
    events: list[Any] = []
    text = bytes(data).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for block in text.split(b"\n\n"):
        lines = [ln[5:] for ln in block.split(b"\n") if ln.startswith(b"data:")]
        if not lines:
            continue
        payload = b"\n".join(ln[1:] if ln.startswith(b" ") else ln for ln in lines)
        events.append(loads(payload))
    return events


def decode_http_reply(status: int, headers: dict[bytes, bytes], body: bytes | bytearray, req_id: int) -> tuple[Any, str | None]:
    """(JSON-RPC reply, error) from an HTTP response to request ``req_id``."""
    ctype = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
    try:
        if ctype == b"text/event-stream":
            msg = None
            for ev in parse_sse(body):
                if isinstance(ev, dict) and ev.get("id") == req_id and "method" not in ev:
                    msg = ev
            if msg is None:
                return None, f"HTTP {status}: SSE stream ended without the reply"
        else:
            msg = loads(body) if body else None
    except ValueError as exc:
        return None, f"HTTP {status}: body is not JSON ({exc})"
    if status != 200:
        return msg, f"HTTP {status}: {bytes(body[:200])!r}"
    return msg, None


class HttpChannel:
    """``n`` keep-alive connections to one MCP endpoint, non-blocking."""

    def __init__(self, host: str, port: int, n: int, extra_headers: dict[str, str], path: str = "/mcp") -> None:
        self.addr = (host, port)
        self.sel = selectors.DefaultSelector()
        self.idle: list[_HttpConn] = []
        self.conns: list[_HttpConn] = []
        self.reconnects = 0
        hdr = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json",
               "Accept: application/json, text/event-stream"]
        hdr += [f"{k}: {v}" for k, v in extra_headers.items()]
        self.header_prefix = ("\r\n".join(hdr) + "\r\nContent-Length: ").encode("latin-1")
        for _ in range(n):
            conn = _HttpConn(self._connect())
            self.conns.append(conn)
            self.idle.append(conn)

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self.addr, timeout=10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        return sock

    def close(self) -> None:
        for conn in self.conns:
            try:
                self.sel.unregister(conn.sock)
            except (KeyError, ValueError):
                pass
            conn.sock.close()
        self.sel.close()

    def submit(self, req_id: int, body: bytes) -> None:
        if not self.idle:
            raise CaseError("no idle HTTP connection (more in flight than connections)")
        conn = self.idle.pop()
        conn.req_id = req_id
        conn.reset()
        conn.out = memoryview(b"".join((self.header_prefix, str(len(body)).encode(), b"\r\n\r\n", body)))
        self._send(conn)

    def _send(self, conn: _HttpConn) -> None:
        assert conn.out is not None
        try:
            while conn.out:
                n = conn.sock.send(conn.out)
                conn.out = conn.out[n:]
        except BlockingIOError:
            pass
        except OSError as exc:
            raise CaseError(f"HTTP send failed: {exc}") from None
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.out else 0)
        if events != conn.mask:  # one epoll_ctl only when the watched events change
            if conn.mask:
                self.sel.modify(conn.sock, events, conn)
            else:
                self.sel.register(conn.sock, events, conn)
            conn.mask = events

    def poll(self, timeout: float) -> list[Completion]:
        comps: list[Completion] = []
        for key, mask in self.sel.select(timeout):
            conn: _HttpConn = key.data
            if mask & selectors.EVENT_WRITE and conn.out:
                self._send(conn)
            if not mask & selectors.EVENT_READ:
                continue
            while True:
                try:
                    n = conn.sock.recv_into(_READ_BUF)
                except BlockingIOError:
                    break
                except OSError as exc:
                    raise CaseError(f"HTTP recv failed: {exc}") from None
                if not n:
                    raise CaseError("server closed an HTTP connection with a request in flight")
                conn.buf += _READ_VIEW[:n]
                if n < READ_SIZE:
                    break
            done = self._parse(conn)
            if done is not None:
                comps.append(done)
        return comps

    def _parse(self, conn: _HttpConn) -> Completion | None:
        buf = conn.buf
        if conn.head is None:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return None
            lines = bytes(buf[:end]).split(b"\r\n")
            del buf[: end + 4]
            parts = lines[0].split(b" ", 2)
            try:
                conn.status = int(parts[1])
            except (IndexError, ValueError):
                raise CaseError(f"bad HTTP status line {lines[0]!r}") from None
            head: dict[bytes, bytes] = {}
            for ln in lines[1:]:
                k, _, v = ln.partition(b":")
                head[k.strip().lower()] = v.strip()
            conn.head = head
            conn.close_after = head.get(b"connection", b"").lower() == b"close" or parts[0] == b"HTTP/1.0"
            if b"chunked" in head.get(b"transfer-encoding", b"").lower():
                conn.chunked = True
            elif b"content-length" in head:
                conn.need = int(head[b"content-length"])
            elif conn.status in (204, 304) or 100 <= conn.status < 200:
                conn.need = 0
            else:
                conn.close_after = True  # body until EOF: not supported in the hot loop
                raise CaseError("HTTP response without Content-Length or chunked encoding")
        if conn.chunked:
            while True:
                if conn.need < 0:
                    eol = buf.find(b"\r\n")
                    if eol < 0:
                        return None
                    size = int(bytes(buf[:eol]).split(b";")[0], 16)
                    if size == 0:
                        # trailer section ends with an empty line
                        end = buf.find(b"\r\n\r\n", eol)
                        if end < 0 and bytes(buf[eol : eol + 4]) != b"\r\n\r\n":
                            return None
                        del buf[: (end + 4 if end >= 0 else eol + 4)]
                        break
                    del buf[: eol + 2]
                    conn.need = size
                if len(buf) < conn.need + 2:
                    return None
                conn.body += buf[: conn.need]
                del buf[: conn.need + 2]
                conn.need = -1
            body: bytes | bytearray = conn.body
        else:
            if len(buf) < conn.need:
                return None
            body = bytes(buf[: conn.need])
            del buf[: conn.need]
        msg, err = decode_http_reply(conn.status, conn.head, body, conn.req_id)
        req_id = conn.req_id
        # reconnect if the server closes, or answered before reading the whole request
        reconnect = conn.close_after or bool(conn.out)
        conn.out = None
        conn.reset()
        if reconnect:
            self.sel.unregister(conn.sock)
            conn.mask = 0
            conn.sock.close()
            conn.sock = self._connect()
            conn.buf = bytearray()
            self.reconnects += 1
        elif conn.mask != selectors.EVENT_READ:  # answered before the request was all sent
            self.sel.modify(conn.sock, selectors.EVENT_READ, conn)
            conn.mask = selectors.EVENT_READ
        self.idle.append(conn)
        return (req_id, msg, err)


# --------------------------------------------------------------------------
# Blocking helpers for HTTP setup (handshake, cold start)


#: The headers of every POST to an MCP endpoint, before the request's own.
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def http_post(host: str, port: int, body: bytes, headers: dict[str, str], timeout: float = REPLY_TIMEOUT_S) -> tuple[int, dict[bytes, bytes], bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        hdrs = {**POST_HEADERS, **headers}
        conn.request("POST", "/mcp", body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, {k.lower().encode(): v.encode("latin-1") for k, v in resp.getheaders()}, data
    finally:
        conn.close()


def modern_http_headers() -> dict[str, str]:
    return {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}


# --------------------------------------------------------------------------
# Server processes


@dataclass
class ServerProc:
    proc: subprocess.Popen[bytes]
    t_spawn: float
    stderr_path: str
    port: int | None = None

    def stderr_tail(self, n: int = 800) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                data = f.read()
        except OSError:
            return ""
        return data[-n:].decode("utf-8", "replace").strip()

    def stop(self) -> None:
        p = self.proc
        if p.poll() is None:
            try:
                if p.stdin is not None:
                    p.stdin.close()
            except OSError:
                pass
            if self.port is not None:
                p.terminate()
            try:
                p.wait(SHUTDOWN_GRACE_S)
            except subprocess.TimeoutExpired:
                p.terminate()
                try:
                    p.wait(SHUTDOWN_GRACE_S)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for stream in (p.stdin, p.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            os.unlink(self.stderr_path)
        except OSError:
            pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = HTTP_READY_TIMEOUT_S) -> None:
    """Return once ``port`` accepts a connection; `NotAvailable` if ``proc`` exits first or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise NotAvailable(f"exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise NotAvailable("did not accept a connection in time")


def spawn(cmd: Sequence[str], transport: str, cwd: str | None = None) -> ServerProc:
    port = None
    if transport == "http":
        port = free_port()
        cmd = [c.replace("{port}", str(port)) for c in cmd]
    fd, err_path = tempfile.mkstemp(prefix="bench-stderr-", suffix=".log")
    with os.fdopen(fd, "wb") as err:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(
                list(cmd),
                stdin=subprocess.PIPE if transport == "stdio" else subprocess.DEVNULL,
                stdout=subprocess.PIPE if transport == "stdio" else subprocess.DEVNULL,
                stderr=err,
                cwd=cwd,
                bufsize=0,
            )
        except OSError as exc:
            os.unlink(err_path)
            raise NotAvailable(f"cannot start {cmd[0]}: {exc}") from None
    return ServerProc(proc, t0, err_path, port)


# --------------------------------------------------------------------------
# One case


@dataclass
class CaseResult:
    impl: str = ""
    transport: str = ""
    era: str = ""
    inflight: int = 1
    payload: int = 0
    ok: bool = False
    available: bool = True
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)
    requests: int = 0
    window_s: float = 0.0
    rps: float = 0.0
    p50_us: float = 0.0
    p99_us: float = 0.0
    server_cpu_us_per_req: float = 0.0
    client_cpu_us_per_req: float = 0.0
    cold_start_ms: float = 0.0
    peak_rss_mib: float = 0.0
    http_reconnects: int = 0

    def error(self, message: str) -> None:
        self.errors += 1
        if len(self.error_messages) < MAX_ERROR_MESSAGES:
            self.error_messages.append(message)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = (len(sorted_values) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def _check_initialize(reply: Any, http_error: str | None = None) -> None:
    """A server that answers ``initialize`` with a JSON-RPC error (or an
    HTTP error carrying one) does not serve the legacy era: that is a
    missing feature, reported as not available rather than as a failure."""
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        err = reply["error"]
        raise NotAvailable(
            f"{LEGACY_ERA_UNSUPPORTED}: initialize -> error {err.get('code')}: {str(err.get('message'))[:200]}"
        )
    if http_error or not isinstance(reply, dict) or "result" not in reply:
        raise CaseError(f"initialize failed: {http_error or str(reply)[:300]}")


def _stdio_start(server: ServerProc, era: str, first: RequestFactory, payload: str) -> StdioChannel:
    """Send the first request(s) right after spawn; return once the first
    ``tools/call`` is answered. Raises NotAvailable if the server dies first."""
    chan = StdioChannel(server.proc)
    try:
        if era == "legacy":
            chan.send_line(initialize_body(0))
            init = chan.wait_reply(0)
            _check_initialize(init)
            chan.send_line(INITIALIZED_BODY)
        chan.send_line(first.body(1))
        reply = chan.wait_reply(1)
    except CaseError as exc:
        try:
            server.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            pass
        if server.proc.poll() is not None:
            chan.close()
            raise NotAvailable(f"{exc}; stderr: {server.stderr_tail()}") from None
        raise
    problem = check_reply(reply, 1, payload)
    if problem:
        raise CaseError(f"first tools/call: {problem}")
    return chan


def _http_start(server: ServerProc, era: str, first: RequestFactory, payload: str) -> dict[str, str]:
    """Wait for the port, then do the handshake (legacy) and a first
    ``tools/call``; returns the headers for the load phase."""
    assert server.port is not None
    deadline = time.monotonic() + HTTP_READY_TIMEOUT_S
    while True:
        if server.proc.poll() is not None:
            raise NotAvailable(f"exited with code {server.proc.returncode} before listening; stderr: {server.stderr_tail()}")
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise NotAvailable(f"not listening on port {server.port} after {HTTP_READY_TIMEOUT_S:.0f} s") from None
            time.sleep(0.002)
    if era == "modern":
        headers = modern_http_headers()
    else:
        status, h, body = http_post("127.0.0.1", server.port, initialize_body(0), {})
        msg, err = decode_http_reply(status, h, body, 0)
        _check_initialize(msg, err)
        headers = {"MCP-Protocol-Version": LEGACY_VERSION}
        if b"mcp-session-id" in h:
            headers["Mcp-Session-Id"] = h[b"mcp-session-id"].decode("latin-1")
        status, h, body = http_post("127.0.0.1", server.port, INITIALIZED_BODY, headers)
        if status not in (200, 202, 204):
            raise CaseError(f"notifications/initialized got HTTP {status}: {body[:200]!r}")
    status, h, body = http_post("127.0.0.1", server.port, first.body(1), headers)
    msg, err = decode_http_reply(status, h, body, 1)
    problem = err or check_reply(msg, 1, payload)
    if problem:
        raise CaseError(f"first tools/call: {problem}")
    return headers


def run_case(
    cmd: Sequence[str],
    *,
    transport: str,
    era: str,
    inflight: int,
    payload_size: int,
    duration: float,
    warmup: float,
    min_requests: int = 10,
    cwd: str | None = None,
    impl: str = "",
) -> CaseResult:
    """Spawn the server, measure its cold start, load it, stop it."""
    res = CaseResult(impl=impl, transport=transport, era=era, inflight=inflight, payload=payload_size)
    payload = make_payload(payload_size)
    small = make_payload(100)
    factory = RequestFactory(era, payload)
    first = RequestFactory(era, small)
    try:
        server = spawn(cmd, transport, cwd)
    except NotAvailable as exc:
        res.available = False
        res.error_messages.append(str(exc))
        return res
    chan: StdioChannel | HttpChannel | None = None
    try:
        try:
            if transport == "stdio":
                chan = _stdio_start(server, era, first, small)
            else:
                headers = _http_start(server, era, first, small)
        except NotAvailable as exc:
            res.available = False
            res.error_messages.append(str(exc))
            return res
        res.cold_start_ms = (time.perf_counter() - server.t_spawn) * 1e3
        if transport == "http":
            assert server.port is not None
            chan = HttpChannel("127.0.0.1", server.port, inflight, headers)
        assert chan is not None
        _load(chan, server, res, factory, payload, inflight, duration, warmup, min_requests)
        if isinstance(chan, HttpChannel):
            res.http_reconnects = chan.reconnects
    except CaseError as exc:
        res.error(str(exc))
        tail = server.stderr_tail(400)
        if tail:
            res.error_messages.append(f"server stderr: {tail}")
    finally:
        if chan is not None:
            chan.close()
        server.stop()
    res.ok = res.available and res.errors == 0 and res.requests > 0
    return res


def _load(
    chan: StdioChannel | HttpChannel,
    server: ServerProc,
    res: CaseResult,
    factory: RequestFactory,
    payload: str,
    inflight: int,
    duration: float,
    warmup: float,
    min_requests: int,
) -> None:
    pid = server.proc.pid
    perf = time.perf_counter
    outstanding: dict[int, float] = {}
    next_id = 2
    latencies: list[float] = []
    WARM, MEASURE, DRAIN = 0, 1, 2
    phase = WARM
    t_begin = perf()
    warm_end = t_begin + warmup
    t0 = t1 = 0.0
    cpu0 = ccpu0 = 0.0
    pids: list[int] = [pid]
    last_progress = t_begin

    def send() -> None:
        nonlocal next_id
        rid = next_id
        next_id += 1
        outstanding[rid] = perf()
        chan.submit(rid, factory.body(rid))

    for _ in range(inflight):
        send()
    while outstanding:
        comps = chan.poll(1.0)
        now = perf()
        if not comps:
            if now - last_progress > REPLY_TIMEOUT_S:
                raise CaseError(f"no reply for {REPLY_TIMEOUT_S:.0f} s ({len(outstanding)} outstanding)")
            if server.proc.poll() is not None:
                raise CaseError(f"server exited with code {server.proc.returncode}")
            continue
        last_progress = now
        if phase == MEASURE and now - t0 > max(10 * duration, duration + 60):
            raise CaseError(f"only {len(latencies)} replies in {now - t0:.0f} s")
        for rid, msg, err in comps:
            sent = outstanding.pop(rid, None)
            if sent is None:
                res.error(f"reply to unknown id {msg.get('id') if isinstance(msg, dict) else rid!r}")
                continue
            problem = err or check_reply(msg, rid, payload)
            if problem:
                res.error(problem)
            elif phase == MEASURE:
                latencies.append(now - sent)
        if phase == WARM and now >= warm_end:
            phase = MEASURE
            pids = process_tree(pid)
            t0 = perf()
            cpu0 = cpu_seconds(pids)
            ccpu0 = time.process_time()
        elif phase == MEASURE and now - t0 >= duration and (len(latencies) >= min_requests or res.errors):
            t1 = perf()
            cpu1 = cpu_seconds(pids)
            ccpu1 = time.process_time()
            phase = DRAIN
        if phase != DRAIN:
            while len(outstanding) < inflight:
                send()
    res.requests = len(latencies)
    res.window_s = t1 - t0
    if res.requests:
        latencies.sort()
        res.rps = res.requests / res.window_s
        res.p50_us = _percentile(latencies, 0.50) * 1e6
        res.p99_us = _percentile(latencies, 0.99) * 1e6
        res.server_cpu_us_per_req = (cpu1 - cpu0) / res.requests * 1e6
        res.client_cpu_us_per_req = (ccpu1 - ccpu0) / res.requests * 1e6
    res.peak_rss_mib = peak_rss_kib(process_tree(pid)) / 1024


# --------------------------------------------------------------------------
# CLI


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run one MCP load case; print the result as JSON.")
    ap.add_argument("--transport", choices=TRANSPORTS, default="stdio")
    ap.add_argument("--era", choices=ERAS, default="modern")
    ap.add_argument("--inflight", type=int, default=1)
    ap.add_argument("--payload", type=int, default=100, help="echo text size in bytes")
    ap.add_argument("--duration", type=float, default=2.0, help="measured window, seconds")
    ap.add_argument("--warmup", type=float, default=0.5, help="seconds of load before the window")
    ap.add_argument("--min-requests", type=int, default=10)
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="server command (after --); {port} is replaced for http")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("give the server command after --")
    res = run_case(
        cmd,
        transport=args.transport,
        era=args.era,
        inflight=args.inflight,
        payload_size=args.payload,
        duration=args.duration,
        warmup=args.warmup,
        min_requests=args.min_requests,
    )
    sys.stdout.write(dumps(asdict(res)).decode() + "\n")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
