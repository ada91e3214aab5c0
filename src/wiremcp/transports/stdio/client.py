"""The client end of stdio: launch the server as a subprocess, one message per line.

Rules it keeps (basic/transports/stdio.mdx):

* messages are written to the child's stdin, one per line; lines read from
  its stdout are handed to the client one by one (`LineSplitter` framing,
  the same limit as the server side); a line over the limit is dropped with
  a warning, since a reply that cannot be read cannot be correlated;
* the child's stderr is captured, never parsed: the last
  ``stderr_limit`` bytes are kept (``stderr_text()``) and each chunk goes to
  ``on_stderr`` when given; stderr output is not taken as an error;
* ``first_output`` is done at the child's first byte on stdout or stderr
  (a server still starting up has written nothing: the client's era probe
  waits for it before its clock starts);
* writes never block the event loop: bytes are handed to the pipe transport,
  and a child that stops reading only grows the write buffer;
* shutdown (stdio.mdx, "Shutdown"): close stdin, wait ``exit_timeout``
  seconds for the child to exit, then SIGTERM, wait ``term_timeout``, then
  SIGKILL;
* when stdout ends, the connection is closed: the requests in flight fail
  with `ConnectionClosed`, whose message carries the exit status and the
  tail of stderr (its last ``STDERR_TAIL_LINES`` lines, each cut at
  ``STDERR_TAIL_WIDTH`` characters). Both come after stdout's end (the
  exit is reported apart, stderr is another pipe), so the report waits for
  them, at most ``end_report_wait`` seconds.

The child inherits the parent's environment with ``env`` applied on top.

`StdioTransport.write_line` writes bytes the client did not build (a demo's
malformed line); it is this transport's own, not part of the
`ClientTransport` contract.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from typing import Any, Callable, Hashable

from ...client import ConnectionClosed, Receiver
from ...jsonrpc import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, TooLong
from .server import small_reads

__all__ = ["StdioTransport", "DEFAULT_EXIT_TIMEOUT", "DEFAULT_TERM_TIMEOUT", "DEFAULT_STDERR_LIMIT"]

log = logging.getLogger("wiremcp.client")

#: Seconds the server has to exit after its stdin is closed before SIGTERM.
DEFAULT_EXIT_TIMEOUT = 5.0
#: Seconds after SIGTERM before SIGKILL.
DEFAULT_TERM_TIMEOUT = 2.0
#: Bytes of the server's stderr kept for `stderr_text` (the most recent).
DEFAULT_STDERR_LIMIT = 64 * 1024
#: Seconds to wait, once stdout ended, for the exit status and the end of stderr.
DEFAULT_END_REPORT_WAIT = 2.0
#: Lines of stderr quoted when the server ends, and the characters kept of each.
STDERR_TAIL_LINES = 5
STDERR_TAIL_WIDTH = 300


class _ChildProtocol(asyncio.SubprocessProtocol):
    def __init__(self, owner: StdioTransport) -> None:
        self.owner = owner

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.owner._stdout(data)
        else:
            self.owner._stderr(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.owner._stdout_closed()
        elif fd == 2:
            self.owner._stderr_closed()

    def process_exited(self) -> None:
        self.owner._exited()


class StdioTransport:
    """A `ClientTransport` over a child process's stdin and stdout."""

    cancel_by_notification = True

    def __init__(
        self,
        command: str,
        args: list[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        exit_timeout: float = DEFAULT_EXIT_TIMEOUT,
        term_timeout: float = DEFAULT_TERM_TIMEOUT,
        stderr_limit: int = DEFAULT_STDERR_LIMIT,
        end_report_wait: float = DEFAULT_END_REPORT_WAIT,
    ) -> None:
        self.command = command
        self.args = list(args or [])
        self.env = env
        self.cwd = cwd
        self.on_stderr = on_stderr
        self.exit_timeout = exit_timeout
        self.term_timeout = term_timeout
        self.stderr_limit = stderr_limit
        self.end_report_wait = end_report_wait
        self.cache_key: Hashable = ("stdio", command, tuple(self.args), cwd, tuple(sorted((env or {}).items())))
        self._splitter = LineSplitter(max_message_size)
        self._stderr_chunks: deque[bytes] = deque()
        self._stderr_size = 0
        self._receiver: Receiver | None = None
        self._process: asyncio.SubprocessTransport | None = None
        self._stdin: Any = None
        self._exit: asyncio.Future[None] | None = None
        self._stderr_end: asyncio.Future[None] | None = None
        self._report: asyncio.Task[None] | None = None
        self._stdout_done = False
        #: Done at the child's first byte on stdout or stderr: the client's era probe clock starts there.
        self.first_output: asyncio.Future[None] | None = None

    @property
    def pid(self) -> int | None:
        """The server process's id, or None before it started."""
        return self._process.get_pid() if self._process is not None else None

    @property
    def returncode(self) -> int | None:
        """The server process's exit status, or None while it runs (or before it started)."""
        return self._process.get_returncode() if self._process is not None else None

    def stderr_text(self) -> str:
        """The most recent ``stderr_limit`` bytes the server wrote to stderr, decoded."""
        return b"".join(self._stderr_chunks).decode("utf-8", errors="replace")

    async def open(self, receiver: Receiver) -> None:
        """Start the server process; what it writes to stdout goes to ``receiver``, line by line."""
        loop = asyncio.get_running_loop()
        self._receiver = receiver
        self._exit = loop.create_future()
        self._stderr_end = loop.create_future()
        self.first_output = loop.create_future()
        env = None if self.env is None else {**os.environ, **self.env}
        try:
            self._process, _ = await loop.subprocess_exec(
                lambda: _ChildProtocol(self),
                self.command,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
            )
        except OSError as exc:
            raise ConnectionClosed(f"cannot start {self.command!r}: {exc}") from exc
        self._stdin = self._process.get_pipe_transport(0)
        for fd in (1, 2):
            small_reads(self._process.get_pipe_transport(fd))

    # -- output of the child --------------------------------------------------

    def _output(self) -> None:
        if self.first_output is not None and not self.first_output.done():
            self.first_output.set_result(None)

    def _stdout(self, data: bytes) -> None:
        self._output()
        receiver = self._receiver
        assert receiver is not None
        for line in self._splitter.feed(data):
            if type(line) is TooLong:
                log.warning("dropped a %d-byte line from the server (limit %d)", line.size, self._splitter.max_line)
                continue
            receiver.message(line, None)  # type: ignore[arg-type]

    def _stderr(self, data: bytes) -> None:
        self._output()
        self._stderr_chunks.append(data)
        self._stderr_size += len(data)
        while self._stderr_size > self.stderr_limit and len(self._stderr_chunks) > 1:
            self._stderr_size -= len(self._stderr_chunks.popleft())
        if self.on_stderr is not None:
            try:
                self.on_stderr(data)
            except Exception:  # noqa: BLE001 - a user callback must not stop the reader
                log.exception("on_stderr failed")

    def _stdout_closed(self) -> None:
        if self._stdout_done:
            return
        self._stdout_done = True
        receiver = self._receiver
        for line in self._splitter.close():
            if type(line) is not TooLong and receiver is not None:
                receiver.message(line, None)  # type: ignore[arg-type]
        if receiver is not None:
            self._report = asyncio.get_running_loop().create_task(self._report_end(receiver))

    async def _report_end(self, receiver: Receiver) -> None:
        """Close the connection once the exit status and the end of stderr are known (or after a bound)."""
        waits = [f for f in (self._exit, self._stderr_end) if f is not None]
        if waits:
            await asyncio.wait(waits, timeout=self.end_report_wait)
        receiver.closed(ConnectionClosed(self._describe_end("the server closed its stdout")))

    def _stderr_closed(self) -> None:
        if self._stderr_end is not None and not self._stderr_end.done():
            self._stderr_end.set_result(None)

    def _exited(self) -> None:
        if self._exit is not None and not self._exit.done():
            self._exit.set_result(None)

    def _describe_end(self, what: str) -> str:
        code = self.returncode
        text = what if code is None else f"{what} (exit status {code})"
        tail = [
            line if len(line) <= STDERR_TAIL_WIDTH else f"{line[:STDERR_TAIL_WIDTH]}... ({len(line)} characters)"
            for line in self.stderr_text().strip().splitlines()[-STDERR_TAIL_LINES:]
        ]
        if tail:
            text += "; its stderr ends with:\n  " + "\n  ".join(tail)
        return text

    # -- input of the child ---------------------------------------------------

    def _write(self, data: bytes) -> None:
        stdin = self._stdin
        if stdin is None or stdin.is_closing():
            raise ConnectionClosed(self._describe_end("the server's stdin is closed"))
        stdin.writelines((data, b"\n"))

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        """Write ``data`` and a newline to the server's stdin; ConnectionClosed once stdin is closed."""
        self._write(data)

    def write_line(self, data: bytes) -> None:
        """Write ``data`` and a newline to the server's stdin, as they are (for demos and tests).

        Nothing is registered: a reply to it reaches the client's receiver
        like any other message, which drops a reply it cannot correlate.
        """
        self._write(data)

    def abandon(self, id: Any) -> None:
        """Nothing to close: the client sends ``notifications/cancelled`` on stdio."""
        return None

    async def aclose(self) -> None:
        """stdio.mdx, Shutdown: close stdin, wait, SIGTERM, wait, SIGKILL."""
        process = self._process
        if process is None:
            return
        stdin = self._stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        exit_ = self._exit
        assert exit_ is not None
        for action, wait in ((None, self.exit_timeout), ("terminate", self.term_timeout), ("kill", None)):
            if exit_.done():
                break
            if action is not None:
                try:
                    getattr(process, action)()
                except ProcessLookupError:
                    break
                log.info("the server did not exit in time; sent %s", action)
            try:
                await asyncio.wait_for(asyncio.shield(exit_), wait)
            except asyncio.TimeoutError:
                continue
        if self._report is not None:
            await self._report  # bounded by end_report_wait
        process.close()
