"""Before the event loop: stdin's first requests that are answered at once, answered synchronously.

`serve_before_loop(server)` is what `wiremcp run` does first on stdio. Until
something needs the event loop it reads stdin with blocking reads and answers
each line itself, so that a server whose first requests are what a host
sends first (``server/discover``, ``tools/list``, then calls of inline
tools; or the legacy handshake, ``initialize``, ``notifications/initialized``,
``tools/list``, then such calls) replies before asyncio (and ``ssl``, which
asyncio loads) is imported. The rules it keeps:

* each line goes to the server's one entry point,
  `ServerConnection.receive`, with ``defer``: it is answered here only when
  nothing is left running once it is answered, on a server without
  middleware: a fused ``tools/call`` (the pipeline's fused stage, `_intake`:
  every envelope rule holds, and every rule of the call: an inline
  synchronous tool with a scalar schema; no suspension, no worker thread, no
  `Context`), a modern ``server/discover`` or ``tools/list``, the legacy
  handshake (``initialize``, which opens the connection's `LegacySession`,
  ``notifications/initialized``, and in the session ``tools/list`` and
  ``ping``), or a ``tools/call`` of such a tool that the general stage
  answers (the first one, before the fused stage is loaded, one the fused
  stage declined, or a legacy session's); anything else comes back
  `DEFERRED`, untouched. That is the reply the event loop's
  `LineServer` would write, byte for byte, and it is written before the next
  line is read: nothing is ever in flight here, so concurrency, cancellation
  (a ``notifications/cancelled`` could only name a finished request, which the
  spec says to ignore) and the in-flight caps have nothing to act on yet;
* once the reply to a modern call answered without the fused stage is
  written, the fused stage is loaded (`ServerConnection.warm`: msgspec),
  before the next read: a host's first call does not wait for that import,
  later calls take the fused stage (a legacy session's calls, which carry no
  ``_meta``, never do: for them it is not loaded here);
* the first line that is anything else (another method, a tool that awaits
  or runs on a worker thread, another notification, a response, a
  malformed line, a line that arrives in more than one read) is returned
  unconsumed, with everything read after it and the connection itself (a
  `Handoff`), for `serve_stdio` to feed its `LineServer` first: the
  `LineServer` serves on that same connection (its legacy session
  included; `ServerConnection.rebind` points its ``write`` at the event
  loop's pipe), so from then on the stream is served on the event loop, as if
  it had been from the start;
* what the connection writes that is not a reply (a legacy session's
  notifications, e.g. a list change a tool caused) goes to stdout with the
  same blocking writes, in order, until the handoff;
* a server with a lifespan to enter, or with mounted servers (whose lifespans
  are entered with it), goes to the event loop at once: a lifespan is entered
  before the first message is read; any other server first passes the checks
  that entering a lifespan makes (``Server.check_ready``);
* end of input, or stdout closed by the client: serving is over (nothing is in
  flight, no lifespan was entered; a legacy session is closed, as the event
  loop closes it).

While it reads, ``sys.stdout`` points at stderr, as in `serve_stdio`.
"""

from __future__ import annotations

import logging
import os
import sys

from ...jsonrpc import DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_SIZE, MCP, Decoder
from ...server import Server
from ...server.transport import DEFERRED, ServerConnection

__all__ = ["serve_before_loop", "Handoff"]

log = logging.getLogger("wiremcp.transport")

#: Bytes per read, as `serve_stdio` reads a pipe.
_READ_SIZE = 64 * 1024


class Handoff:
    """What the event loop serves next: bytes read and not served, and the connection that served the rest (or None).

    (A plain class: a ``NamedTuple`` costs ~1 M instructions to define, at every start.)
    """

    __slots__ = ("first", "conn")

    def __init__(self, first: bytes, conn: ServerConnection | None) -> None:
        self.first = first
        self.conn = conn


class _Pipe:
    """stdout until the event loop takes it: blocking writes, each message whole."""

    __slots__ = ("fd", "closed")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False  # the client closed its end

    def write(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            written = os.write(self.fd, data)
            if written != len(data):  # a full pipe took part of it
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(self.fd, view) :]
        except BrokenPipeError:
            self.closed = True


def serve_before_loop(
    server: Server,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_depth: int = DEFAULT_MAX_DEPTH,
    **limits: object,
) -> Handoff | None:
    """Answer stdin's first requests that are answered at once (see the module docs): what the event loop must serve, or None when done.

    ``limits`` are `serve_stdio`'s other options, which only the event loop uses.
    """
    if server.lifespan.factory is not None or server.mounts:
        return Handoff(b"", None)
    server.check_ready()  # what entering the lifespan checks first (a tool's ui:// resource exists)
    decoder = Decoder(MCP, max_size=max_message_size, max_depth=max_depth)
    pipe = _Pipe(sys.stdout.fileno())
    conn = ServerConnection(server, pipe.write, decoder=decoder)
    receive = conn.receive
    cold = conn.fast is not None and not conn.fast.loaded  # the fused stage is loaded after a first call's reply
    in_fd = sys.stdin.fileno()
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        while True:
            try:
                data = os.read(in_fd, _READ_SIZE)
            except BlockingIOError:  # a non-blocking stdin: the event loop waits for it
                return Handoff(b"", conn)
            if not data:
                _over(conn)  # end of input, nothing in flight
                return None
            start = 0
            end = len(data)
            while start < end:
                nl = data.find(b"\n", start)
                if nl < 0:
                    return Handoff(data[start:], conn)  # a line in more than one read: the event loop's splitter joins it
                out = receive(data[start:nl], False, True)  # defer: a reply made at once, a notification acted on, or DEFERRED
                if out is DEFERRED:
                    return Handoff(data[start:], conn)
                if type(out) is tuple:  # a Reply (else `Notified`: nothing to write)
                    pipe.write(out[0])  # type: ignore[arg-type]  # a Reply: (line, code)
                if pipe.closed:
                    log.info("stdout was closed by the client; stopping")
                    _over(conn)
                    return None
                start = nl + 1
                if cold:
                    conn.warm()
                    cold = not conn.fast.loaded  # type: ignore[union-attr]  # cold: there is a fused stage
    finally:
        sys.stdout = saved_stdout


def _over(conn: ServerConnection) -> None:
    """Serving ended here: a legacy session opened here is closed, as the event loop closes it at end of input."""
    if conn.session is not None:
        conn.close("the client closed the connection")
