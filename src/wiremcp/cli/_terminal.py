"""Text from a server, made harmless for a terminal.

What a server sends (its name, instructions, tool names and descriptions,
error messages, an elicitation's questions, a tool's text result) is not
trusted. Written raw to a terminal, control characters act instead of
showing: escape sequences move the cursor, clear the screen, set the window
title, write the clipboard (OSC 52), make links that point elsewhere
(OSC 8), or ask the terminal to reply on stdin; a carriage return or a
backspace overwrites what was already shown; bidirectional overrides reorder
it. Rules this module keeps:

* `terminal_safe` writes each C0 control but newline and tab, DEL, each C1
  control and each bidirectional override or isolate as a visible escape
  (``\\x1b``, ``\\r``, ``\\u202e``); CR LF and the colour sequences wiremcp
  itself writes (SGR: ``ESC [`` digits and ``;`` then ``m``) are kept;
* `for_terminal` wraps a stream that is a terminal in `TerminalSafe`, which
  passes everything written through `terminal_safe`; a stream that is not
  a terminal (a pipe, a file) is returned as it is, so ``wiremcp call ... >
  out.txt`` keeps the server's bytes exactly.
"""

from __future__ import annotations

import re
from typing import Any, TextIO, cast

__all__ = ["terminal_safe", "TerminalSafe", "for_terminal"]

_UNSAFE = re.compile("\x1b\\[[0-9;]*m|\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) > 1:  # SGR or CR LF: kept
        return found
    if found == "\r":
        return "\\r"
    code = ord(found)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with every character that would act on a terminal written as a visible escape."""
    return _UNSAFE.sub(_visible, text)


class TerminalSafe:
    """A text stream whose writes go through `terminal_safe`; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def for_terminal(stream: TextIO) -> TextIO:
    """``stream`` wrapped in `TerminalSafe` when it is a terminal, else ``stream`` itself."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return stream
    if not tty or isinstance(stream, TerminalSafe):
        return stream
    return cast(TextIO, TerminalSafe(stream))
