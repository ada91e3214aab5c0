"""Structured logs without OpenTelemetry: one JSON line per request (``wiremcp run --log-format json``).

Rules:

* `install_request_log` registers one middleware (`wiremcp.server.Invocation`)
  that logs each request a handler serves on the ``wiremcp.requests`` logger
  at INFO, when it ends, with its fields in ``record.mcp``: ``method``,
  ``target`` (the tool or prompt name, the resource URI), ``id``,
  ``duration_ms``, ``outcome`` (``ok``, ``tool_error``, ``error``,
  ``cancelled``), for an error its JSON-RPC ``code`` and ``error`` (the
  error's message; an unexpected exception's own text, which the client
  does not see when errors are masked), the
  ``session`` id of a 2025-11-25 session over HTTP, and ``trace_id`` and
  ``span_id`` when OpenTelemetry is on. Nothing about the request changes;
* `JSONFormatter` renders every record as one JSON object on one line:
  ``time`` (UTC, ISO 8601, milliseconds), ``level``, ``logger``,
  ``message``, then the ``mcp`` fields, then ``exception`` (the traceback)
  if any. orjson encodes it; a value it cannot encode is written as its
  ``str``;
* like all middleware, it is off unless installed: a server without it
  keeps its plain ``handle``.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

import orjson

from ..jsonrpc import INTERNAL_ERROR, JSONRPCError

if TYPE_CHECKING:
    from ..server import Invocation, Middleware, Next

__all__ = ["JSONFormatter", "install_request_log", "target_of"]

log = logging.getLogger("wiremcp.requests")


def target_of(method: str, params: dict[str, Any]) -> str | None:
    """What a request acts on: the tool or prompt name, or the resource URI."""
    if method == "tools/call" or method == "prompts/get":
        name = params.get("name")
        return name if type(name) is str else None
    if method.startswith("resources/"):
        uri = params.get("uri")
        return uri if type(uri) is str else None
    return None


def _trace_ids() -> dict[str, str]:
    """The current span's ids, when OpenTelemetry is loaded (never imported here)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}


def install_request_log(server: Any, logger: logging.Logger = log) -> Middleware:
    """Log each request ``server`` serves as one structured record on ``logger`` (see the module docs)."""
    clock = time.perf_counter

    async def request_log(call: Invocation, call_next: Next) -> dict[str, Any]:
        fields: dict[str, Any] = {"method": call.method}
        target = target_of(call.method, call.params)
        if target is not None:
            fields["target"] = target
        if call.id is not None:
            fields["id"] = call.id
        fields.update(_trace_ids())
        started = clock()
        try:
            result = await call_next(call)
        except JSONRPCError as exc:
            fields.update(outcome="error", code=exc.code, error=exc.message)
            raise
        except asyncio.CancelledError:
            fields["outcome"] = "cancelled"
            raise
        except Exception as exc:
            fields.update(outcome="error", code=INTERNAL_ERROR, error=f"{type(exc).__name__}: {exc}")
            raise
        else:
            fields["outcome"] = "tool_error" if result.get("isError") is True and call.method == "tools/call" else "ok"
            return result
        finally:
            fields["duration_ms"] = round((clock() - started) * 1000, 3)
            headers = call.headers
            session = headers.get("mcp-session-id") if headers is not None else None
            if session is not None:
                fields["session"] = session
            logger.info("%s %s", call.method, fields["outcome"], extra={"mcp": fields})

    server.add_middleware(request_log)
    return request_log


class JSONFormatter(logging.Formatter):
    """Each record as one line of JSON (see the module docs)."""

    def __init__(self) -> None:
        super().__init__()
        self._second = -1
        self._prefix = ""

    def _time(self, created: float) -> str:
        """``created`` as ISO 8601 UTC with milliseconds; the part up to the second is made once a second."""
        second = int(created)
        if second != self._second:
            self._prefix = datetime.fromtimestamp(second, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
            self._second = second
        return f"{self._prefix}.{int((created - second) * 1000):03d}+00:00"

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self._time(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "mcp", None)
        if type(fields) is dict:
            out.update(fields)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()
