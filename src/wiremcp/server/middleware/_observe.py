"""`Timing` and `RequestLog`: what each request took, and one structured log record per request.

Rules kept here:

* both see the request as the client sent it and the outcome the client
  gets from the layers inside them: a result, or the exception (a
  `JSONRPCError` by its code; anything else is reported as -32603, as
  ``server/_reply`` will answer it); the exception propagates unchanged;
* a cancelled request (``CancelledError``: the client cancelled or left) is
  reported as ``cancelled`` and propagates;
* `RequestLog` writes one record per request to the ``wiremcp.requests``
  logger, its fields both in the message (``key=value``, each value in JSON:
  what the client chose, a tool name, a URI, an id, cannot forge a line) and in the record's
  ``mcp`` attribute (a dict, for JSON log formatters): method, id, era, the
  tool/prompt name or resource URI, the outcome, the error code, the
  duration in ms. Params are not logged unless asked (``include_params``),
  and then cut to ``max_params_chars``: arguments may hold secrets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

import orjson

from ...jsonrpc import INTERNAL_ERROR, JSONRPCError
from .._middleware import Invocation, Next

__all__ = ["Timing", "RequestLog", "Outcome"]

#: ``(outcome, error code)``: outcome is ``"result"``, ``"error"`` or ``"cancelled"``.
Outcome = tuple[str, "int | None"]


def outcome_of(error: BaseException | None) -> tuple[str, int | None]:
    """The outcome of a request that raised ``error`` (None: a result)."""
    if error is None:
        return "result", None
    if isinstance(error, asyncio.CancelledError):
        return "cancelled", None
    if isinstance(error, JSONRPCError):
        return "error", error.code
    return "error", INTERNAL_ERROR


class Timing:
    """Middleware: ``report(call, milliseconds, error)`` after each request (default: a DEBUG log line)."""

    def __init__(self, report: Callable[[Invocation, float, BaseException | None], None] | None = None) -> None:
        self.report = report if report is not None else _log_timing

    async def __call__(self, call: Invocation, call_next: Next) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result = await call_next(call)
        except BaseException as exc:
            self.report(call, (time.perf_counter() - started) * 1000.0, exc)
            raise
        self.report(call, (time.perf_counter() - started) * 1000.0, None)
        return result


_timing_log = logging.getLogger("wiremcp.timing")


def _log_timing(call: Invocation, ms: float, error: BaseException | None) -> None:
    _timing_log.debug("%s took %.2f ms (%s)", call.method, ms, outcome_of(error)[0])


def _target(call: Invocation) -> str | None:
    params = call.params
    for field in ("name", "uri"):
        value = params.get(field)
        if type(value) is str:
            return value[:200]
    return None


class RequestLog:
    """Middleware: one structured record per request on ``logger`` (module docs)."""

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        error_level: int = logging.WARNING,
        include_params: bool = False,
        max_params_chars: int = 500,
    ) -> None:
        self.logger = logger if logger is not None else logging.getLogger("wiremcp.requests")
        self.level, self.error_level = level, error_level
        self.include_params = include_params
        self.max_params_chars = max_params_chars

    async def __call__(self, call: Invocation, call_next: Next) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            result = await call_next(call)
        except BaseException as exc:
            self._write(call, started, exc)
            raise
        self._write(call, started, None)
        return result

    def _write(self, call: Invocation, started: float, error: BaseException | None) -> None:
        outcome, code = outcome_of(error)
        level = self.level if outcome != "error" else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        fields: dict[str, Any] = {
            "method": call.method,
            "id": call.id,
            "era": "2025-11-25" if call.legacy else "2026-07-28",
            "target": _target(call),
            "outcome": outcome,
            "code": code,
            "ms": round((time.perf_counter() - started) * 1000.0, 3),
        }
        if self.include_params:
            fields["params"] = orjson.dumps(call.params, default=repr).decode()[: self.max_params_chars]
        # values as JSON: a name, URI or id the client chose cannot forge a line of the log (quotes, newlines)
        text = " ".join(f"{name}={orjson.dumps(value).decode()}" for name, value in fields.items() if value is not None)
        self.logger.log(level, "mcp request %s", text, extra={"mcp": fields})
