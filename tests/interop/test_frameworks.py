"""The interoperability matrix, both directions, against the real peers (pinned in tests/peers.py).

* Client frameworks against wiremcp: each framework's own MCP client layer (no
  model, no network), in an environment of its own, runs the checks of
  tests/interop/frameworks/_harness.py against examples/everything.py (through
  frameworks/served.py), over stdio (the framework starts the server) and
  Streamable HTTP (``wiremcp run --http`` on loopback).
* wiremcp against other servers: ``wiremcp inspect``, ``call``, ``read`` and
  ``prompt`` (the CLI, on the wiremcp client) against a fastmcp 4.x server and
  official ``mcp`` 1.x servers (frameworks/foreign_server.py) and the npm
  ``@modelcontextprotocol/server-everything``, over stdio and HTTP.

Each cell (peer, direction, transport) is written to the last-run folder of
tests/interop/compat_table.py and must equal the committed cell of
tests/interop/compat_results.json, from which docs/compatibility.md is rendered:
the docs' table is the last run's, and a changed outcome fails here with the
command that accepts it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from _servers import free_port, node20, serving_http, wiremcp_http
from peers import NODE_PEERS, PYTHON_PEERS, node_peer, python_peer

from . import compat_table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FRAMEWORKS = HERE / "frameworks"
SERVED = FRAMEWORKS / "served.py"
FOREIGN = FRAMEWORKS / "foreign_server.py"

#: Client peers: peer name -> the script that drives its client layer.
CLIENTS: dict[str, str] = {
    "openai-agents-0.24.0": "openai_agents.py",
    "langchain-mcp-adapters-0.3.2": "langchain_mcp.py",
    "pydantic-ai-slim-2.68.0": "pydantic_ai_mcp.py",
    "fastmcp-4.2.3": "fastmcp_client.py",
    "mcp-use-1.7.1": "mcp_use_client.py",
    "llama-index-tools-mcp-0.6.0": "llama_index_mcp.py",
    "mcp-1.12.4": "official_mcp.py",
    "mcp-1.20.0": "official_mcp.py",
    "mcp-sdk-1.32.2": "ts_sdk.cjs",
}
#: Server peers the wiremcp CLI is pointed at.
SERVERS = ("fastmcp-4.2.3", "mcp-1.12.4", "mcp-1.20.0", "server-everything-2026.8.31")
TRANSPORTS = ("stdio", "http")
ACCEPT = "python tests/interop/compat_table.py --update"

pytestmark = pytest.mark.timeout(600)


def _pythonpath() -> str:
    return os.pathsep.join([str(ROOT / "src"), str(ROOT)])


def _peer_env() -> dict[str, str]:
    """A peer runs with nothing of ours: no PYTHONPATH, no virtual environment."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}


def _record(cell: dict[str, Any], folder: Path | None = None) -> None:
    """Leave the observed cell in the last-run folder, then compare it with the committed one."""
    folder = compat_table.last_run_dir() if folder is None else folder
    folder.mkdir(parents=True, exist_ok=True)
    key = compat_table.cell_key(cell)
    (folder / f"{key.replace(':', '__')}.json").write_text(json.dumps(cell, indent=1, ensure_ascii=False), encoding="utf-8")
    committed = compat_table.load().get(key)
    assert cell == committed, (
        f"{key}: this run found\n{json.dumps(cell, indent=1)}\nthe committed table says\n{json.dumps(committed, indent=1)}\n"
        f"if this run is right, accept it: {ACCEPT}"
    )


# -- client frameworks against wiremcp ----------------------------------------------------------------


@pytest.fixture(scope="module")
def served_url() -> Iterator[str]:
    with wiremcp_http(str(SERVED), env={"PYTHONPATH": _pythonpath()}) as url:
        yield url


def _client_argv(peer: str, transport: str, url: str) -> list[str]:
    script = FRAMEWORKS / CLIENTS[peer]
    if transport == "stdio":
        spec = json.dumps({"command": sys.executable, "args": ["-m", "wiremcp", "run", str(SERVED)], "env": {"PYTHONPATH": _pythonpath()}})
        how = ["stdio", spec]
    else:
        how = ["http", url]
    if script.suffix == ".cjs":
        return [node20("the TypeScript SDK"), str(script), str(node_peer(peer)), *how]
    return [str(python_peer(peer)), str(script), *how]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("peer", sorted(CLIENTS))
def test_client_framework_against_wiremcp(peer: str, transport: str, served_url: str) -> None:
    done = subprocess.run(
        _client_argv(peer, transport, served_url), env=_peer_env(), cwd=FRAMEWORKS, capture_output=True, text=True, timeout=300
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, f"{peer} over {transport} did not report ({done.returncode}):\n{done.stdout}\n{done.stderr[-4000:]}"
    report = json.loads(lines[-1])
    cell = {"direction": "client", "peer": peer, "transport": transport, **report}
    _record(cell)


# -- wiremcp against other servers --------------------------------------------------------------------


#: Per server kind: the CLI arguments of each check, and what its output must hold.
FOREIGN_CHECKS: dict[str, tuple[list[str], int, str]] = {
    "call": (["call", "add", "a=2", "b=3"], 0, "sum=5"),
    "error": (["call", "fail"], 1, "this tool always fails"),
    "progress": (["call", "slow"], 0, "slow done"),
    "read": (["read", "data://greeting"], 0, "hello from a foreign server"),
    "prompt": (["prompt", "greet", "name=Ada"], 0, "Please greet Ada."),
}
EVERYTHING_CHECKS: dict[str, tuple[list[str], int, str]] = {
    "call": (["call", "get-sum", "a=2", "b=3"], 0, "The sum of 2 and 3 is 5."),
    "error": (["call", "echo"], 1, "Input validation error"),
    "progress": (["call", "trigger-long-running-operation", "duration=1", "steps=3"], 0, "Long running operation completed"),
    "read": (["read", "demo://resource/static/document/features.md"], 0, "#"),
    "prompt": (["prompt", "args-prompt", "city=Paris"], 0, "Paris"),
}


class ServerPeer:
    """How to reach one server peer over one transport, and which checks it answers."""

    def __init__(self, peer: str, transport: str) -> None:
        self.peer = peer
        self.transport = transport
        self.everything = peer.startswith("server-everything")
        self.checks = EVERYTHING_CHECKS if self.everything else FOREIGN_CHECKS
        self.package = "@modelcontextprotocol/server-everything" if self.everything else peer.rsplit("-", 1)[0]

    def installed_version(self) -> str:
        """The version the package manager installed (not the pin: the two are compared later)."""
        if self.everything:
            manifest = self._everything_js().parents[1] / "package.json"
            return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
        code = f"import importlib.metadata as m; print(m.version({self.package!r}))"
        return subprocess.run([str(python_peer(self.peer)), "-c", code], capture_output=True, text=True, timeout=60).stdout.strip()

    def stdio_argv(self) -> list[str]:
        if self.everything:
            return [node20("server-everything"), str(self._everything_js()), "stdio"]
        return [str(python_peer(self.peer)), str(FOREIGN)]

    def _everything_js(self) -> Path:
        return node_peer(self.peer) / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

    def http(self) -> Any:
        port = free_port()
        if self.everything:
            return serving_http([node20("server-everything"), str(self._everything_js()), "streamableHttp"], port, {"PORT": str(port)})
        return serving_http([str(python_peer(self.peer)), str(FOREIGN), "--http", str(port)], port, _peer_env())


def _run_checks(server: ServerPeer, run: Callable[[list[str]], subprocess.CompletedProcess[str]]) -> dict[str, Any]:
    inspected = run(["inspect"])
    era_line = re.search(r"^era: (\w+), protocol version (\S+)$", inspected.stdout, re.M)
    version_line = inspected.stdout.splitlines()[0] if inspected.stdout else ""
    checks = {"inspect": "pass" if inspected.returncode == 0 and "tools (" in inspected.stdout else f"fail: {inspected.stderr[-300:]}"}
    for name, (args, status, expected) in server.checks.items():
        done = run(args)
        progress = len(re.findall(r"^progress ", done.stderr, re.M))  # the CLI shows progress on stderr
        ok = done.returncode == status and expected in done.stdout + done.stderr and (name != "progress" or progress == 3)
        checks[name] = "pass" if ok else f"fail: exit {done.returncode}: {(done.stdout + done.stderr)[-300:]}"
    return {
        "package": server.package,
        "version": server.installed_version(),
        "served_as": version_line,
        "era": f"{era_line.group(2)} ({era_line.group(1)})" if era_line else "none",
        "checks": checks,
    }


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("peer", SERVERS)
def test_wiremcp_cli_against_a_foreign_server(peer: str, transport: str) -> None:
    server = ServerPeer(peer, transport)
    base = [sys.executable, "-m", "wiremcp"]
    if transport == "stdio":
        target = server.stdio_argv()

        def run(args: list[str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*base, args[0], "--no-color", "-q", *args[1:], "--", *target], capture_output=True, text=True, timeout=120)

        found = _run_checks(server, run)
    else:
        with server.http() as url:

            def run(args: list[str]) -> subprocess.CompletedProcess[str]:
                return subprocess.run([*base, args[0], "--no-color", url, *args[1:]], capture_output=True, text=True, timeout=120)

            found = _run_checks(server, run)
    _record({"direction": "server", "peer": peer, "transport": transport, **found})


# -- the table ------------------------------------------------------------------------------------------


def test_the_docs_table_is_rendered_from_the_committed_results() -> None:
    page = compat_table.PAGE.read_text(encoding="utf-8")
    assert page == compat_table.render(compat_table.load()), f"docs/compatibility.md is stale: {ACCEPT}"


def test_the_committed_results_cover_the_pinned_peers_and_no_other() -> None:
    results = compat_table.load()
    expected = {f"client:{p}:{t}" for p in CLIENTS for t in TRANSPORTS} | {f"server:{p}:{t}" for p in SERVERS for t in TRANSPORTS}
    assert set(results) == expected, f"run the matrix, then {ACCEPT}"
    for cell in results.values():
        assert cell["peer"] in PYTHON_PEERS or cell["peer"] in NODE_PEERS
        assert cell["peer"].endswith("-" + cell["version"]), f"{cell['peer']} reported version {cell['version']}"


def test_a_changed_outcome_fails_the_matrix(tmp_path: Path) -> None:
    """The comparison can fail: a cell that differs from the committed one is refused, with the command."""
    cell = dict(next(iter(compat_table.load().values())))
    cell["checks"] = {**cell["checks"], "call": "fail: on purpose"}
    with pytest.raises(AssertionError, match=re.escape(ACCEPT)):
        _record(cell, tmp_path)
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["checks"]["call"] == "fail: on purpose"
