"""Before the event loop: stdin's first requests that are answered at once, answered synchronously.

`serve_before_loop(server)` is what `wiremcp run` does first on stdio. Until
something needs the event loop it reads stdin with blocking reads and answers
each line itself, so that a server whose first requests are what a host
sends first (``server/discover``, ``tools/list``, then calls of inline
tools) replies before asyncio (and ``ssl``, which asyncio loads) is
imported. The rules it keeps:

* each line goes to the server's one entry point,
  `ServerConnection.receive`, with ``defer``: it is answered here only when
  nothing is left running once it is answered, on a server without
  middleware: a fused ``tools/call`` (the pipeline's fused stage, `_intake`:
  every envelope rule holds, and every rule of the call: an inline
  synchronous tool with a scalar schema; no suspension, no worker thread, no
  `Context`), a modern ``server/discover`` or ``tools/list``, or a
  ``tools/call`` of such a tool that the general stage answers (the first
  one, before the fused stage is loaded, or one the fused stage declined);
  anything else comes back `DEFERRED`, untouched. That is the reply the event loop's
  `LineServer` would write, byte for byte, and it is written before the next
  line is read: nothing is ever in flight here, so concurrency, cancellation
  (a ``notifications/cancelled`` could only name a finished request, which the
  spec says to ignore) and the in-flight caps have nothing to act on yet;
* once the reply to a call answered without the fused stage is written, the
  fused stage is loaded (`ServerConnection.warm`: msgspec), before the next
  read: a host's first call does not wait for that import, later calls
  take the fused stage;
* the first line that is anything else (another method, ``initialize``
  and the legacy era, a tool that awaits or
  runs on a worker thread, a notification, a response, a malformed line, a line
  that arrives in more than one read) is returned unconsumed, with everything
  read after it, for `serve_stdio` to feed its `LineServer` first: from then on
  the stream is served on the event loop, as if it had been from the start;
* a server with a lifespan to enter, or with mounted servers (whose lifespans
  are entered with it), goes to the event loop at once: a lifespan is entered
  before the first message is read; any other server first passes the checks
  that entering a lifespan makes (``Server.check_ready``);
* end of input, or stdout closed by the client: serving is over (nothing is in
  flight, no lifespan was entered).

While it reads, ``sys.stdout`` points at stderr, as in `serve_stdio`.
"""

from __future__ import annotations

import logging
import os
import sys

from ...jsonrpc import DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_SIZE, MCP, Decoder
from ...server import Server
from ...server.transport import DEFERRED, ServerConnection

__all__ = ["serve_before_loop"]

log = logging.getLogger("wiremcp.transport")

#: Bytes per read, as `serve_stdio` reads a pipe.
_READ_SIZE = 64 * 1024


def serve_before_loop(
    server: Server,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    max_depth: int = DEFAULT_MAX_DEPTH,
    **limits: object,
) -> bytes | None:
    """Answer stdin's first requests that are answered at once (see the module docs): the bytes the event loop must serve, or None when done.

    ``limits`` are `serve_stdio`'s other options, which only the event loop uses.
    """
    if server.lifespan.factory is not None or server.mounts:
        return b""
    server.check_ready()  # what entering the lifespan checks first (a tool's ui:// resource exists)
    decoder = Decoder(MCP, max_size=max_message_size, max_depth=max_depth)
    conn = ServerConnection(server, _never_written, decoder=decoder)
    receive = conn.receive
    cold = conn.fast is not None and not conn.fast.loaded  # the fused stage is loaded after a first call's reply
    in_fd = sys.stdin.fileno()
    out_fd = sys.stdout.fileno()
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        while True:
            try:
                data = os.read(in_fd, _READ_SIZE)
            except BlockingIOError:  # a non-blocking stdin: the event loop waits for it
                return b""
            if not data:
                return None  # end of input, nothing in flight
            start = 0
            end = len(data)
            while start < end:
                nl = data.find(b"\n", start)
                if nl < 0:
                    return data[start:]  # a line in more than one read: the event loop's splitter joins it
                reply = receive(data[start:nl], False, True)  # defer: a reply made at once, or DEFERRED
                if reply is DEFERRED:
                    return data[start:]
                line: bytes = reply[0]  # type: ignore[index, assignment]  # with defer, not DEFERRED: a Reply
                try:
                    written = os.write(out_fd, line)
                    if written != len(line):  # a full pipe took part of it
                        view = memoryview(line)[written:]
                        while view:
                            view = view[os.write(out_fd, view) :]
                except BrokenPipeError:
                    log.info("stdout was closed by the client; stopping")
                    return None
                start = nl + 1
                if cold:
                    conn.warm()
                    cold = not conn.fast.loaded  # type: ignore[union-attr]  # cold: there is a fused stage
    finally:
        sys.stdout = saved_stdout


def _never_written(data: bytes) -> None:
    """The connection's ``write``: unused, since nothing is ever in flight here (no session, no request to the client)."""
    raise AssertionError("serve_before_loop holds nothing that writes")
