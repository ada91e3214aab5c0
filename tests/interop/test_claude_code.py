"""Claude Code, the real host, against wiremcp servers: configured by ``wiremcp install``, called end to end.

The pinned ``@anthropic-ai/claude-code`` (tests/peers.py, NODE_PEERS) runs with a
HOME of its own (the user's configuration is never read nor written) and a
scripted Messages API on loopback for a model (`_messages_api.ScriptedModel`,
through ``ANTHROPIC_BASE_URL``); outbound traffic goes to a dead proxy, so
nothing leaves the machine. What is checked:

* ``wiremcp install claude-code`` writes a user-scope stdio server, a
  project-scope stdio server (``.mcp.json``) and a user-scope HTTP URL, and
  ``claude mcp list`` health-checks all three as connected;
* ``claude -p`` calls a tool of each (Claude Code names it
  ``mcp__<server>__<tool>``) and the tool's output reaches the model as the
  ``tool_result``;
* elicitation: the server's question reaches Claude Code, which answers it
  through its ``Elicitation`` hook (print mode has no one to ask), and the
  answer reaches the tool;
* a tool that takes a while reports progress with the token Claude Code sent;
* ``wiremcp tap`` around the server Claude Code runs logs no violation, the
  requests Claude Code leaves open when it exits included.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from _servers import wiremcp_http
from peers import node_peer

from ._messages_api import FINAL, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
CLAUDE_CODE = "claude-code-2.1.328"
SERVERS = ("wm-user", "wm-proj", "wm-http")

pytestmark = pytest.mark.timeout(600)


def _claude() -> str:
    return str(node_peer(CLAUDE_CODE) / "node_modules" / ".bin" / "claude")


class Host:
    """A Claude Code installation: its HOME, a project folder, and how to run it there."""

    def __init__(self, home: Path, project: Path, claude: str) -> None:
        self.home = home
        self.project = project
        self.claude = claude

    def env(self, model_url: str = "http://127.0.0.1:9") -> dict[str, str]:
        """Claude Code's environment: nothing inherited but PATH; every documented switch of outbound traffic off."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            # Anything else that tried to leave the machine would meet a closed port.
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            # Offer MCP tools to the model up front (no ToolSearch round), and wait for
            # every server before the first turn; a loaded machine starts servers slowly.
            "ENABLE_TOOL_SEARCH": "false",
            "MCP_CONNECTION_NONBLOCKING": "false",
            "MCP_TIMEOUT": "60000",
            "MCP_CONNECT_TIMEOUT_MS": "60000",
        }

    def run(self, *args: str, model_url: str = "http://127.0.0.1:9", timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.claude, *args], cwd=self.project, env=self.env(model_url), capture_output=True, text=True, timeout=timeout
        )

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[ScriptedModel, subprocess.CompletedProcess[str]]:
        """``claude -p`` with a model that calls ``tool`` once, then answers `FINAL`."""
        with ScriptedModel(tool, arguments) as model:
            done = self.run("-p", f"Use {tool}.", "--allowedTools", tool, model_url=model.url)
        return model, done


def _install(home: Path, project: Path, *args: str) -> None:
    env = {**os.environ, "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "install", "claude-code", *args, "-y"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _server_env() -> list[str]:
    # Claude Code starts a stdio server with a few variables of its own (PATH, HOME, ...), not ours:
    # the server's env names this tree's wiremcp.
    return ["--env", f"PYTHONPATH={ROOT / 'src'}"]


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    claude = _claude()
    home = tmp_path_factory.mktemp("claude-home")
    project = tmp_path_factory.mktemp("claude-project")
    with wiremcp_http(str(EVERYTHING)) as url:
        _install(home, project, str(EVERYTHING), "--name", "wm-user", "--scope", "user", *_server_env())
        _install(home, project, str(EVERYTHING), "--name", "wm-proj", "--scope", "project", *_server_env())
        _install(home, project, url, "--name", "wm-http", "--scope", "user")
        # What a user's "yes" does: trust the folder and approve its .mcp.json server.
        config = json.loads((home / ".claude.json").read_text())
        config.setdefault("projects", {})[str(project)] = {"hasTrustDialogAccepted": True}
        (home / ".claude.json").write_text(json.dumps(config, indent=2))
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["wm-proj"]}))
        # Print mode has no one to ask: an Elicitation hook answers the form (as a script would).
        answer = {"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}}
        hook = home / "answer.sh"
        hook.write_text(f"#!/bin/sh\ncat > {home / 'elicitation.json'}\necho '{json.dumps(answer)}'\n")
        hook.chmod(0o755)
        settings = {"hooks": {"Elicitation": [{"hooks": [{"type": "command", "command": str(hook)}]}]}}
        (home / ".claude").mkdir(exist_ok=True)
        (home / ".claude" / "settings.json").write_text(json.dumps(settings))
        yield Host(home, project, claude)


def test_install_wrote_where_claude_code_reads(host: Host) -> None:
    user = json.loads((host.home / ".claude.json").read_text())["mcpServers"]
    project = json.loads((host.project / ".mcp.json").read_text())["mcpServers"]
    assert user["wm-user"]["type"] == "stdio" and user["wm-http"]["type"] == "http"
    assert project["wm-proj"]["args"][-2:] == ["run", str(EVERYTHING)]
    done = host.run("mcp", "get", "wm-proj", timeout=120)
    assert done.returncode == 0 and "Scope: Project config" in done.stdout, done.stdout + done.stderr


def test_mcp_list_reports_every_server_connected(host: Host) -> None:
    done = host.run("mcp", "list", timeout=180)
    assert done.returncode == 0, done.stderr
    lines = {line.split(":", 1)[0]: line for line in done.stdout.splitlines() if ":" in line}
    for name in SERVERS:
        assert name in lines and "Connected" in lines[name], done.stdout


@pytest.mark.parametrize("server", SERVERS)
def test_print_mode_calls_a_tool_and_the_result_reaches_the_model(host: Host, server: str) -> None:
    tool = f"mcp__{server}__greet"
    model, done = host.call(tool, {"name": "Ada"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert tool in model.offered_tools()
    assert [r["content"] for r in model.tool_results] == [[{"type": "text", "text": "Hello, Ada!"}]]
    assert not model.tool_results[0].get("is_error")
    assert FINAL in done.stdout


def test_a_tool_error_reaches_the_model_as_an_error(host: Host) -> None:
    model, done = host.call("mcp__wm-user__test_error_handling", {})
    assert done.returncode == 0, done.stdout + done.stderr
    [result] = model.tool_results
    assert result.get("is_error") is True
    assert "This tool intentionally returns an error for testing" in json.dumps(result["content"])


@pytest.mark.parametrize("server", ["wm-user", "wm-http"])
def test_elicitation_reaches_the_host_and_its_answer_the_tool(host: Host, server: str) -> None:
    model, done = host.call(f"mcp__{server}__test_elicitation", {"message": "Who are you?"})
    assert done.returncode == 0, done.stdout + done.stderr
    asked = json.loads((host.home / "elicitation.json").read_text())
    assert asked["mcp_server_name"] == server and asked["message"] == "Who are you?"
    assert asked["requested_schema"]["required"] == ["username", "email"]
    text = model.tool_results[0]["content"][0]["text"]
    assert text == 'User response: action=accept, content={"username": "ada", "email": "ada@example.com"}'


def test_a_tool_that_takes_a_while_reports_progress_to_the_host(host: Host) -> None:
    model, done = host.call("mcp__wm-http__test_tool_with_progress", {})
    assert done.returncode == 0, done.stdout + done.stderr
    text = model.tool_results[0]["content"][0]["text"]
    assert text.startswith("Progress tool completed (token ") and "(token None)" not in text


def test_tap_around_the_server_claude_code_runs_finds_no_violation(host: Host, tmp_path: Path) -> None:
    log = tmp_path / "tap.jsonl"
    python = sys.executable
    served = [python, "-m", "wiremcp", "run", str(EVERYTHING)]
    added = host.run(
        "mcp", "add", "--scope", "user", "tapped", "-e", f"PYTHONPATH={ROOT / 'src'}", "--",
        python, "-m", "wiremcp", "tap", "--log", str(log), "--", *served, timeout=120,
    )
    assert added.returncode == 0, added.stdout + added.stderr
    try:
        model, done = host.call("mcp__tapped__test_tool_with_progress", {})
    finally:
        host.run("mcp", "remove", "--scope", "user", "tapped", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert model.tool_results and "Progress tool completed" in model.tool_results[0]["content"][0]["text"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    problems = [(r["dir"], r["msg"], r["problems"]) for r in records if r["problems"]]
    assert problems == []
    methods = [r["msg"].get("method") for r in records if r["msg"]]
    assert "tools/call" in methods and methods.count("notifications/progress") == 3
    # Claude Code probes with server/discover and falls back to initialize when the answer takes
    # longer than its bound (3 s on stdio, which a loaded machine can exceed: tap and the server
    # are two Python start-ups). Speaking 2026-07-28, it opens a subscriptions/listen that it
    # leaves open at exit: tap must not count that as a violation (checked above).
    if "initialize" not in methods:
        assert "subscriptions/listen" in methods, methods
    validated = subprocess.run([python, "-m", "wiremcp", "validate", str(log)], capture_output=True, text=True, timeout=60)
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_the_scripted_model_fails_a_host_that_never_sends_the_result() -> None:
    """The check above can fail: a conversation without the tool_result leaves nothing recorded."""
    with ScriptedModel("mcp__x__y") as model:
        import urllib.request

        body = {"model": "m", "stream": False, "tools": [{"name": "mcp__x__y"}], "messages": [{"role": "user", "content": "hi"}]}
        request = urllib.request.Request(model.url + "/v1/messages", json.dumps(body).encode(), {"content-type": "application/json"})
        answer = json.loads(urllib.request.urlopen(request, timeout=10).read())
    assert answer["content"][0]["type"] == "tool_use" and answer["stop_reason"] == "tool_use"
    assert model.tool_results == []


def test_claude_code_is_the_pinned_one(host: Host) -> None:
    done = host.run("--version", timeout=60)
    assert done.stdout.split()[0] == CLAUDE_CODE.rsplit("-", 1)[1]
    assert shutil.which("claude", path=str(Path(host.claude).parent)) == host.claude


def test_the_dry_runs_claude_mcp_add_is_a_command_claude_code_takes(tmp_path: Path) -> None:
    """``install claude-code --dry-run`` prints a ``claude mcp add`` line: run as printed, it adds a connected server."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "install", "claude-code", str(EVERYTHING), "--name", "wm-dry", "--dry-run",
         *_server_env()],
        cwd=project, env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (home / ".claude.json").exists()  # a dry run writes nothing
    lines = done.stderr.splitlines()
    printed = lines[lines.index("or with Claude Code's own command:") + 1].strip()
    words = shlex.split(printed)
    assert words[:3] == ["claude", "mcp", "add"], printed
    host = Host(home, project, _claude())
    added = host.run(*words[1:], timeout=120)
    assert added.returncode == 0, added.stdout + added.stderr
    shown = host.run("mcp", "get", "wm-dry", timeout=180)
    assert "Connected" in shown.stdout, shown.stdout + shown.stderr
    assert f"PYTHONPATH={ROOT / 'src'}" in shown.stdout
