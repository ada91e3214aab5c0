"""What the task runtime is given by its server (`TaskHost`), and what a request asks of it (`TaskOrder`).

Rules kept here:

* the runtime reaches into no server: the server passes, once, the few
  things a task needs of it (how a result is decorated with the server's
  ``_meta``, whether an extension applies to a request, how a handler's
  `Context` is made, how a tool's body is run), so the task engine and its
  adapters can be driven with stand-ins (tests/server/tasks/test_task_engine.py);
* a `TaskOrder` is an era adapter's decision that a ``tools/call`` becomes a
  task, with the TTL the request asked for (2025-11-25 ``params.task.ttl``;
  None: the server's), before the caps clamp it (`_limits.granted_ttl`).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Awaitable, Callable

if TYPE_CHECKING:
    from ...jsonrpc import RequestId
    from ...protocol.meta import RequestMeta
    from .._context import Context, Emit
    from .._tools import Tool

__all__ = ["TaskHost", "TaskOrder"]


@dataclasses.dataclass(frozen=True, slots=True)
class TaskHost:
    """The server's side of the task runtime (the callables it passes in `Server.enable_tasks`)."""

    #: A result as the server answers it (its ``_meta`` added).
    decorate: Callable[[dict[str, Any]], dict[str, Any]]
    #: Whether an extension applies to a request (declared here and by the request).
    negotiated: Callable[[RequestMeta, str], bool]
    #: The `Context` of a handler: ``(request id, method, meta, emit)``.
    context: Callable[[RequestId, str, RequestMeta, Emit | None], Context]
    #: Run a tool's body on prepared arguments with its context: the result, or an awaitable of it.
    run: Callable[[Tool, dict[str, Any], Context], dict[str, Any] | Awaitable[dict[str, Any]]]


@dataclasses.dataclass(frozen=True, slots=True)
class TaskOrder:
    """A ``tools/call`` becomes a task; ``ttl_ms``: the TTL it asked for (None: the server's)."""

    ttl_ms: int | None = None
