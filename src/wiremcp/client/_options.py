"""Per-call options: one frozen object, built once where a public method is called.

Rules it keeps:

* ``timeout`` is seconds, ``None`` (wait for ever) or `DEFAULT` (the
  client's own ``timeout``); `CallOptions.deadline_after` turns it into a
  number on the caller's clock, so the protocol object never reads a clock;
* ``log_level`` must be one of the logging.mdx levels; a call that sets
  ``on_log`` and no level asks for every message (``"debug"``): asking for
  logs without a place to put them, or the reverse, is never what a caller
  means (`CallOptions.log_request`);
* ``meta`` adds keys to the request's ``_meta`` (``traceparent``, ...); the
  protocol's own keys are never overridden by it in a way that drops them
  (they are written after it);
* callbacks are opaque here: the I/O layer calls them, the protocol only
  asks whether they are set.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, TypedDict

from ..protocol import LOG_LEVELS

__all__ = ["CallOptions", "CallKeywords", "DEFAULT", "Default", "ProgressCallback", "LogCallback"]

#: ``on_progress(progress, total, message)`` (progress.mdx).
ProgressCallback = Callable[[Any, Any, Any], Any]
#: ``on_log(params)``: the params of one ``notifications/message``.
LogCallback = Callable[[dict[str, Any]], Any]


class Default(enum.Enum):
    """The type of `DEFAULT`: "use the client's setting"."""

    DEFAULT = "default"

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = Default.DEFAULT


class CallKeywords(TypedDict, total=False):
    """The keyword form of `CallOptions`, accepted by every call method."""

    timeout: float | None | Default
    on_progress: ProgressCallback | None
    on_log: LogCallback | None
    log_level: str | None
    meta: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class CallOptions:
    """How one call is made: timeout, where its progress and logs go, extra ``_meta``.

        opts = CallOptions(timeout=5, on_progress=show)
        await client.call_tool("build", {"target": "all"}, opts)
    """

    timeout: float | None | Default = DEFAULT
    on_progress: ProgressCallback | None = None
    on_log: LogCallback | None = None
    log_level: str | None = None
    meta: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.log_level is not None and self.log_level not in LOG_LEVELS:
            raise ValueError(f"log_level must be one of {', '.join(LOG_LEVELS)}")

    @classmethod
    def build(cls, options: CallOptions | None, keywords: CallKeywords) -> CallOptions:
        """``options`` with the keywords given applied on top (the one place call methods build their options)."""
        if options is None:
            return cls(**keywords) if keywords else _NONE
        return replace(options, **keywords) if keywords else options

    @property
    def log_request(self) -> str | None:
        """The ``logLevel`` to ask for: the level given, ``"debug"`` when only ``on_log`` is set, else ``None``."""
        if self.log_level is not None:
            return self.log_level
        return LOG_LEVELS[0] if self.on_log is not None else None

    def deadline_after(self, now: float, default: float | None) -> float | None:
        """The deadline on the caller's clock, or ``None`` for no limit."""
        timeout = default if self.timeout is DEFAULT else self.timeout
        return None if timeout is None else now + timeout


_NONE = CallOptions()
