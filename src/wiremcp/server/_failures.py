"""What a client learns when a handler fails: error masking.

Rules (the same for tools, resources, prompts and completers):

* `ToolError` (and subclasses) is a message written for the client: its text
  is sent as it is, whatever the setting;
* `ClientRequestFailed` (the client refused one of our legacy-era requests)
  carries the client's own words back: its text is sent too;
* any other exception is a bug or an outage whose text may hold secrets
  (connection strings, paths): with ``mask_errors`` on (the default) the
  client gets a generic message that names the handler; with
  ``mask_errors=False`` (development) it gets ``Type: message``;
* either way the full exception, traceback included, goes to the
  ``wiremcp.server`` log; under ``wiremcp dev`` (`DEV`) the
  record says what the client got and carries the traceback of the user's
  code only (wiremcp's own frames and the standard library's above it cut),
  where the developer reads it: dev's stderr.

A tool's failure becomes a result with ``isError: true`` (the model reads
it, server/tools.mdx "Error Handling"); a resource's, prompt's or completer's
has no such result and becomes a -32603 error with the same message
(`HandlerFailed`). A `JSONRPCError` is never masked: it is a deliberate
protocol error.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..jsonrpc import InternalError

__all__ = ["ToolError", "HandlerFailed", "ClientRequestFailed", "failure_message", "DEV", "DEV_ENV"]

#: Set by ``wiremcp dev`` for its server process: what a running handler does is told (see `_definition`).
DEV_ENV = "WIREMCP_DEV"
#: Read once, at import: the checks it guards cost nothing outside ``wiremcp dev``.
DEV = os.environ.get(DEV_ENV) == "1"

log = logging.getLogger("wiremcp.server")


class ToolError(Exception):
    """Raise it in a handler to report a failure whose message the client may read.

    In a tool it becomes a tool execution error (``isError: true``); in a
    resource, prompt or completer a -32603 error; never masked.
    """


class ClientRequestFailed(Exception):
    """The client answered one of our requests (elicitation, sampling, roots) with an error.

    Not a `JSONRPCError`: it is the client's error, not one we send, so a tool
    that does not handle it ends in a tool execution error (``isError``).
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"the client refused the request: {message} ({code})")
        self.code = code
        self.message = message
        self.data = data
    # (Defined here, not in `_legacy` which raises it, so that every server's start loads no legacy session.)


class HandlerFailed(InternalError):
    """A resource, prompt or completer raised: -32603 with the (masked) message."""


def failure_message(kind: str, name: str, exc: BaseException, mask: bool) -> str:
    """The text the client gets for ``exc`` raised by the ``kind`` named ``name``; logs it."""
    if isinstance(exc, (ToolError, ClientRequestFailed)):
        log.info("%s %r failed: %s", kind, name, exc)
        return str(exc)
    if mask:
        text = f"Error in {kind} {name!r}: an internal error occurred (the details are in the server's log)"
    else:
        text = f"Error in {kind} {name!r}: {type(exc).__name__}: {exc}"
    if DEV:
        log.error("%s %r raised %s; the client got: %s\n%s", kind, name, type(exc).__name__, text, _user_traceback(exc))
    else:
        log.error("%s %r raised %s", kind, name, type(exc).__name__, exc_info=exc)
    return text


def _user_traceback(exc: BaseException) -> str:
    """``exc``'s traceback from the first frame of the user's code on (all of it if there is none)."""
    import sysconfig  # `wiremcp dev` only: nothing of this at a server's start
    import traceback

    # where the frames cut live: wiremcp, the standard library (asyncio, concurrent.futures)
    ours = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep, sysconfig.get_paths()["stdlib"] + os.sep)
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename.startswith(ours):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb or exc.__traceback__)).rstrip("\n")
