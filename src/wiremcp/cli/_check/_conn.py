"""The raw connections of ``wiremcp check``: bytes sent and received exactly as the probes write them.

Rules:

* A `Conn` writes what it is given, byte for byte (a probe's malformed line
  stays malformed), and hands back each message the server wrote, as the
  raw line (stdio) or the raw JSON body or SSE ``data`` (HTTP), in the order
  they arrived, through one queue.
* stdio: one server process per `Conn` (`StdioConn`); a probe that may kill
  the session gets a fresh one. The process's stderr is kept (its tail is
  shown when it dies) and never read as protocol. Closing ends stdin, then
  terminates, then kills the process, and waits for it.
* HTTP (`HttpConn`): every message is one POST (aiohttp, started as a task
  so requests can be in flight together); ``Mcp-Session-Id`` is kept from
  the first response that carries one and sent after; a request carries
  ``Mcp-Method``, and ``Mcp-Name`` when its method mirrors a name (what a
  2026-07-28 server requires); a notification's
  status is recorded (``statuses``) since a 202 with no body is its only
  correct answer.
* A `Session` is a `Conn` with its transcript (``>>> `` sent, ``<<< ``
  received) and its `WireChecker`: every line crosses the checker, and
  each problem the checker finds in what the *server* wrote is kept
  (``problems``) for the runner to turn into findings.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import orjson

from ...protocol.headers import encode_header_value
from .._wirecheck import Problem, WireChecker

__all__ = ["Conn", "StdioConn", "HttpConn", "Session", "Unreachable", "dumps"]

#: a line longer than this from the server is read whole all the same (asyncio's default limit is 64 KiB)
_LINE_LIMIT = 64 * 1024 * 1024


class Unreachable(Exception):
    """The target could not be started or reached; the message is for the user."""


def dumps(msg: Any) -> bytes:
    return orjson.dumps(msg)


class Conn:
    """A connection to one server: `send` raw bytes, `receive` the next raw message (None: it ended)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.statuses: list[tuple[bytes, int, bytes]] = []  # HTTP: (sent, status, body) of every POST

    async def send(self, raw: bytes, method: str = "", name: str | None = None) -> None:
        """Write ``raw``; ``method`` and ``name`` (its ``Mcp-Name``) are for a transport that mirrors them into headers."""
        raise NotImplementedError

    async def receive(self, timeout: float) -> bytes | None:
        """The next message, None when the server is gone; `TimeoutError` when nothing came in time."""
        return await asyncio.wait_for(self.queue.get(), timeout)

    async def close(self) -> None:
        raise NotImplementedError

    def stderr_tail(self) -> str:
        return ""

    def gone(self) -> str:
        """Why the server is gone, in a few words."""
        tail = self.stderr_tail()
        return "the server closed the connection (exited)" + (f"; its stderr ends: {tail[-300:]}" if tail else "")


class StdioConn(Conn):
    """A fresh server process speaking newline-delimited JSON on its stdin and stdout."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__()
        self.argv = argv
        self.proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr = bytearray()

    async def start(self) -> StdioConn:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, limit=_LINE_LIMIT,
            )
        except OSError as exc:
            raise Unreachable(f"cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        self._tasks = [asyncio.create_task(self._read()), asyncio.create_task(self._drain_stderr())]
        return self

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                if line.strip():
                    self.queue.put_nowait(line.rstrip(b"\r\n"))
        except (ValueError, OSError):  # a line past the limit, a broken pipe: the end of what can be read
            pass
        self.queue.put_nowait(None)

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self._stderr += chunk
            del self._stderr[:-8192]

    async def send(self, raw: bytes, method: str = "", name: str | None = None) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(raw + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server is gone: the reader's None says so

    def stderr_tail(self) -> str:
        return bytes(self._stderr[-600:]).decode("utf-8", "replace").strip()

    async def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        for signal in (None, proc.terminate, proc.kill):
            if signal is not None and proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    signal()
            try:
                await asyncio.wait_for(proc.wait(), 2.0)
                break
            except asyncio.TimeoutError:
                continue
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


#: the ``params`` field a request mirrors in ``Mcp-Name`` over HTTP (2026-07-28, "Standard Request Headers")
_NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def _mirrored_name(msg: Any, method: str) -> str | None:
    """The ``Mcp-Name`` header of ``msg`` (None: its method mirrors none, or the field is not a string)."""
    field = _NAME_FIELDS.get(method)
    params = msg.get("params") if field else None
    value = params.get(field) if type(params) is dict else None
    return encode_header_value(value) if type(value) is str else None


class HttpConn(Conn):
    """Streamable HTTP: each message one raw POST to the endpoint."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float) -> None:
        super().__init__()
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.failure = ""  # why the first POST could not be made
        self._tasks: set[asyncio.Task[None]] = set()
        self._http: Any = None

    async def start(self) -> HttpConn:
        import aiohttp  # on first use: only a URL target needs it

        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.timeout))
        return self

    async def send(self, raw: bytes, method: str = "", name: str | None = None) -> None:
        headers = {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **self.headers,
        }
        if method:
            headers["Mcp-Method"] = method
        if name is not None:
            headers["Mcp-Name"] = name
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        task = asyncio.create_task(self._post(raw, headers))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, raw: bytes, headers: dict[str, str]) -> None:
        import aiohttp

        try:
            async with self._http.post(self.url, data=raw, headers=headers) as response:
                session = response.headers.get("Mcp-Session-Id")
                if session and self.session_id is None:
                    self.session_id = session
                kind = response.headers.get("Content-Type", "")
                if kind.startswith("text/event-stream"):
                    body = await self._events(response)
                else:
                    body = await response.read()
                    # a refusal (4xx, 5xx) MAY carry a JSON-RPC error: a body of another kind is only its status
                    if body.strip() and (response.status < 400 or kind.startswith("application/json")):
                        self.queue.put_nowait(body.strip())
                self.statuses.append((raw, response.status, body))
        except (aiohttp.ClientError, OSError) as exc:
            if not self.statuses:
                self.failure = str(exc) or type(exc).__name__
                self.queue.put_nowait(None)
            self.statuses.append((raw, 0, str(exc).encode()))

    def gone(self) -> str:
        return f"cannot connect to {self.url}: {self.failure}" if self.failure else "the server closed the connection"

    async def _events(self, response: Any) -> bytes:
        """Each SSE event's data, queued as one message; the whole stream, returned.

        An event whose data is empty carries no message: it is the priming event a server sends (an event id
        and an empty data field, so the client may resume; basic/transports.mdx (2025-11-25), Sending Messages)."""
        whole = bytearray()
        data: list[bytes] = []
        async for line in response.content:
            whole += line
            line = line.rstrip(b"\r\n")
            if line.startswith(b"data:"):
                data.append(line[5:].lstrip(b" ") if line[5:6] == b" " else line[5:])
            elif not line and data:
                self._event(b"\n".join(data))
                data = []
        if data:
            self._event(b"\n".join(data))
        return bytes(whole)

    def _event(self, data: bytes) -> None:
        if data.strip():
            self.queue.put_nowait(data)

    def status_of(self, raw: bytes) -> int | None:
        """The HTTP status the POST of ``raw`` got (the last such), None before it came."""
        return next((status for sent, status, _ in reversed(self.statuses) if sent == raw), None)

    async def settle(self) -> None:
        """Until every POST sent has been answered, or ``timeout`` seconds (a stream left open is not waited for)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=self.timeout)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._http is not None:
            if self.session_id:
                with contextlib.suppress(Exception):
                    headers = {"Mcp-Session-Id": self.session_id, **self.headers}
                    async with self._http.delete(self.url, headers=headers):
                        pass
            await self._http.close()


def _key(value: Any) -> tuple[bool, Any]:
    return (type(value) is str, value if type(value) in (str, int) else orjson.dumps(value))


class Session:
    """A `Conn`, its transcript and its `WireChecker`."""

    def __init__(self, conn: Conn, timeout: float, startup: float = 0.0) -> None:
        self.conn = conn
        self.timeout = timeout
        self.startup = startup  # added to the wait for the first message: the server's start
        self.started_in: float | None = None  # seconds from the session's start to the first message
        self._opened = time.monotonic()
        self.checker = WireChecker()
        self.transcript: list[str] = []
        self.problems: list[tuple[Problem, tuple[str, ...]]] = []  # the server's, each with its envelopes
        self.hostile: set[tuple[bool, Any]] = set()  # ids a probe sent in a message it broke on purpose
        self.backlog: list[Any] = []  # messages received while waiting for another
        self.ended = False
        self._next = 0

    def next_id(self, prefix: str = "check") -> str:
        self._next += 1
        return f"{prefix}-{self._next}"

    async def send_raw(self, raw: bytes, method: str = "", hostile: bool = False) -> None:
        """Send ``raw`` as it is; ``hostile``: broken on purpose (the checker's view of it is not a finding)."""
        self.transcript.append(">>> " + raw.decode("utf-8", "replace")[:2000])
        checked = self.checker.check_line("c2s", raw)
        msg = checked["msg"]
        for part in (msg if type(msg) is list else [msg]) if hostile else []:  # a batch: its requests' ids too
            if type(part) is dict and "id" in part:
                self.hostile.add(_key(part["id"]))

    def mark_hostile(self, request_id: Any) -> None:
        """A request written raw (not JSON the checker can read) whose id a reply may carry."""
        self.hostile.add(_key(request_id))

    async def send(self, msg: Any, hostile: bool = False) -> None:
        method = msg.get("method", "") if type(msg) is dict and type(msg.get("method")) is str else ""
        raw = dumps(msg)
        await self.send_raw(raw, method, hostile)
        await self.conn.send(raw, method, _mirrored_name(msg, method))

    async def write(self, raw: bytes, method: str = "", hostile: bool = True) -> None:
        """Send bytes that may not be JSON at all."""
        await self.send_raw(raw, method, hostile)
        await self.conn.send(raw, method)

    async def receive(self, timeout: float | None = None) -> Any:
        """The next message from the server (decoded; None if not JSON), judged by the checker.

        Raises `TimeoutError` when nothing came in time, `EOFError` when the server is gone."""
        wait = self.timeout if timeout is None else timeout
        if self.started_in is None:
            wait += self.startup
        try:
            raw = await self.conn.receive(wait)
            if self.started_in is None:
                self.started_in = time.monotonic() - self._opened
        except asyncio.TimeoutError:
            raise TimeoutError from None
        if raw is None:
            self.ended = True
            self.conn.queue.put_nowait(None)  # every later read says so too
            raise EOFError
        line = "<<< " + raw.decode("utf-8", "replace")[:2000]
        self.transcript.append(line)
        checked = self.checker.check_line("s2c", raw)
        msg = checked["msg"]
        ignore: frozenset[str] = frozenset()
        if type(msg) is dict and "method" not in msg and _key(msg.get("id")) in self.hostile:
            ignore = frozenset({"unknown-id", "already-answered"})
        for found in checked["problems"]:
            if found["code"] not in ignore:
                self.problems.append((found, tuple(self.transcript[-6:])))
        return msg

    async def wait_for(self, request_id: Any, timeout: float | None = None) -> tuple[Any, list[Any]]:
        """The response with ``request_id`` and everything else received before it."""
        others: list[Any] = []
        for index, msg in enumerate(self.backlog):
            if _is_response(msg, request_id):
                del self.backlog[index]
                return msg, others
        while True:
            msg = await self.receive(timeout)
            if _is_response(msg, request_id):
                return msg, others
            others.append(msg)
            self.backlog.append(msg)

    async def request(self, method: str, params: dict[str, Any] | None = None, **extra: Any) -> Any:
        """Send a request; its response (raises `TimeoutError`, `EOFError`)."""
        request_id = self.next_id()
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
        if params is not None:
            msg["params"] = params
        await self.send(msg)
        return (await self.wait_for(request_id))[0]

    def envelopes(self, since: int = 0) -> tuple[str, ...]:
        return tuple(self.transcript[since:])


def _is_response(msg: Any, request_id: Any) -> bool:
    return type(msg) is dict and "method" not in msg and "id" in msg and _key(msg["id"]) == _key(request_id)

