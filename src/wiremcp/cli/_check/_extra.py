"""The checks of the other modules of ``wiremcp check``, run when their module is present.

* ``_tools``: the tools' schemas, names and descriptions, given the tools
  ``tools/list`` returned: ``check_tools(tools) -> list[Finding]``.
* ``_http_security``: over HTTP, given the URL, the headers and the
  timeout: ``async check_http(url, headers, timeout) -> list[Finding]``.

A module that is absent, or that has no such function, is skipped; the
rules a module declares count as run once its check ran (so a clean run
shows them passed).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

from ._context import Target
from ._findings import RULES, Finding, Rule

__all__ = ["run_extra", "load_rules"]


def _module(name: str) -> Any:
    try:
        return importlib.import_module(f"{__package__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__package__}.{name}":
            return None
        raise


def load_rules() -> None:
    """Import the other modules, so that every rule is declared (``--only``/``--skip`` check names against them)."""
    _module("_tools")
    _module("_http_security")


async def run_extra(target: Target, tools: list[dict[str, Any]], ran: Callable[..., None]) -> list[Finding]:
    found: list[Finding] = []
    tools_module = _module("_tools")
    check_tools = getattr(tools_module, "check_tools", None)
    if check_tools is not None:
        found += list(check_tools(tools))
        ran(*_declared(tools_module))
    if target.url:
        http_module = _module("_http_security")
        check_http = getattr(http_module, "check_http", None)
        if check_http is not None:
            result = check_http(target.url, dict(target.headers), target.timeout)
            found += list(await result if inspect.isawaitable(result) else result)
            ran(*_declared(http_module))
    return found


def _declared(module: Any) -> list[Rule]:
    return [value for value in vars(module).values() if isinstance(value, Rule) and RULES.get(value.id) is value]
