"""Newline framing: one message per line over a byte stream (the stdio binding).

`LineSplitter` is sans-I/O: feed it whatever the stream produced and it
returns the complete lines. A line longer than ``max_line`` is never kept in
memory whole: the splitter drops its bytes as they arrive and, when its
newline finally comes, returns a `TooLong` in its place so that the reader
can still answer it. Blank lines are skipped (they carry no message).
"""

from __future__ import annotations

from ._codec import DEFAULT_MAX_MESSAGE_SIZE

__all__ = ["LineSplitter", "TooLong"]


class TooLong:
    """Stands for a line that exceeded the limit; ``size`` is how long it was."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __repr__(self) -> str:
        return f"TooLong(size={self.size})"


class LineSplitter:
    """Splits a byte stream into newline-delimited messages; a line longer than ``max_line`` is dropped as it arrives and reported as one `TooLong`."""

    __slots__ = ("max_line", "_buffer", "_discarding")

    def __init__(self, max_line: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_line = max_line
        self._buffer = bytearray()
        self._discarding = -1  # bytes dropped of an oversized line, or -1

    @property
    def buffered(self) -> int:
        """Bytes of an unfinished line kept right now."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes | TooLong]:
        """Feed bytes; the complete lines they end (without the newline), a `TooLong` for each line over the limit."""
        out: list[bytes | TooLong] = []
        start = 0
        end = len(data)
        buf = self._buffer
        while start < end:
            nl = data.find(b"\n", start)
            if nl < 0:
                chunk = end - start
                if self._discarding >= 0:
                    self._discarding += chunk
                elif len(buf) + chunk > self.max_line:
                    self._discarding = len(buf) + chunk
                    buf.clear()
                else:
                    buf += data[start:]
                break
            if self._discarding >= 0:
                out.append(TooLong(self._discarding + nl - start))
                self._discarding = -1
            elif buf:
                buf += data[start:nl]
                self._emit(out, bytes(buf))
                buf.clear()
            else:
                line = data[start:nl]
                # `_emit`, inline for the common line: not too long, starting with '{'.
                if line[:1] == b"{" and nl - start <= self.max_line:
                    out.append(line)
                else:
                    self._emit(out, line)
            start = nl + 1
        return out

    def _emit(self, out: list[bytes | TooLong], line: bytes) -> None:
        if len(line) > self.max_line:
            out.append(TooLong(len(line)))
        elif line and not (line.isspace() and not line.strip(b" \t\r")):
            out.append(line)  # a line of JSON whitespace only is skipped

    def close(self) -> list[bytes | TooLong]:
        """End of stream: the unterminated last line, if any, counts as a line."""
        out: list[bytes | TooLong] = []
        if self._discarding >= 0:
            out.append(TooLong(self._discarding))
            self._discarding = -1
        elif self._buffer:
            self._emit(out, bytes(self._buffer))
        self._buffer.clear()
        return out
