"""What a handler knows about the request it serves, and how it talks back.

A tool asks for it by annotating a parameter with `Context`; the parameter is
injected and left out of the tool's ``inputSchema``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..protocol import methods
from ..protocol.meta import RequestMeta

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Context", "Emit"]

#: Sends one notification about the request: ``emit(method, params)``. The
#: transport drops it once the request was cancelled (stdio.mdx, Cancellation).
Emit = Callable[[str, dict[str, Any]], None]


def _discard(method: str, params: dict[str, Any]) -> None:
    return None


class Context:
    """The request being served: its id, its ``_meta`` fields, progress and logging."""

    __slots__ = ("request_id", "method", "meta", "server", "_emit")

    def __init__(
        self,
        request_id: str | int,
        method: str,
        meta: RequestMeta,
        server: Server,
        emit: Emit | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self.server = server
        self._emit = emit or _discard

    @property
    def protocol_version(self) -> str:
        return self.meta.protocol_version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.meta.client_capabilities

    @property
    def client_info(self) -> dict[str, Any] | None:
        return self.meta.client_info

    @property
    def trace_context(self) -> dict[str, str]:
        """``traceparent``, ``tracestate`` and ``baggage`` from ``_meta``, when present."""
        raw = self.meta.raw
        return {k: raw[k] for k in ("traceparent", "tracestate", "baggage") if type(raw.get(k)) is str}

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> bool:
        """Send ``notifications/progress`` if the request asked for it (a ``progressToken``).

        Returns whether a notification was sent (patterns/progress.mdx).
        """
        token = self.meta.progress_token
        if token is None:
            return False
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._emit(methods.PROGRESS, params)
        return True

    def log(self, level: str, data: Any, logger: str | None = None) -> bool:
        """Send ``notifications/message`` if the request's ``logLevel`` admits ``level``.

        Returns whether it was sent; nothing is sent for a request that did
        not set ``io.modelcontextprotocol/logLevel`` (server/utilities/logging.mdx).
        """
        if not self.meta.wants_log(level):
            return False
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self._emit(methods.MESSAGE, params)
        return True

    def debug(self, data: Any, logger: str | None = None) -> bool:
        return self.log("debug", data, logger)

    def info(self, data: Any, logger: str | None = None) -> bool:
        return self.log("info", data, logger)

    def warning(self, data: Any, logger: str | None = None) -> bool:
        return self.log("warning", data, logger)

    def error(self, data: Any, logger: str | None = None) -> bool:
        return self.log("error", data, logger)
