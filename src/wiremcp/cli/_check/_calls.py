"""Calling tools for the result rules of ``wiremcp check`` (``schema-output-*``): which ones, with what, and what came back.

Rules:

* Calling a tool has effects, so ``check`` calls only a tool whose
  annotations say ``readOnlyHint: true``, and a tool the user names with
  ``--call TOOL[=JSON]`` (its arguments, a JSON object; ``{}`` without).
* A read-only tool whose ``inputSchema`` requires arguments, and that
  ``--call`` does not name, is not called: a ``check-not-run`` note names it
  and how to call it. A ``--call`` naming no tool listed is one too.
* The calls are made after the tour, in the era that listed the tools, one
  ``tools/call`` each in the order listed, in a session of their own (the
  runner's ``call_tools``). An error answer, a result that is not complete
  (an ``InputRequiredResult``), no answer within ``--timeout`` or a server
  that exits is a ``check-not-run`` note naming the tool: it returned no
  result to judge (a slow tool is not a slow answer of the protocol's; the
  next call gets a fresh session). Every result is kept (`Called`) for
  `_tools.check_tool_result`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._conn import Session
from ._context import Era
from ._findings import CHECK_NOT_RUN, Finding

__all__ = ["Called", "parse_call", "plan", "call_tools", "RESULT_RULE", "RESULT_RULES"]

#: the rule a note of a tool not called names
RESULT_RULE = "schema-output-conforms"
#: the rules judged on results (`_tools`): run only when a tool was called
RESULT_RULES = ("schema-output-conforms", "schema-output-present", "schema-output-text")


@dataclass(frozen=True)
class Called:
    """A tool called: its definition (from the listing), the arguments sent, and the result."""

    tool: dict[str, Any]
    arguments: dict[str, Any]
    result: dict[str, Any]
    envelopes: tuple[str, ...] = ()  # the call and its answer, as the findings show them


def parse_call(word: str) -> tuple[str, dict[str, Any]]:
    """``TOOL`` or ``TOOL=JSON`` (an object) of ``--call``; a `ValueError` says what is wrong."""
    name, sep, text = word.partition("=")
    if not name:
        raise ValueError(f"--call {word!r}: give TOOL or TOOL=JSON_ARGS")
    if not sep:
        return name, {}
    try:
        arguments = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--call {name}: the arguments are not JSON ({exc})") from None
    if type(arguments) is not dict:
        raise ValueError(f"--call {name}: the arguments are a JSON object, not {text[:40]!r}")
    return name, arguments


def _read_only(tool: dict[str, Any]) -> bool:
    annotations = tool.get("annotations")
    return type(annotations) is dict and annotations.get("readOnlyHint") is True


def _required(tool: dict[str, Any]) -> list[str]:
    schema = tool.get("inputSchema")
    required = schema.get("required") if type(schema) is dict else None
    return [r for r in required if type(r) is str] if type(required) is list else []


def plan(tools: list[dict[str, Any]], calls: dict[str, dict[str, Any]]) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], list[Finding]]:
    """The tools to call with their arguments, and the notes on those not called."""
    planned: list[tuple[dict[str, Any], dict[str, Any]]] = []
    notes: list[Finding] = []
    names = {tool.get("name") for tool in tools}
    for tool in tools:
        name = tool.get("name")
        if type(name) is not str:
            continue
        if name in calls:
            planned.append((tool, calls[name]))
        elif _read_only(tool):
            required = _required(tool)
            if required:
                why = (f"{RESULT_RULE}: the read-only tool {name} needs arguments ({', '.join(required)}) and was not called; "
                       f"give them with --call '{name}={{...}}'")
                notes.append(Finding(CHECK_NOT_RUN, why, f"tool {name}"))
            else:
                planned.append((tool, {}))
    for name in sorted(set(calls) - names):
        notes.append(Finding(CHECK_NOT_RUN, f"{RESULT_RULE}: --call {name}: the server lists no such tool", f"tool {name}"))
    return planned, notes


async def call_tools(session: Session, era: Era, planned: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[list[Called], list[Finding]]:
    """Call each planned tool in ``session``; the results, and notes on calls that returned none."""
    called: list[Called] = []
    notes: list[Finding] = []
    for tool, arguments in planned:
        name = tool["name"]
        since = len(session.transcript)
        response = await era.request(session, "tools/call", {"name": name, "arguments": arguments})
        result = response.get("result") if type(response) is dict else None
        if type(result) is not dict:
            error = response.get("error") if type(response) is dict else None
            shown = json.dumps(error)[:200] if error is not None else "no result"
            notes.append(Finding(CHECK_NOT_RUN, f"{RESULT_RULE}: tools/call {name} got {shown}", f"tool {name}"))
        elif result.get("resultType", "complete") != "complete":
            notes.append(Finding(CHECK_NOT_RUN, f"{RESULT_RULE}: tools/call {name} asked for input ({result.get('resultType')})", f"tool {name}"))
        else:
            called.append(Called(tool, arguments, result, session.envelopes(since)))
    return called, notes
