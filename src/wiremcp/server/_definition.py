"""What registration says about a user's function: errors at its ``def``, warnings a developer asks for.

Rules kept:

* an error about a function being registered (a type hint that does not
  resolve, a type with no JSON Schema, a bad default, a bad option) names the
  function's own ``def``: `at_def` makes the message start
  ``file:line: in def name(signature): ``, keeps the exception's type (a
  `SchemaError` stays one, ``except TypeError``/``ValueError`` keep working)
  and cuts its traceback. The registering method (``add_tool``,
  ``add_resource``, ``add_prompt``) raises it ``from None``, so the traceback
  a user reads is their own decorator line under at most two frames of ours
  (the decorator and the ``add_*`` call), with no chained exception;
* what registration accepts but a developer would want to know (a parameter
  with no type hint, a tool with no return annotation) is a `SchemaWarning`
  located at the ``def`` line. It is ignored unless asked for (a plain
  ``wiremcp run`` or ``python server.py`` prints nothing): it is issued only
  when ``WIREMCP_SCHEMA_WARNINGS=1`` is in the environment, which ``wiremcp
  dev`` sets for its server process; the ``warnings`` filters then apply as
  to any warning (``error`` makes it fatal, ``ignore`` silences it);
* what a running handler does that a developer would want to know is said
  only under ``wiremcp dev`` (`DEV`: ``WIREMCP_DEV=1`` in its server process,
  read once at import, so a server outside dev pays nothing): a handler
  that sent progress or a log message and then asked the client a question
  runs again from the top with the answer, so those repeat (a `RerunWarning`
  at its ``def``, `warn_rerun`); a tool that raised is told with the
  traceback of the user's code (`_failures`).
"""

from __future__ import annotations

import inspect
import linecache
import os
import warnings
from typing import Any, Callable

from ._failures import DEV, DEV_ENV  # (kept there: read at every server's start, this module is not)

__all__ = ["DEV", "DEV_ENV", "RerunWarning", "SchemaWarning", "SHOW_ENV", "at_def", "def_location", "warn_at_def", "warn_rerun"]


class SchemaWarning(UserWarning):
    """A function registered as it is but whose schema says less than it could (an untyped parameter, no return annotation).

    Issued only with ``WIREMCP_SCHEMA_WARNINGS=1`` (``wiremcp dev`` sets it).
    """


SchemaWarning.__module__ = "wiremcp.server.schema"  # its public home; tracebacks and -W name it so
#: The environment variable that asks for them (``wiremcp dev`` sets it for its server process).
#: Not a global warnings filter: a library must not change those, a ``-W`` option cannot name
#: our category (it is read before ``wiremcp`` can be imported), and pytest resets them per test.
SHOW_ENV = "WIREMCP_SCHEMA_WARNINGS"



class RerunWarning(UserWarning):
    """``wiremcp dev``: a handler did visible work (progress, a log message) before asking the client a question.

    With a 2026-07-28 client the handler runs again from the top once the answer comes, so that
    work is done again: ask first, or declare the inputs as parameters (docs/server.md, "Declared inputs").
    """


#: `warn_rerun`'s registry: each message is shown once per location (the ``default`` action), not every round.
_rerun_registry: dict[Any, Any] = {}

#: How far below the first decorator the ``def`` line is looked for.
_DECORATOR_LINES = 40


def def_location(fn: Any) -> tuple[str, int] | None:
    """``(file, line of the def)`` of a Python function (unwrapped), or None for anything else."""
    try:
        code = inspect.unwrap(fn).__code__
    except (AttributeError, ValueError):
        return None
    filename, first = code.co_filename, code.co_firstlineno  # the first decorator's line, if any
    lines = linecache.getlines(filename)
    for number in range(first, min(first + _DECORATOR_LINES, len(lines) + 1)):
        if lines[number - 1].lstrip().startswith(("def ", "async def ")):
            return filename, number
    return filename, first


def _shown(filename: str) -> str:
    """A file name as a user typed it: relative to the current folder when it is below it."""
    if not os.path.isabs(filename):
        return filename
    relative = os.path.relpath(filename)
    return filename if relative.startswith(os.pardir) else relative


class _Written:
    """An annotation shown as the text it was written as."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _where(fn: Any) -> str | None:
    location = def_location(fn)
    if location is None:
        return None
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        text = "(...)"
    else:  # a hint written as a string (or under `from __future__ import annotations`) shown as written
        params = [p.replace(annotation=_Written(p.annotation)) if isinstance(p.annotation, str) else p for p in signature.parameters.values()]
        returns = signature.return_annotation
        text = str(signature.replace(parameters=params, return_annotation=_Written(returns) if isinstance(returns, str) else returns))
    name = getattr(fn, "__name__", "?")
    return f"{_shown(location[0])}:{location[1]}: in def {name}{text}"


def at_def(fn: Any, exc: BaseException) -> BaseException:
    """``exc`` told at ``fn``'s ``def`` (same type, message prefixed), without a traceback; raise it ``from None``."""
    where = _where(fn)
    if where is None or str(exc).startswith(where):
        return exc.with_traceback(None)
    message = str(exc)
    qualname = getattr(fn, "__qualname__", None)
    if qualname and message.startswith((f"{qualname}: ", f"{qualname}, ")):
        message = message[len(qualname) + 2 :]  # the def says which function
    try:
        told = type(exc)(f"{where}: {message}")
    except Exception:  # an exception type that is not built from one message: keep it, add a note
        exc.add_note(where)
        return exc.with_traceback(None)
    return told.with_traceback(None)


def warn_at_def(fn: Callable[..., Any], message: str) -> None:
    """Issue a `SchemaWarning` located at ``fn``'s ``def`` line, when `SHOW_ENV` asks for them."""
    if os.environ.get(SHOW_ENV) != "1":
        return
    location = def_location(fn)
    if location is None:
        warnings.warn(message, SchemaWarning, stacklevel=2)
        return
    module = getattr(fn, "__module__", None) or "<unknown>"
    warnings.warn_explicit(message, SchemaWarning, location[0], location[1], module=module)


def warn_rerun(fn: Callable[..., Any] | None, message: str) -> None:
    """Issue a `RerunWarning` located at ``fn``'s ``def`` line (``wiremcp dev`` only: the caller checks `DEV`)."""
    location = def_location(fn) if fn is not None else None
    if location is None:
        warnings.warn(message, RerunWarning, stacklevel=2)
        return
    module = getattr(fn, "__module__", None) or "<unknown>"
    warnings.warn_explicit(message, RerunWarning, location[0], location[1], module=module, registry=_rerun_registry)
