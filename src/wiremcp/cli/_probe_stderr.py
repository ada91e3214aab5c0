"""What a stdio server wrote to stderr while the client decided its era, kept apart from the rest.

The CLI probes with ``server/discover`` (2026-07-28 stdio.mdx, "Backward Compatibility"). A legacy
server refuses it, and some refuse loudly: an official mcp 1.x server logs some 75 lines of
pydantic validation errors. That output is the CLI's own doing, not the user's problem.

Rules it keeps:

* every chunk the server writes goes to one of two parts: *connecting* until `era_known` is called
  (the era is decided), *after* from then on;
* when the probe was sent and the server turned out legacy (``--era auto``, the fallback taken),
  the connecting part is kept back: `shown` is only the after part, and `note` is one line saying
  how many lines were kept back and that ``--wire`` shows them. Under ``--wire`` (the probe itself is on
  screen) and in every other case both parts are shown, in order: nothing is silently dropped;
* a server's startup output written while the probe was in flight is kept back with it (the two cannot
  be told apart on one pipe); it is in the note's count;
* a connection that fails is reported with the transport's own stderr, not from here;
* each part keeps at most ``limit`` bytes, the most recent (what a server writes is bounded).
"""

from __future__ import annotations

from collections import deque

__all__ = ["ProbeStderr"]

#: Bytes kept of each part (the stdio transport keeps as many: ``DEFAULT_STDERR_LIMIT``).
_LIMIT = 64 * 1024


class _Part:
    __slots__ = ("chunks", "size", "lines")

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.lines = 0

    def add(self, data: bytes, limit: int) -> None:
        self.chunks.append(data)
        self.size += len(data)
        self.lines += data.count(b"\n")
        while self.size > limit and len(self.chunks) > 1:
            self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        return b"".join(self.chunks).decode("utf-8", errors="replace")


class ProbeStderr:
    """An ``on_stderr`` callback (`feed`) that splits a stdio server's stderr at the era decision."""

    __slots__ = ("limit", "wire", "_connecting", "_after", "_era_known", "_kept_back")

    def __init__(self, *, wire: bool, limit: int = _LIMIT) -> None:
        self.limit = limit
        self.wire = wire
        self._connecting = _Part()
        self._after = _Part()
        self._era_known = False
        self._kept_back = False

    def feed(self, data: bytes) -> None:
        (self._after if self._era_known else self._connecting).add(data, self.limit)

    def era_known(self, *, probe_fell_back: bool) -> None:
        """The era is decided; ``probe_fell_back``: ``server/discover`` was sent and the server is legacy."""
        self._era_known = True
        self._kept_back = probe_fell_back and not self.wire

    def shown(self) -> str:
        """What to show the user after the output."""
        after = self._after.text()
        return after if self._kept_back else self._connecting.text() + after

    def note(self) -> str | None:
        """One line about what was kept back, or None."""
        if not self._kept_back or not self._connecting.size:
            return None
        lines = self._connecting.lines or 1
        return (
            f"(the server wrote {lines} line{'s' if lines != 1 else ''} to stderr while refusing the era probe, "
            "server/discover, before its legacy handshake: --wire shows them)"
        )
