"""A byte budget for the request head on uvicorn's httptools parser.

uvicorn bounds the request head (request line and header fields) only with
h11 (``h11_max_incomplete_event_size``); httptools keeps every byte of a
header line that never ends (it joins the pieces itself before calling back),
so one connection could grow the process by as much as a client sends.
`BoundedHttpToolsProtocol` is uvicorn's own httptools protocol with one rule
added:

* from the start of a request to its ``on_headers_complete``, the bytes
  received are counted; once they pass the budget
  (``Config.h11_max_incomplete_event_size``, the same setting that bounds
  h11: ``serve_http(max_head_size=)``, ``wiremcp run --max-head-size``), the
  request is answered **431 Request Header Fields Too Large** with
  ``Connection: close`` and the connection is closed; nothing more is parsed;
* the count is per ``data_received`` call: a head still incomplete after
  the read that crosses the budget is refused, one that ends within that
  read is served (so a head may pass the budget by less than one read:
  asyncio and uvloop read 256 KiB at most); the memory used is bounded
  either way;
* the count starts again after each request (keep-alive, pipelining).

The cost is one addition and one comparison per read while a head is
arriving, and one Python call per read.
"""

from __future__ import annotations

import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["BoundedHttpToolsProtocol", "IMPORT_PATH"]

#: How `serve_http` names the class to uvicorn (an import string: worker processes load it too).
IMPORT_PATH = f"{__name__}:BoundedHttpToolsProtocol"

log = logging.getLogger("wiremcp.http")

_REFUSAL = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
)


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, refusing a request head longer than the budget (module docs)."""

    # Slots, not instance attributes: uvicorn's protocol has 28 of those, and a 29th turns each
    # connection's attribute dict from a shared-key table (296 bytes) into its own (1,584 bytes).
    __slots__ = ("_head_bytes", "_in_head")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._head_bytes = 0  # received since the current head began
        self._in_head = True  # between the end of a request (or the connection's start) and on_headers_complete
        super().__init__(*args, **kwargs)

    def data_received(self, data: bytes) -> None:
        if not self._in_head:
            super().data_received(data)
            return
        if self.transport.is_closing():
            return  # refused: nothing more is parsed
        self._head_bytes += len(data)
        super().data_received(data)
        limit = self.config.h11_max_incomplete_event_size
        if limit is not None and self._in_head and self._head_bytes > limit and not self.transport.is_closing():
            self._refuse(limit)

    def on_message_begin(self) -> None:
        self._in_head = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # what comes next is the next request's head

    def _refuse(self, limit: int) -> None:
        client = "%s:%d" % self.client if self.client else "?"
        log.warning("refused a request head from %s: more than %d bytes", client, limit)
        message = b"Request Header Fields Too Large: the request head is longer than %d bytes" % limit
        self.transport.write(_REFUSAL + b"content-length: %d\r\n\r\n" % len(message) + message)
        self.transport.close()
