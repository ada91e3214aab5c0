"""``wiremcp tap [--log FILE] -- COMMAND ARGS…``: a transparent stdio proxy that checks every envelope.

Put it between a host and a stdio server (the host's configuration names
``wiremcp tap -- python server.py`` as the command). Rules it keeps:

* Every byte is forwarded unchanged, in order, in both directions: a chunk
  read from one side is written to the other at once, before it is looked at
  (a blocking ``os.read``/``os.write`` pair per direction, on its own thread;
  no message is delayed waiting for its newline). The host's stdin EOF
  closes the server's stdin at once. The server's stderr is inherited.
* Each complete line is then checked (`wiremcp.cli._wirecheck.WireChecker`)
  and logged as one JSON object per line to ``--log FILE`` (truncated at
  start; default stderr): ``{"t", "dir", "msg", "raw"?, "problems"}``, with
  ``raw`` only when the line is not JSON. A problem never changes what is
  forwarded. A stream that ends in the middle of a line gets an
  ``unterminated-line`` record.
* At exit, each request left without a reply gets a record with ``"msg":
  null``, told apart by which side closed its stream first (the host its
  stdin, or the server its stdout; both are in the record as
  ``"closedFirst": "client"`` or ``"server"``). A ``subscriptions/listen``
  stream still open when the client closed first was hung up on, as hosts
  do when they exit (Claude Code on every session): no problem, a
  ``"note"`` with the code ``hung-up``. Any other request, and a stream
  the server left by closing first, is a ``never-answered`` problem whose
  message says which side closed first. A signal that reaches tap from
  outside (the host ending the server, as the stdio transport's shutdown
  lets it: close stdin, then SIGTERM, then SIGKILL) counts as the client
  closing first, even when the server's stdout then ends before the host's
  stdin does: the host hung up.
* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are passed to the
  server, which runs in its own process group (so a terminal's Ctrl-C reaches
  it once, through tap). tap exits with the server's status; a server killed
  by a signal makes tap die of the same signal.
* Blank lines are not messages and are not logged (as wiremcp's own stdio
  reader skips them).
* The log holds every envelope whole (arguments, results, answers typed
  into forms): a log file is the user's alone, mode 0600, also when it
  existed before (a device such as ``/dev/stderr`` is left as it is). It is
  opened with ``O_NOFOLLOW`` (`_safe_files.open_log`): a symbolic link is
  followed only to a device or a pipe, never to a file, and a file with
  other names (hard links) is refused before it is truncated.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from types import FrameType
from typing import IO, Any, Callable

import orjson

from ._output import fail
from ._safe_files import open_log
from ._wirecheck import HUNG_UP_STREAMS, Direction, Problem, WireChecker

__all__ = ["add_arguments", "handle", "Tap", "tap_main", "FORWARDED_SIGNALS"]

FORWARDED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2") if hasattr(signal, name)
)
CHUNK = 65536
#: Requests that are open streams, ended only by a cancellation or a hang-up (2026-07-28 subscriptions/listen).
_WHO: dict[Direction, str] = {"c2s": "the client", "s2c": "the server"}


class Tap:
    """The checking and logging half of the proxy: fed the bytes each side wrote, in order."""

    def __init__(self, log: IO[bytes], start: float | None = None) -> None:
        self.log = log
        self.start = time.monotonic() if start is None else start
        self.checker = WireChecker()
        self.lock = threading.Lock()
        self._order = threading.Lock()
        self._tickets = 0
        self._next = 1
        self._waiting: dict[int, tuple[float, Direction, bytes | None]] = {}
        self._partial: dict[Direction, bytearray] = {"c2s": bytearray(), "s2c": bytearray()}
        self.problem_count = 0
        #: The directions whose stream ended, in wire order (who closed first: `finish`).
        self._closed: list[Direction] = []
        #: The signal's name when the host ended the conversation with one (`host_signalled`).
        self.signalled: str | None = None

    def ticket(self) -> tuple[int, float]:
        """A place in the wire order and the time, taken *before* a chunk is forwarded.

        Whatever the peer writes in answer to a chunk is read after that chunk's
        write began, so it draws a later ticket: the log keeps the causal order
        even though each direction runs on its own thread.
        """
        with self._order:
            self._tickets += 1
            return self._tickets, self._now()

    def submit(self, ticket: tuple[int, float], direction: Direction, chunk: bytes | None) -> None:
        """The chunk forwarded under ``ticket`` (None: the stream ended); checked in ticket order."""
        with self._order:
            self._waiting[ticket[0]] = (ticket[1], direction, chunk)
            while self._next in self._waiting:
                when, where, data = self._waiting.pop(self._next)
                self._next += 1
                if data is None:
                    self.end(where)
                else:
                    self.feed(where, data, when)

    def feed(self, direction: Direction, chunk: bytes, when: float | None = None) -> None:
        """Bytes that ``direction``'s sender wrote (already forwarded); logs each complete line."""
        buffer = self._partial[direction]
        buffer += chunk
        if b"\n" not in chunk:
            return
        *lines, rest = bytes(buffer).split(b"\n")
        buffer[:] = rest
        for line in lines:
            self._line(direction, line, when)

    def _line(self, direction: Direction, line: bytes, when: float | None) -> None:
        if not line.strip():
            return
        with self.lock:
            checked = self.checker.check_line(direction, line)
            record: dict[str, Any] = {"t": self._now() if when is None else when, "dir": direction, "msg": checked["msg"]}
            if checked["msg"] is None:
                record["raw"] = line.decode("utf-8", errors="replace").rstrip("\r")
            record["problems"] = checked["problems"]
            self._write(record)

    def host_signalled(self, signum: int) -> None:
        """The host sent tap ``signum`` (passed on to the server): the host ended the conversation.

        Called from a signal handler: no lock (a pump thread may hold it); appending is atomic.
        """
        if not self._closed:
            self._closed.append("c2s")
            self.signalled = signal.Signals(signum).name

    def end(self, direction: Direction) -> None:
        """``direction``'s stream ended: an unfinished line is reported, not dropped."""
        self._closed.append(direction)
        rest = bytes(self._partial[direction])
        self._partial[direction].clear()
        if rest.strip():
            with self.lock:
                checked = self.checker.check_line(direction, rest)
                record: dict[str, Any] = {"t": self._now(), "dir": direction, "msg": checked["msg"]}
                if checked["msg"] is None:
                    record["raw"] = rest.decode("utf-8", errors="replace")
                problems: list[Problem] = [
                    {
                        "code": "unterminated-line",
                        "message": "the stream ended in the middle of a line; stdio messages end with a newline (transports/stdio.mdx)",
                    }
                ]
                record["problems"] = problems + checked["problems"]
                self._write(record)

    def finish(self) -> None:
        """The conversation is over: report the requests left without a reply (see the module docstring)."""
        with self.lock:
            first = self._closed[0] if self._closed else "s2c"  # the server's stdout has ended by now
            closer = "client" if first == "c2s" else "server"
            inflight = self.checker.inflight()
            for (sender, request_id, method), (direction, found) in zip(inflight, self.checker.finish()):
                record: dict[str, Any] = {"t": self._now(), "dir": direction, "msg": None, "closedFirst": closer}
                if self.signalled is not None:
                    record["signal"] = self.signalled  # how the host closed its side: it ended the server
                if method in HUNG_UP_STREAMS and sender == first:
                    record["problems"] = []
                    record["note"] = {
                        "code": "hung-up",
                        "message": f"{method} {orjson.dumps(request_id).decode()} was still open when {_WHO[sender]} "
                        f"closed its side first{_by(self.signalled)}: {_WHO[sender]} hung up on the stream, "
                        "which is not a violation",
                    }
                else:
                    found = {**found, "message": f"{found['message']}; {_WHO[first]} closed its side first"}
                    record["problems"] = [found]
                self._write(record)

    def _now(self) -> float:
        return round(time.monotonic() - self.start, 6)

    def _write(self, record: dict[str, Any]) -> None:
        self.problem_count += len(record["problems"])
        try:
            self.log.write(orjson.dumps(record) + b"\n")
            self.log.flush()
        except (OSError, ValueError):  # the log went away: forwarding goes on regardless
            pass


def _by(signalled: str | None) -> str:
    return f" (it sent {signalled})" if signalled is not None else ""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _pump(source: int, target: int, direction: Direction, tap: Tap, close_target: Callable[[], None] | None) -> None:
    """Copy ``source`` to ``target`` chunk by chunk, forwarding first and checking after."""
    broken = False
    while True:
        try:
            chunk = os.read(source, CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            break
        ticket = tap.ticket()
        if not broken:
            try:
                _write_all(target, chunk)
            except OSError:  # the reader is gone; keep reading so the log stays complete
                broken = True
        tap.submit(ticket, direction, chunk)
    tap.submit(tap.ticket(), direction, None)
    if close_target is not None:
        try:
            close_target()
        except OSError:
            pass


def _private_log(path: str) -> IO[bytes]:
    """``path`` opened for writing (truncated), readable by this user only when it is a file; never through a link to a file."""
    fd = open_log(path)
    try:
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def add_arguments(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp tap``."""
    p.add_argument("--log", metavar="FILE", help="write the records here (default: stderr); truncated at start")
    p.add_argument("server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS", help="the stdio server to run")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp tap``: the server command is what follows ``--``."""
    return tap_main(tail or [word for word in args.server_command if word != "--"], args.log)


def tap_main(command: list[str], log_path: str | None) -> int:
    """Run ``command`` behind the proxy; returns (or dies with) its exit status."""
    if not command:
        return fail("tap", "give the server command after --, e.g. wiremcp tap -- python server.py")
    log: IO[bytes]
    if log_path is None or log_path == "-":
        log = sys.stderr.buffer
    else:
        try:
            log = _private_log(log_path)
        except OSError as exc:
            return fail("tap", f"cannot write the log {log_path}: {exc.strerror}")
    tap = Tap(log)
    try:
        group = 0 if os.name == "posix" else None  # its own process group: a terminal's Ctrl-C reaches it through tap only
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, process_group=group)
    except OSError as exc:
        print(f"wiremcp tap: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    assert child.stdin is not None and child.stdout is not None

    def forward(signum: int, frame: FrameType | None) -> None:
        tap.host_signalled(signum)
        try:
            child.send_signal(signum)
        except OSError:
            pass

    for signum in FORWARDED_SIGNALS:
        signal.signal(signum, forward)
    to_server = threading.Thread(
        target=_pump, args=(sys.stdin.fileno(), child.stdin.fileno(), "c2s", tap, child.stdin.close), daemon=True, name="tap-c2s"
    )
    to_client = threading.Thread(
        target=_pump, args=(child.stdout.fileno(), sys.stdout.fileno(), "s2c", tap, None), daemon=True, name="tap-s2c"
    )
    to_server.start()
    to_client.start()
    while True:
        try:
            status = child.wait()
            break
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for clarity
            continue
    to_client.join()
    tap.finish()
    if log is not sys.stderr.buffer:
        log.close()
    if status < 0:
        signum = -status
        for forwarded in FORWARDED_SIGNALS:
            signal.signal(forwarded, signal.SIG_DFL)
        sys.stdout.flush()
        os.kill(os.getpid(), signum)
        return 128 + signum  # pragma: no cover - the signal ended the process
    return status
