"""Servers for the task tests, as real processes (fixtures: import them into the test module).

``@modelcontextprotocol/server-everything`` (pinned in everything/package.json)
advertises ``tasks.requests.tools.call``, ``tasks.list`` and ``tasks.cancel``;
its ``simulate-research-query`` tool (``execution.taskSupport: "required"``)
runs four one-second stages and, with ``ambiguous: true``, asks for an
elicitation through ``tasks/result``. It is installed with ``npm ci`` on
first use (a clean clone has no ``node_modules``); without npm or a recent
Node the tests skip on a developer machine and fail in CI.

Not a ``conftest.py``: the suite's ``from conftest import ...`` means
tests/conftest.py, and a second module of that name would replace it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest
from _servers import free_port, node20, npm_ci, serving_http

HERE = Path(__file__).resolve().parent
EVERYTHING_DIR = HERE / "everything"
EVERYTHING_JS = EVERYTHING_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
#: The tool of server-everything that always runs as a task.
RESEARCH = "simulate-research-query"


@pytest.fixture(scope="session")
def everything() -> list[str]:
    """The command that starts server-everything (append ``stdio`` or ``streamableHttp``)."""
    if not EVERYTHING_JS.exists():
        npm_ci(EVERYTHING_DIR, "@modelcontextprotocol/server-everything (tests/client/tasks/everything)")
    return [node20("@modelcontextprotocol/server-everything"), str(EVERYTHING_JS)]


@pytest.fixture
def everything_url(everything: list[str]) -> Iterator[str]:
    """server-everything over Streamable HTTP on a free loopback port (a 2025-11-25 HTTP server)."""
    port = free_port()
    with serving_http([*everything, "streamableHttp"], port, {"PORT": str(port)}) as url:
        yield url



class Wire:
    """An ``on_wire`` collector of what the client sends, decoded."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def __call__(self, direction: str, data: bytes) -> None:
        if direction == "send":
            self.sent.append(orjson.loads(data))

    def methods(self) -> list[str]:
        """The methods of the requests sent, in order."""
        return [m["method"] for m in self.sent if "method" in m and "id" in m]

    def requests(self, method: str) -> list[dict[str, Any]]:
        """The requests of ``method`` sent, in order."""
        return [m for m in self.sent if m.get("method") == method and "id" in m]
