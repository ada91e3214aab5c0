"""What every framework script of the matrix shares (stdlib only: it runs in each framework's environment).

A script is run as ``PYTHON script.py stdio COMMAND_JSON`` (``{"command", "args",
"env"}``: how to start the server) or ``PYTHON script.py http URL``. It connects
with its framework's own MCP client layer (no model, no network), runs the
checks its framework exposes, and prints one JSON line: ``{"package",
"version", "era", "checks"}`` where each check is ``"pass"``, ``"fail: why"``
or ``"n/a"`` (the framework has no way to ask for it). The checks, on
examples/everything.py (through tests/interop/frameworks/served.py):

* ``tools``: the tool list holds ``test_simple_text``;
* ``call``: ``test_simple_text`` answers its text;
* ``error``: ``test_error_handling`` comes back as a tool error (``isError``), with its message;
* ``progress``: ``test_tool_with_progress`` reports progress 0, 50, 100 to the client;
* ``resources``: ``test://static-text`` is listed and reads back;
* ``prompts``: ``test_prompt_with_arguments`` is listed and renders its arguments;
* ``era``: the ``protocol_era`` tool's answer (the version the request was sent in).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

CHECKS = ("tools", "call", "error", "progress", "resources", "prompts")
SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
STATIC_TEXT = "This is the content of the static text resource."
PROMPT_TEXT = "Prompt with arguments: arg1='a', arg2='b'"
PROGRESS = [0.0, 50.0, 100.0]


@dataclass
class Target:
    kind: str  # "stdio" or "http"
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""


@dataclass
class Report:
    package: str
    era: str = ""
    checks: dict[str, str] = field(default_factory=dict)

    async def check(self, name: str, run: Callable[[], Awaitable[Any]]) -> None:
        try:
            await asyncio.wait_for(run(), 60)
        except BaseException as exc:  # noqa: BLE001 - every failure is a result of the matrix
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self.checks[name] = f"fail: {type(exc).__name__}: {exc}"[:400]
        else:
            self.checks[name] = "pass"

    def not_offered(self, name: str) -> None:
        self.checks[name] = "n/a"


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def main(package: str, run: Callable[[Target, Report], Awaitable[None]]) -> None:
    kind, spec = sys.argv[1], sys.argv[2]
    target = Target("http", url=spec) if kind == "http" else Target("stdio", **json.loads(spec))
    report = Report(package)
    asyncio.run(run(target, report))
    for name in CHECKS:
        report.checks.setdefault(name, "fail: not run")
    out = {"package": package, "version": importlib.metadata.version(package), "era": report.era, "checks": report.checks}
    print(json.dumps(out), flush=True)


def is_error(result: Any) -> bool:
    """A CallToolResult's error flag (``isError`` in mcp 1.x, ``is_error`` in 2.x)."""
    return bool(getattr(result, "is_error", None) or getattr(result, "isError", None))


def first_text(blocks: Any) -> str:
    """The text of the first content block (or resource contents) of a list."""
    return str(getattr(blocks[0], "text", ""))
