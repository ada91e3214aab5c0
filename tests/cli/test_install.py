"""``wiremcp install`` / ``uninstall`` for every host, in a temporary HOME.

For each host and scope: a configuration already there keeps its other
servers and keys, a second install changes no byte, the command written
starts the server from another folder with only the written environment (a
host's bare environment: no venv activated, another cwd) and a tool answers,
and ``uninstall`` gives back the original bytes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wiremcp.cli._install import HOSTS, config_path
from wiremcp.client import Client

pytestmark = pytest.mark.slow

SRC = str(Path(__file__).resolve().parents[2] / "src")

SERVER = '''import os
import wiremcp

server = wiremcp.Server("installed", version="1.0")


@server.tool()
def where() -> str:
    """The server's working directory and its GREETING variable."""
    return f"{os.getcwd()}|{os.environ.get('GREETING', '')}"
'''

#: (host, scope, the file relative to HOME or, for project scopes, the project folder)
CASES = [
    ("claude-desktop", "user", "home", ".config/Claude/claude_desktop_config.json"),
    ("claude-code", "user", "home", ".claude.json"),
    ("claude-code", "project", "project", ".mcp.json"),
    ("cursor", "user", "home", ".cursor/mcp.json"),
    ("cursor", "project", "project", ".cursor/mcp.json"),
    ("vscode", "project", "project", ".vscode/mcp.json"),
    ("vscode", "user", "home", ".config/Code/User/mcp.json"),
    ("windsurf", "user", "home", ".codeium/windsurf/mcp_config.json"),
]


class Box:
    """A temporary HOME, a project folder with a server file, and another folder to start it from."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.elsewhere = root / "elsewhere"
        for folder in (self.home, self.project, self.elsewhere):
            folder.mkdir()
        (self.project / "srv.py").write_text(SERVER)
        self.env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA", "PYTHONPATH")}
        self.env["HOME"] = str(self.home)
        self.env["PYTHONPATH"] = SRC  # the CLI of this tree (a worktree's tests must not run the installed one)

    def wiremcp(self, *args: str, stdin: Any = subprocess.DEVNULL, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wiremcp", *args], capture_output=True, text=True, timeout=60,
            cwd=self.project, env=env or self.env, stdin=stdin,
        )

    def file(self, base: str, relative: str) -> Path:
        return (self.home if base == "home" else self.project) / relative


@pytest.fixture
def box(tmp_path: Path) -> Box:
    """A fresh `Box` in the test's own temporary folder."""
    return Box(tmp_path)


def start_and_call(entry: dict[str, Any], cwd: Path, home: Path) -> str:
    """Start the server as a host would (a bare environment plus the entry's), call `where`."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **entry.get("env", {})}

    async def main() -> str:
        async with Client.stdio(entry["command"], entry["args"], env=env, cwd=str(cwd)) as client:
            return (await client.call_tool("where", {})).text

    return asyncio.run(asyncio.wait_for(main(), 60))


@pytest.mark.parametrize(("host", "scope", "base", "relative"), CASES)
def test_install_keeps_the_rest_is_idempotent_starts_and_uninstalls_cleanly(
    box: Box, host: str, scope: str, base: str, relative: str
) -> None:
    key = HOSTS[host].key
    path = box.file(base, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = (
        '{\n  "theme": "dark",\n  "numbers": [1, 2.5, true, null],\n'
        f'  "{key}": {{\n    "other": {{"command": "node", "args": ["other.js"]}}\n  }}\n}}\n'
    ).encode()
    path.write_bytes(original)
    os.chmod(path, 0o640)

    done = box.wiremcp("install", host, "srv.py", "--scope", scope, "--env", "GREETING=hello world", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"-m wiremcp run {box.project / 'srv.py'}" in done.stderr  # the exact command was shown
    config = json.loads(path.read_text())
    assert config["theme"] == "dark" and config["numbers"] == [1, 2.5, True, None]
    assert config[key]["other"] == {"command": "node", "args": ["other.js"]}
    entry = config[key]["srv"]
    assert entry["command"] == os.path.abspath(sys.executable) and os.path.isabs(entry["args"][-1])
    assert entry["env"] == {"GREETING": "hello world"}
    assert path.with_name(path.name + ".bak").read_bytes() == original
    assert oct(path.stat().st_mode & 0o777) == oct(0o640)

    installed = path.read_bytes()
    again = box.wiremcp("install", host, "srv.py", "--scope", scope, "--env", "GREETING=hello world", "--yes")
    assert again.returncode == 0 and "nothing to change" in again.stderr
    assert path.read_bytes() == installed

    assert start_and_call(entry, box.elsewhere, box.home) == f"{box.elsewhere}|hello world"

    gone = box.wiremcp("uninstall", host, "srv", "--scope", scope, "--yes")
    assert gone.returncode == 0, gone.stderr
    assert path.read_bytes() == original


def test_the_default_scopes_and_a_fresh_file(box: Box) -> None:
    assert box.wiremcp("install", "vscode", "srv.py", "--yes").returncode == 0
    vscode = box.project / ".vscode" / "mcp.json"
    assert json.loads(vscode.read_text())["servers"]["srv"]["type"] == "stdio"
    assert box.wiremcp("install", "claude-code", "srv.py", "--yes").returncode == 0
    claude = box.home / ".claude.json"
    entry = json.loads(claude.read_text())["mcpServers"]["srv"]
    assert entry["type"] == "stdio" and entry["env"] == {}
    assert oct(claude.stat().st_mode & 0o777) == oct(0o600)  # a new file is private: it may hold secrets
    assert box.wiremcp("uninstall", "claude-code", "srv", "--yes").returncode == 0
    assert not claude.exists()  # wiremcp created it for this server alone


def test_a_different_server_of_the_same_name_needs_force(box: Box) -> None:
    assert box.wiremcp("install", "cursor", "srv.py", "--yes").returncode == 0
    path = box.home / ".cursor" / "mcp.json"
    before = path.read_bytes()
    clash = box.wiremcp("install", "cursor", "srv.py", "--env", "A=1", "--yes")
    assert clash.returncode == 1 and "already has a different server named 'srv'" in clash.stderr and "--force" in clash.stderr
    assert path.read_bytes() == before
    forced = box.wiremcp("install", "cursor", "srv.py", "--env", "A=1", "--yes", "--force")
    assert forced.returncode == 0
    assert json.loads(path.read_text())["mcpServers"]["srv"]["env"] == {"A": "1"}
    assert path.with_name("mcp.json.bak").read_bytes() == before  # one backup: the last content


def test_without_a_terminal_and_without_yes_nothing_is_written(box: Box) -> None:
    done = box.wiremcp("install", "windsurf", "srv.py")
    assert done.returncode == 2 and "--yes" in done.stderr
    assert "command:" in done.stderr  # shown even so
    assert not (box.home / ".codeium").exists()


def test_dry_run_prints_the_new_file_and_writes_nothing(box: Box) -> None:
    done = box.wiremcp("install", "claude-desktop", "srv.py", "--dry-run")
    assert done.returncode == 0
    assert json.loads(done.stdout)["mcpServers"]["srv"]["args"][-1] == str(box.project / "srv.py")
    assert not (box.home / ".config").exists()


def test_mcp_json_prints_the_entry_for_any_host(box: Box) -> None:
    done = box.wiremcp("install", "mcp-json", "srv.py", "--name", "mine", "--env-file", str(write(box.project / ".env", "# c\nexport A='x y'\nB=2\n")))
    assert done.returncode == 0
    entry = json.loads(done.stdout)["mcpServers"]["mine"]
    assert entry["env"] == {"A": "x y", "B": "2"}
    assert list(box.home.iterdir()) == []


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_module_target_starts_from_any_folder(box: Box) -> None:
    package = box.project / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(SERVER)
    done = box.wiremcp("install", "cursor", "mypkg.server:server", "--yes")
    assert done.returncode == 0, done.stderr
    entry = json.loads((box.home / ".cursor" / "mcp.json").read_text())["mcpServers"]["server"]
    assert entry["env"] == {"PYTHONPATH": str(box.project)}
    assert start_and_call(entry, box.elsewhere, box.home) == f"{box.elsewhere}|"
    missing = box.wiremcp("install", "cursor", "nopkg.nothing:app", "--yes")
    assert missing.returncode == 2 and "cannot find the module 'nopkg.nothing'" in missing.stderr


def test_urls_where_the_host_takes_them(box: Box) -> None:
    url = "https://mcp.example.com/mcp"
    expected = {
        "claude-code": {"type": "http", "url": url},
        "cursor": {"url": url},
        "vscode": {"type": "http", "url": url},
        "windsurf": {"serverUrl": url},
    }
    for host, entry in expected.items():
        done = box.wiremcp("install", host, url, "--dry-run")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)[HOSTS[host].key]["mcp"] == entry
    refused = box.wiremcp("install", "claude-desktop", url, "--yes")
    assert refused.returncode == 2 and "Connectors" in refused.stderr
    assert box.wiremcp("install", "cursor", url, "--env", "A=1", "--yes").returncode == 2


def test_with_needs_uv_and_runs_through_it(tmp_path: Path, box: Box) -> None:
    bare = {**box.env, "PATH": str(tmp_path / "nobin")}
    done = box.wiremcp("install", "cursor", "srv.py", "--with", "httpx", "--yes", env=bare)
    assert done.returncode == 2 and "--with needs uv" in done.stderr
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_uv = write(bin_dir / "uv", "#!/bin/sh\nexit 0\n")
    fake_uv.chmod(0o755)
    done = box.wiremcp("install", "cursor", "srv.py", "--with", "httpx", "--with", "rich", "--dry-run", env={**box.env, "PATH": str(bin_dir)})
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["srv"]
    assert entry["command"] == str(fake_uv)
    assert entry["args"] == [
        "run", "--no-project", "--python", os.path.abspath(sys.executable), "--with", "httpx", "--with", "rich",
        "python", "-m", "wiremcp", "run", str(box.project / "srv.py"),
    ]


def test_python_must_have_wiremcp(box: Box) -> None:
    done = box.wiremcp("install", "cursor", "srv.py", "--python", "/usr/bin/false", "--yes")
    assert done.returncode == 2 and "/usr/bin/false" in done.stderr


def test_a_file_that_is_not_plain_json_is_left_alone(box: Box) -> None:
    path = box.project / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  // my servers\n  "servers": {}\n}\n')
    done = box.wiremcp("install", "vscode", "srv.py", "--yes")
    assert done.returncode == 2 and "not plain JSON" in done.stderr
    assert path.read_text().startswith('{\n  // my servers')


def test_uninstall_of_an_unknown_name(box: Box) -> None:
    done = box.wiremcp("uninstall", "cursor", "nothing", "--yes")
    assert done.returncode == 1 and "no server named 'nothing'" in done.stderr


@pytest.mark.parametrize(
    ("host", "scope", "platform", "expected"),
    [
        ("claude-desktop", "user", "darwin", "H/Library/Application Support/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", "win32", "A/Claude/claude_desktop_config.json"),
        ("claude-desktop", "user", "linux", "X/Claude/claude_desktop_config.json"),
        ("vscode", "user", "darwin", "H/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "user", "win32", "A/Code/User/mcp.json"),
        ("vscode", "project", "win32", "P/.vscode/mcp.json"),
        ("claude-code", "user", "win32", "H/.claude.json"),
        ("windsurf", "user", "darwin", "H/.codeium/windsurf/mcp_config.json"),
    ],
)
def test_per_platform_locations(host: str, scope: str, platform: str, expected: str) -> None:
    path = config_path(host, scope, platform=platform, home=Path("/H"), cwd=Path("/P"), environ={"APPDATA": "/A", "XDG_CONFIG_HOME": "/X"})
    assert path == Path("/" + expected)


def _on_a_terminal(box: Box, args: list[str], answer: bytes) -> tuple[int, str]:
    """Run ``wiremcp`` with a pseudo-terminal as stdin and stdout; answer the first question."""
    import pty
    import select

    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", *args], stdin=terminal, stdout=terminal, stderr=terminal,
        cwd=box.project, env=box.env, close_fds=True,
    )
    os.close(terminal)
    seen = b""
    answered = False
    while True:
        ready = select.select([controller], [], [], 60)[0]
        assert ready, seen
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the other end closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
        if not answered and b"[y/N]" in seen:
            os.write(controller, answer)
            answered = True
    os.close(controller)
    return proc.wait(60), seen.decode(errors="replace")


@pytest.mark.parametrize(("answer", "written"), [(b"y\n", True), (b"n\n", False), (b"\n", False)])
def test_on_a_terminal_it_asks_before_writing(box: Box, answer: bytes, written: bool) -> None:
    status, output = _on_a_terminal(box, ["install", "cursor", "srv.py"], answer)
    assert "command: " in output and "Add this server? [y/N]" in output
    assert output.index("command: ") < output.index("[y/N]")  # the command is shown before the question
    path = box.home / ".cursor" / "mcp.json"
    assert path.exists() is written
    assert status == (0 if written else 1)


def test_claude_code_dry_run_prints_claude_mcp_add(box: Box) -> None:
    """Issue 28 item 8d: the dry run shows the same change as Claude Code's own command."""
    done = box.wiremcp("install", "claude-code", "srv.py", "--dry-run")
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["srv"]
    lines = done.stderr.splitlines()
    at = lines.index("or with Claude Code's own command:")
    assert shlex.split(lines[at + 1]) == ["claude", "mcp", "add", "--scope", "user", "srv", "--", entry["command"], *entry["args"]]
    assert lines[at + 2] == "(dry run: nothing written)"
    # with --env the name follows -- (claude's --env would take it for a variable); URL targets use --transport http
    done = box.wiremcp("install", "claude-code", "srv.py", "--scope", "project", "--env", "A=x y", "--dry-run")
    command = shlex.split(done.stderr.splitlines()[-2])
    assert command[:8] == ["claude", "mcp", "add", "--scope", "project", "--env", "A=x y", "--"] and command[8] == "srv"
    done = box.wiremcp("install", "claude-code", "https://mcp.example.com/mcp", "--dry-run")
    assert shlex.split(done.stderr.splitlines()[-2]) == [
        "claude", "mcp", "add", "--transport", "http", "--scope", "user", "mcp", "https://mcp.example.com/mcp"
    ]
    assert not (box.home / ".claude.json").exists()
