"""`ErrorHandling`: exceptions mapped to the JSON-RPC errors you choose, the rest reported and masked.

Rules kept here:

* a `JSONRPCError` passes unchanged (its code, message and data are what
  the layer that raised it meant), and so does ``CancelledError``; except
  the -32603 a failed resource, prompt or completer is answered with
  (``server/_failures``: already masked and logged), which is mapped by
  the exception it was raised from;
* an exception whose type (or a base of it) is in ``mapping`` becomes the
  error that ``mapping[type](exc)`` returns, raised ``from`` the original;
* a tool's failure is no exception here: it is a result with ``isError``
  (the model reads it), left as it is;
* any other exception is reported (``on_error(call, exc)``; by default
  logged with its traceback on ``wiremcp.errors``) and raised as
  `InternalError` (-32603) whose message names a reference the log carries
  too (``data.ref``), so an operator can find the traceback a client quotes,
  while the client never sees internal details;
* it builds no error object itself: ``server/_reply`` is still the one place
  an exception becomes a wire error.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any, Callable, Mapping

from ...jsonrpc import InternalError, JSONRPCError
from .._failures import HandlerFailed
from .._middleware import Invocation, Next

__all__ = ["ErrorHandling"]

log = logging.getLogger("wiremcp.errors")


class ErrorHandling:
    """Middleware: map exceptions to JSON-RPC errors; report and mask the rest (module docs)."""

    def __init__(
        self,
        mapping: Mapping[type[BaseException], Callable[[BaseException], JSONRPCError]] | None = None,
        *,
        on_error: Callable[[Invocation, BaseException, str], None] | None = None,
    ) -> None:
        self.mapping = dict(mapping or {})
        for kind, make in self.mapping.items():
            if not (isinstance(kind, type) and issubclass(kind, BaseException)) or not callable(make):
                raise TypeError(f"ErrorHandling: mapping is exception type -> callable making a JSONRPCError, not {kind!r}")
        self.on_error = on_error if on_error is not None else _log_error

    async def __call__(self, call: Invocation, call_next: Next) -> dict[str, Any]:
        try:
            return await call_next(call)
        except asyncio.CancelledError:
            raise
        except HandlerFailed as exc:
            cause = exc.__cause__
            mapped = self._mapped(cause) if isinstance(cause, Exception) else None
            if mapped is None:
                raise
            raise mapped from cause
        except JSONRPCError:
            raise
        except Exception as exc:
            mapped = self._mapped(exc)
            if mapped is not None:
                raise mapped from exc
            ref = secrets.token_hex(6)
            self.on_error(call, exc, ref)
            raise InternalError(
                f"Internal error: the server failed while handling {call.method} (ref {ref})", {"ref": ref}
            ) from exc

    def _mapped(self, exc: Exception) -> JSONRPCError | None:
        for kind in type(exc).__mro__:
            make = self.mapping.get(kind)
            if make is not None:
                mapped = make(exc)
                if not isinstance(mapped, JSONRPCError):
                    raise TypeError(f"ErrorHandling: mapping for {kind.__name__} returned {mapped!r}, not a JSONRPCError") from exc
                return mapped
        return None


def _log_error(call: Invocation, exc: BaseException, ref: str) -> None:
    log.error("request %r (%s) failed, ref %s", call.id, call.method, ref, exc_info=exc)
