"""The checks of the other modules of ``wiremcp check``, run when their module is present.

* ``_tools``, given what the tour listed (`_eras.tour`):
  ``check_tools(tools, era=...)``, ``check_prompts(prompts)``,
  ``check_resources(resources)`` (resources and templates); with ``--pin
  FILE``: a pin file that exists is compared (``check_pin(tools, pinned)``),
  one that does not is written (``pin(tools)``).
* ``_tools.check_tool_result(tool, result)`` on each tool the tour called
  (`_calls`); its rules (``RESULT_RULES``) count as run only when a tool
  was called.
* ``_hosts``: ``check_hosts(spoken=..., initialize=..., tools=..., server=...,
  transport=..., listed=...)``, each major host's needs (the host table)
  against the eras the server speaks, its ``initialize`` answer, the
  target's transport and what the tour listed.
* ``_http_security``, over HTTP: ``async check_http_security(url,
  auth=..., issuer=..., headers=...)`` (``--auth``: the server is protected;
  ``--issuer DIR`` / ``--auth-dev``: a local issuer it trusts; the ``-H``
  headers, an ``Authorization`` among them, go with its probes). With ``--auth`` and no
  issuer, the token rules are ``check-not-run`` with a hint naming the
  options; with an issuer and no ``Authorization`` header of the user's,
  every session of the other probes carries a good token of it
  (`authorize`, before the first session).

A module that is absent, or lacks a function, is skipped; the rules a
module declares count as run once its checks ran (so a clean run shows
them passed). A pin file that cannot be read, or is not a pin, is a
`UsageError` (status 2).
"""

from __future__ import annotations

import importlib
import json
from typing import Any, Callable

from dataclasses import replace

from .._output import UsageError
from ._calls import RESULT_RULES, Called
from ._context import Target
from ._findings import CHECK_NOT_RUN, RULES, Finding, Rule

__all__ = ["run_extra", "load_rules", "authorize"]

_TOKEN_RULES = ("security-auth-audience", "security-auth-expired", "security-auth-signature", "security-auth-unsigned")
_ISSUER_HINT = (
    "needs a local issuer the server trusts: pass --issuer DIR (a `wiremcp auth dev` state directory) or --auth-dev"
)


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
    _module("_hosts")
    _module("_http_security")


async def run_extra(target: Target, report: Any, ran: Callable[..., None], options: dict[str, Any] | None) -> list[Finding]:
    """The findings of the other modules' checks on ``target`` and what ``report`` listed."""
    options = options or {}
    found: list[Finding] = []
    tools_module = _module("_tools")
    if tools_module is not None and report.listed_era:
        found += _listed(tools_module, report.listed, report.listed_era, options.get("pin"))
        found += _results(tools_module, report.called)
        ran(*(r for r in _declared(tools_module) if report.called or r.id not in RESULT_RULES))
    hosts_module = _module("_hosts")
    if hosts_module is not None and report.spoken:
        found += list(hosts_module.check_hosts(
            spoken=report.spoken, initialize=report.initialize, tools=report.listed.get("tools", []), server=options.get("server_name"),
            transport="http" if target.url else "stdio", listed=report.listed if report.listed_era else None,
        ))
        ran(*(r for r in _declared(hosts_module)
              if report.listed_era or not (r.id == "host-tool-name-prefix-length" or r.id.endswith("-features"))))
    check_http = getattr(_module("_http_security"), "check_http_security", None) if target.url else None
    if check_http is not None:
        auth, issuer = bool(options.get("auth")), options.get("issuer")
        found += list(await check_http(target.url, auth=auth, issuer=issuer, headers=dict(target.headers)))
        if auth and issuer is None:
            found += [Finding(CHECK_NOT_RUN, f"{rid}: {_ISSUER_HINT}", target.url) for rid in _TOKEN_RULES]
        tokens = auth and issuer is not None
        ran(*(r for r in _declared(_module("_http_security"))
              if (auth or not r.id.startswith("security-auth-")) and (tokens or r.id not in _TOKEN_RULES)))
    return found


async def authorize(target: Target, options: dict[str, Any] | None) -> None:
    """With an issuer (``--issuer``/``--auth-dev``) and no ``Authorization`` of the user's: a good token in ``target``'s headers."""
    issuer = (options or {}).get("issuer")
    if issuer is None or not target.url or any(name.lower() == "authorization" for name in target.headers):
        return
    token_for = getattr(_module("_http_security"), "token_for", None)
    if token_for is not None:
        target.headers["Authorization"] = f"Bearer {await token_for(target.url, issuer)}"


def _listed(module: Any, listed: dict[str, list[dict[str, Any]]], era: str, pin_path: str | None) -> list[Finding]:
    found: list[Finding] = []
    tools = listed.get("tools", [])
    calls: tuple[tuple[str, list[dict[str, Any]], dict[str, Any]], ...] = (
        ("check_tools", tools, {"era": era}),
        ("check_prompts", listed.get("prompts", []), {}),
        ("check_resources", listed.get("resources", []) + listed.get("resourceTemplates", []), {}),
    )
    for name, items, keywords in calls:
        check = getattr(module, name, None)
        if check is not None:
            found += list(check(items, **keywords))
    if pin_path:
        found += _pin(module, tools, pin_path)
    return found


def _results(module: Any, called: list[Called]) -> list[Finding]:
    """The result rules on each tool called (`_calls`), each finding with the call's envelopes."""
    check = getattr(module, "check_tool_result", None)
    if check is None:
        return []
    return [replace(found, envelopes=call.envelopes) for call in called for found in check(call.tool, call.result)]


def _pin(module: Any, tools: list[dict[str, Any]], path: str) -> list[Finding]:
    """``--pin FILE``: compare the tools with the pin FILE holds, or write it on the first run."""
    try:
        with open(path, "rb") as handle:
            pinned = json.loads(handle.read())
    except FileNotFoundError:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(module.pin(tools), handle, indent=2, sort_keys=True)
            handle.write("\n")
        return []
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the pin file {path}: {exc}") from None
    try:
        return list(module.check_pin(tools, pinned))
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None


def _declared(module: Any) -> list[Rule]:
    values = [v for value in vars(module).values() for v in (value.values() if type(value) is dict else (value,))]
    return [value for value in values if isinstance(value, Rule) and RULES.get(value.id) is value]
