"""Server settings: from `Server` arguments, else ``WIREMCP_*`` environment variables, else defaults.

Rules:

* an argument given to `Server(...)` (anything but ``None``) wins over the
  environment; the environment wins over the default;
* every variable is read once, when the `Server` is built; a value that does
  not parse is a `ValueError` naming the variable, never a silent default;
* booleans read ``1/true/yes/on`` and ``0/false/no/off`` (any case).

=============================  ============================  =========  =============================================
argument                       variable                      default    what
=============================  ============================  =========  =============================================
``threads``                    ``WIREMCP_THREADS``           40         worker threads for plain ``def`` handlers
``mask_errors``                ``WIREMCP_MASK_ERRORS``       true       hide exception text from clients
``log_level``                  ``WIREMCP_LOG_LEVEL``         (unset)    level of the ``wiremcp`` logger
``list_ttl_ms``                ``WIREMCP_LIST_TTL_MS``       60000      ``ttlMs`` of list results and discovery
``page_size``                  ``WIREMCP_PAGE_SIZE``         (none)     items per list page; none: one page
``state_ttl``                  ``WIREMCP_STATE_TTL``         600        seconds a ``requestState`` stays valid
``state_keys``                 ``WIREMCP_STATE_KEY``         (random)   keys sealing ``requestState`` (16+ bytes
                                                                        each; comma-separated: the first seals,
                                                                        any opens)
``backend``                    ``WIREMCP_REDIS_URL``         (none)     shared state in Redis (`wiremcp.backends`);
                                                                        none: in this process
``max_subscriptions``          ``WIREMCP_MAX_SUBSCRIPTIONS`` 1024       open ``subscriptions/listen`` streams
``client_request_timeout``     ``WIREMCP_CLIENT_TIMEOUT``    300        seconds a legacy client has to answer
``legacy``                     ``WIREMCP_LEGACY``            true       serve 2025-11-25 clients too
``legacy_log_level``           ``WIREMCP_LEGACY_LOG_LEVEL``  debug      log messages a legacy session gets before
                                                                        ``logging/setLevel``; ``off``: none
``shutdown_grace``             ``WIREMCP_SHUTDOWN_GRACE``    5          seconds requests get to finish on shutdown
``max_tasks``                  ``WIREMCP_MAX_TASKS``         10000      live tasks in the store (docs/limits.md)
``max_tasks_per_owner``        ``WIREMCP_MAX_OWNER_TASKS``   1000       live tasks of one owner
``task_max_ttl_ms``            ``WIREMCP_TASK_MAX_TTL_MS``   86400000   longest TTL a task is kept
=============================  ============================  =========  =============================================

The same table, with an example, is in docs/server.md ("Settings"). The HTTP
endpoint's caps have environment variables of their own, read by the
transport under the same rules (``wiremcp.transports.http.HTTP_ENV``,
docs/limits.md).
"""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Mapping, TypeVar

__all__ = [
    "ENV",
    "DEFAULT_THREADS",
    "DEFAULT_CLIENT_REQUEST_TIMEOUT",
    "DEFAULT_MAX_SESSION_SUBSCRIPTIONS",
    "DEFAULT_MAX_SUBSCRIPTIONS",
    "ENV_TASK_STORE",
    "setting",
    "parse_bool",
    "parse_level",
    "parse_mcp_level",
    "legacy_log_level_setting",
    "parse_keys",
    "apply_log_level",
]

T = TypeVar("T")

#: Argument name → environment variable.
ENV = {
    "threads": "WIREMCP_THREADS",
    "mask_errors": "WIREMCP_MASK_ERRORS",
    "log_level": "WIREMCP_LOG_LEVEL",
    "list_ttl_ms": "WIREMCP_LIST_TTL_MS",
    "page_size": "WIREMCP_PAGE_SIZE",
    "state_ttl": "WIREMCP_STATE_TTL",
    "state_keys": "WIREMCP_STATE_KEY",
    "backend": "WIREMCP_REDIS_URL",
    "max_subscriptions": "WIREMCP_MAX_SUBSCRIPTIONS",
    "client_request_timeout": "WIREMCP_CLIENT_TIMEOUT",
    "legacy": "WIREMCP_LEGACY",
    "legacy_log_level": "WIREMCP_LEGACY_LOG_LEVEL",
    "shutdown_grace": "WIREMCP_SHUTDOWN_GRACE",
    "max_tasks": "WIREMCP_MAX_TASKS",
    "max_tasks_per_owner": "WIREMCP_MAX_OWNER_TASKS",
    "task_max_ttl_ms": "WIREMCP_TASK_MAX_TTL_MS",
}

#: Worker threads for synchronous handlers, as anyio (FastMCP, the official SDK) defaults to.
DEFAULT_THREADS = 40
# The defaults of the features whose modules load on first use (`_legacy`, `_subscriptions`, which
# import them from here): a `Server` is built without importing them.
#: Seconds to wait for the client to answer a server-initiated request (a person may be typing).
DEFAULT_CLIENT_REQUEST_TIMEOUT = 300.0
#: Resource subscriptions (``resources/subscribe``) one legacy session may hold.
DEFAULT_MAX_SESSION_SUBSCRIPTIONS = 64
#: Open subscriptions one server process accepts before refusing new ones.
DEFAULT_MAX_SUBSCRIPTIONS = 1024
#: The variable naming the task store (`_tasks`, which imports it from here: a `Server` built
#: while it is unset does not import `_tasks`).
ENV_TASK_STORE = "WIREMCP_TASK_STORE"

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})


def parse_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{text!r} is not a boolean (1/true/yes/on or 0/false/no/off)")


def parse_level(text: str) -> str:
    level = text.strip().upper()
    if level not in _LEVELS:
        raise ValueError(f"{text!r} is not a log level ({', '.join(sorted(_LEVELS))})")
    return level


#: The MCP log levels (logging.mdx, RFC 5424), lowest first, and "off".
_MCP_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def parse_mcp_level(text: str) -> str:
    """``legacy_log_level``: an MCP log level, or ``off`` (nothing until ``logging/setLevel``)."""
    level = text.strip().lower()
    if level != "off" and level not in _MCP_LEVELS:
        raise ValueError(f"{text!r} is not an MCP log level ({', '.join(_MCP_LEVELS)}) or 'off'")
    return level


def legacy_log_level_setting(given: str | None) -> str | None:
    """``legacy_log_level``: the argument, else ``WIREMCP_LEGACY_LOG_LEVEL``, else ``debug``; None for ``off``."""
    level = parse_mcp_level(setting("legacy_log_level", given, "debug", parse_mcp_level))
    return None if level == "off" else level


def parse_keys(text: str) -> list[str]:
    """``WIREMCP_STATE_KEY``: one key, or several separated by commas (rotation: the first seals)."""
    keys = [key.strip() for key in text.split(",")]
    if any(not key for key in keys):
        raise ValueError("an empty key (keys are separated by commas, none may be empty)")
    return keys


def setting(
    name: str,
    given: T | None,
    default: T,
    parse: Callable[[str], T],
    environ: Mapping[str, str] | None = None,
) -> T:
    """The value of one setting: ``given`` if not None, else the environment's, else ``default``."""
    if given is not None:
        return given
    variable = ENV[name]
    raw = (os.environ if environ is None else environ).get(variable)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise ValueError(f"{variable}={raw!r}: {exc}") from None


def apply_log_level(level: Any) -> None:
    """Set the ``wiremcp`` logger's level (``None``: leave logging alone)."""
    if level is None:
        return
    if isinstance(level, str):
        level = parse_level(level)
    logging.getLogger("wiremcp").setLevel(level)
