"""A tool's ``task=`` option and the defaults a server starts from, without the runtime.

Rules:

* importing this module imports no event loop (`Server` and the tool
  decorator need these names at start-up; `_runtime` is loaded when a tool
  may become a task);
* ``task=`` is ``"never"`` (None here), ``"auto"``, ``"always"`` or a
  function of the arguments deciding per call; anything else is a
  ValueError at registration.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Union

__all__ = ["TaskMode", "DEFAULT_TASK_TTL_MS", "DEFAULT_POLL_INTERVAL_MS", "check_task_mode"]

#: How a tool becomes a task: see the module docstring.
TaskMode = Union[Literal["never", "auto", "always"], Callable[[dict[str, Any]], bool]]

#: A task's time to live, from creation, unless the server or (2025-11-25) the request says otherwise.
DEFAULT_TASK_TTL_MS = 3_600_000
#: The polling interval suggested to clients.
DEFAULT_POLL_INTERVAL_MS = 500

def check_task_mode(mode: Any, where: str) -> TaskMode | None:
    """A tool's ``task=`` option, checked at registration; None for ``"never"``."""
    if mode == "never":
        return None
    if mode in ("auto", "always") or callable(mode):
        return mode  # type: ignore[no-any-return]  # narrowed by the checks above
    raise ValueError(f"{where}: task= is 'never', 'auto', 'always' or a function (arguments) -> bool, not {mode!r}")
