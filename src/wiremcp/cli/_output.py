"""What the ``wiremcp`` commands print and the status they end with: one set of helpers for all of them.

Rules every command keeps through these helpers:

* Exit status: `OK` (0) done; `FAILED` (1) the server, the tool or the
  task said no (an error reply, ``isError``, a failed or cancelled task,
  nothing to do); `USAGE` (2) a usage or connection problem; `INTERRUPTED`
  (130) Ctrl-C; `BROKEN_PIPE` (141) the reader of stdout went away, as for
  a program killed by SIGPIPE (`wiremcp.cli.main`).
* A problem is one line on stderr, ``wiremcp COMMAND: message`` (`fail`);
  a `UsageError` raised by a command becomes that line and status 2; an
  `OptionsError` is reported as argparse reports a bad option (the
  command's usage line, then ``wiremcp COMMAND: error: message``).
* What the user asked for (a result, a listing) goes to stdout; what goes
  with it (progress, a task's status changes, a server's stderr) to stderr.
* Colour only on a terminal, and never with ``--no-color`` or ``NO_COLOR``
  (`Style`); JSON is shown indented, and bytes that are not JSON as text
  (`pretty`).
* Nothing here imports the client or a transport: ``wiremcp run`` and the
  wire tools use these helpers too.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

import orjson

if TYPE_CHECKING:
    from ..client import CallToolResult, RemoteError

__all__ = [
    "OK",
    "FAILED",
    "USAGE",
    "INTERRUPTED",
    "BROKEN_PIPE",
    "UsageError",
    "OptionsError",
    "fail",
    "install_hint",
    "missing_extra",
    "log_warnings",
    "quiet_retries",
    "Style",
    "pretty",
    "WirePrinter",
    "print_remote_error",
    "print_content",
    "print_tool_result",
]

#: Exit statuses (see the module's rules).
OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130
BROKEN_PIPE = 141  # 128 + SIGPIPE


class UsageError(Exception):
    """A usage or connection problem a command found: ``wiremcp COMMAND: message`` on stderr, status 2."""


class OptionsError(Exception):
    """Options that do not go together: reported by the command's parser (usage line, ``error:``), status 2."""


def fail(command: str, message: str, status: int = USAGE) -> int:
    """Say ``wiremcp COMMAND: message`` on stderr; return ``status``."""
    print(f"wiremcp {command}: {message}", file=sys.stderr)
    return status


def install_hint(extra: str) -> str:
    """How to install an extra, from a clone today and from the index once published (README, "Installing")."""
    return f"pip install -e '.[{extra}]' in a clone of wiremcp, or pip install 'wiremcp[{extra}]' once it is published"


def missing_extra(what: str, module: str, extra: str = "http") -> str | None:
    """``WHAT needs MODULE: how to install EXTRA`` when ``module`` cannot be imported, else None.

    The one line a command says instead of an ImportError's traceback (``run --http``,
    a URL target without aiohttp, ``proxy --http``...); a module set to None in
    `sys.modules` counts as missing, as the import would fail."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else f"{what} needs {module}: {install_hint(extra)}"


def log_warnings() -> None:
    """The log of a client command: warnings and errors on stderr, one line each (`quiet_retries`)."""
    logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
    quiet_retries()


def _not_a_retry_notice(record: logging.LogRecord) -> bool:
    """False for the client's notice that a request not sent is tried once more (client/_driver.py):
    the ``wiremcp.client`` record whose ``wiremcp_event`` is `RETRY_EVENT`, whatever its wording."""
    from ..client import RETRY_EVENT

    return not (record.name == "wiremcp.client" and getattr(record, "wiremcp_event", None) == RETRY_EVENT)


def quiet_retries() -> None:
    """Leave out of the log the client's notice that it tries a connection again: a command
    says once, in its own words, when the second try failed too (`_client.unreachable`)."""
    for handler in logging.getLogger().handlers:
        if _not_a_retry_notice not in handler.filters:
            handler.addFilter(_not_a_retry_notice)


class Style:
    """ANSI colour when ``enabled``, plain text otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    @classmethod
    def for_stream(cls, out: TextIO, no_color: bool = False) -> Style:
        return cls(not no_color and out.isatty() and "NO_COLOR" not in os.environ)


def pretty(data: bytes | Any) -> str:
    """Indented JSON for display; bytes that are not JSON are shown as they are."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:
            return bytes(data).decode("utf-8", errors="replace")
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()


class WirePrinter:
    """A ``Client(on_wire=...)`` callback printing each envelope with direction and timing."""

    def __init__(self, out: TextIO, style: Style) -> None:
        self.out = out
        self.style = style
        self.start = time.perf_counter()
        self.last_sent_id: Any = None
        self.broken = False

    def __call__(self, direction: str, data: bytes) -> None:
        ms = (time.perf_counter() - self.start) * 1000
        if direction == "send":
            head = self.style("33", f"→ sent     +{ms:8.1f} ms")
            try:
                obj = orjson.loads(data)
                if type(obj) is dict and "id" in obj and "method" in obj:
                    self.last_sent_id = obj["id"]
            except orjson.JSONDecodeError:
                pass
        else:
            colour = "31" if b'"error"' in data[:200] and b'"result"' not in data[:40] else "32"
            head = self.style(colour, f"← received +{ms:8.1f} ms")
        try:
            print(head + "\n" + pretty(data), file=self.out, flush=True)
        except BrokenPipeError:
            # Never raised into the client (its request would be left half sent); the
            # command's next write raises it again and `wiremcp.cli.main` ends quietly.
            self.broken = True


def print_remote_error(exc: RemoteError, out: TextIO, style: Style, hint: str = "") -> int:
    """``error CODE: message`` (and the error's data) on ``out``; `FAILED`."""
    print(style("31", f"error {exc.code}: {exc.message}{hint}"), file=out)
    if exc.has_data:
        print(pretty(exc.data), file=out)
    return FAILED


def print_content(blocks: list[dict[str, Any]], out: TextIO, style: Style) -> None:
    """Content blocks: text as it is, images, audio and links as one dim line, anything else as JSON."""
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            print(block.get("text", ""), file=out)
        elif kind in ("image", "audio"):
            print(style("2", f"[{kind} {block.get('mimeType', '')}, {len(block.get('data', ''))} base64 chars]"), file=out)
        elif kind == "resource_link":
            print(style("2", f"[link {block.get('uri')}]"), file=out)
        else:
            print(pretty(block), file=out)


def print_tool_result(result: CallToolResult, out: TextIO, style: Style) -> int:
    """A tool's result: its content, its structuredContent when no text block carries it; `FAILED` for ``isError``."""
    print_content(result.content, out, style)
    if result.structured_content is not None and not result.text:
        print(style("2", "structuredContent:") + "\n" + pretty(result.structured_content), file=out)
    if result.is_error:
        print(style("31", "(the tool reported an error)"), file=out)
        return FAILED
    return OK
