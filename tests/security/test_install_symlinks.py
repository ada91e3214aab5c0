"""Issue 23, defect 1: ``wiremcp install`` / ``uninstall`` and ``tap --log`` wrote through symbolic links.

``ConfigFile.write`` backed the configuration up with ``shutil.copy2(path,
path + ".bak")``, which follows a link at the destination and copies the
mode. A repository shipping ``.vscode/mcp.json`` (a JSON/shell polyglot,
mode 755) and ``.vscode/mcp.json.bak -> ../.git/hooks/pre-commit`` got an
executable hook written by ``wiremcp install vscode server.py --yes``.
``tap --log FILE`` opened a link's target for writing and truncated it.

Now a backup is a new 0600 file (``O_CREAT | O_EXCL | O_NOFOLLOW`` after the
link at its name is removed), a configuration file or folder that is a link
is written through only when the user says so (a prompt; ``--follow-symlinks``
with ``--yes``), the file is replaced atomically without ever gaining a mode
bit, and ``tap --log`` refuses a link to a file. Every test runs the real
CLI as a subprocess on real files and links in a temporary folder.
"""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
#: A real server for ``tap`` to stand in front of.
ECHO = [sys.executable, "-m", "wiremcp", "run", str(Path(SRC) / "wiremcp" / "examples" / "echo.py")]

SERVER = "import wiremcp\nserver = wiremcp.Server('srv')\n"

#: Valid JSON whose shell reading runs a command substitution.
POLYGLOT = b'{"servers": {}, "run": "$(touch PWNED)"}\n'

SHARED = b'{"servers": {"other": {"command": "node", "args": ["other.js"]}}}\n'

HOOK = b"#!/bin/sh\necho the project's own hook\n"


class Tree:
    """HOME, a project with a git folder and a server file, run the CLI from the project."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.hooks = self.project / ".git" / "hooks"
        for folder in (self.home, self.project, self.hooks):
            folder.mkdir(parents=True, exist_ok=True)
        (self.project / "srv.py").write_text(SERVER)
        self.bashrc = self.home / ".bashrc"
        self.bashrc.write_bytes(b"export PATH=$HOME/bin:$PATH\n")
        self.bashrc.chmod(0o644)
        self.env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "APPDATA")}
        self.env.update(HOME=str(self.home), PYTHONPATH=SRC)

    def wiremcp(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wiremcp", *args], capture_output=True, text=True, timeout=60,
            cwd=self.project, env=self.env, stdin=subprocess.DEVNULL,
        )

    def hostile_vscode(self, backup_target: str) -> Path:
        """``.vscode/mcp.json`` (polyglot, 0755) and ``.vscode/mcp.json.bak -> backup_target``."""
        folder = self.project / ".vscode"
        folder.mkdir()
        config = folder / "mcp.json"
        config.write_bytes(POLYGLOT)
        config.chmod(0o755)
        os.symlink(backup_target, folder / "mcp.json.bak")
        return config


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(tmp_path)


def snapshot(path: Path) -> tuple[bytes, int] | None:
    try:
        return path.read_bytes(), stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None


def assert_backup_is_private_copy(config: Path, original: bytes) -> None:
    backup = config.with_name(config.name + ".bak")
    info = backup.lstat()
    assert stat.S_ISREG(info.st_mode), "the backup is a new regular file, not the link"
    assert stat.S_IMODE(info.st_mode) == 0o600
    assert backup.read_bytes() == original


@pytest.mark.parametrize("hook_exists", [False, True], ids=["no-hook-yet", "hook-present"])
def test_install_does_not_write_through_a_backup_link_into_a_git_hook(tree: Tree, hook_exists: bool) -> None:
    hook = tree.hooks / "pre-commit"
    if hook_exists:
        hook.write_bytes(HOOK)
        hook.chmod(0o755)
    before = snapshot(hook)
    config = tree.hostile_vscode("../.git/hooks/pre-commit")

    done = tree.wiremcp("install", "vscode", "srv.py", "--yes")

    assert done.returncode == 0, done.stderr
    assert snapshot(hook) == before, "the hook behind the .bak link was written"
    assert_backup_is_private_copy(config, POLYGLOT)
    assert "srv" in json.loads(config.read_bytes())["servers"]
    assert stat.S_IMODE(config.stat().st_mode) == 0o644, "the rewritten config keeps its mode without execute bits"


def test_install_does_not_write_through_a_backup_link_out_of_the_tree(tree: Tree) -> None:
    before = snapshot(tree.bashrc)
    config = tree.hostile_vscode(str(tree.bashrc))
    done = tree.wiremcp("install", "vscode", "srv.py", "--yes")
    assert done.returncode == 0, done.stderr
    assert snapshot(tree.bashrc) == before
    assert_backup_is_private_copy(config, POLYGLOT)


def test_uninstall_does_not_write_through_a_backup_link(tree: Tree) -> None:
    assert tree.wiremcp("install", "vscode", "srv.py", "--yes").returncode == 0
    config = tree.project / ".vscode" / "mcp.json"
    installed = config.read_bytes()
    backup = config.with_name("mcp.json.bak")
    if backup.exists() or backup.is_symlink():
        backup.unlink()
    hook = tree.hooks / "pre-commit"
    os.symlink("../.git/hooks/pre-commit", backup)
    before = snapshot(tree.bashrc)

    done = tree.wiremcp("uninstall", "vscode", "srv", "--yes")

    assert done.returncode == 0, done.stderr
    assert not hook.exists() and not hook.is_symlink(), "uninstall created the hook behind the .bak link"
    assert snapshot(tree.bashrc) == before
    assert_backup_is_private_copy(config, installed)


def test_uninstall_does_not_write_through_a_backup_link_out_of_the_tree(tree: Tree) -> None:
    assert tree.wiremcp("install", "cursor", "srv.py", "--scope", "project", "--yes").returncode == 0
    config = tree.project / ".cursor" / "mcp.json"
    installed = config.read_bytes()
    backup = config.with_name("mcp.json.bak")
    assert not backup.exists() and not backup.is_symlink()
    os.symlink(str(tree.bashrc), backup)
    before = snapshot(tree.bashrc)
    done = tree.wiremcp("uninstall", "cursor", "srv", "--scope", "project", "--yes")
    assert done.returncode == 0, done.stderr
    assert snapshot(tree.bashrc) == before
    assert_backup_is_private_copy(config, installed)


# -- a configuration file or folder that is a link ------------------------------------------------


def linked_config(tree: Tree) -> tuple[Path, Path]:
    """``.vscode/mcp.json -> HOME/shared/mcp.json`` (a dotfiles-style link)."""
    shared = tree.home / "shared"
    shared.mkdir()
    real = shared / "mcp.json"
    real.write_bytes(SHARED)
    real.chmod(0o640)
    (tree.project / ".vscode").mkdir()
    link = tree.project / ".vscode" / "mcp.json"
    os.symlink(real, link)
    return link, real


def test_a_linked_config_file_is_refused_with_yes_alone(tree: Tree) -> None:
    link, real = linked_config(tree)
    before = snapshot(real)
    done = tree.wiremcp("install", "vscode", "srv.py", "--yes")
    assert done.returncode == 2
    assert f"{link} is a symbolic link to {real}" in done.stderr and "--follow-symlinks" in done.stderr
    assert snapshot(real) == before and link.is_symlink()
    assert not (tree.project / ".vscode" / "mcp.json.bak").exists()
    gone = tree.wiremcp("uninstall", "vscode", "srv", "--yes")
    assert gone.returncode == 2 and "--follow-symlinks" in gone.stderr and snapshot(real) == before


def test_a_linked_config_file_is_written_through_with_follow_symlinks(tree: Tree) -> None:
    link, real = linked_config(tree)
    done = tree.wiremcp("install", "vscode", "srv.py", "--yes", "--follow-symlinks")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(real), "the link stays a link"
    assert "srv" in json.loads(real.read_bytes())["servers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert_backup_is_private_copy(real, SHARED)
    gone = tree.wiremcp("uninstall", "vscode", "srv", "--yes", "--follow-symlinks")
    assert gone.returncode == 0, gone.stderr
    assert real.read_bytes() == SHARED and link.is_symlink()


def test_a_linked_config_folder_is_refused_with_yes_alone(tree: Tree) -> None:
    elsewhere = tree.home / ".config-elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tree.project / ".vscode")
    done = tree.wiremcp("install", "vscode", "srv.py", "--yes")
    assert done.returncode == 2
    assert f"{tree.project / '.vscode'} is a symbolic link to {elsewhere}" in done.stderr
    assert list(elsewhere.iterdir()) == []
    followed = tree.wiremcp("install", "vscode", "srv.py", "--yes", "--follow-symlinks")
    assert followed.returncode == 0, followed.stderr
    assert "srv" in json.loads((elsewhere / "mcp.json").read_bytes())["servers"]


def run_on_a_terminal(tree: Tree, args: list[str], answers: bytes) -> tuple[int, str]:
    """The CLI with a pseudo-terminal as stdin and stdout (so that it asks), ``answers`` typed ahead."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "wiremcp", *args], cwd=tree.project, env=tree.env,
            stdin=slave, stdout=slave, stderr=subprocess.PIPE, close_fds=True,
        )
        os.close(slave)
        slave = -1
        os.write(master, answers)
        shown = b""
        while proc.poll() is None or select.select([master], [], [], 0)[0]:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # the terminal closed with the process
                    break
                if not chunk:
                    break
                shown += chunk
        proc.wait(60)
        assert proc.stderr is not None
        return proc.returncode, shown.decode(errors="replace") + proc.stderr.read().decode()
    finally:
        os.close(master)
        if slave != -1:
            os.close(slave)


def test_on_a_terminal_a_linked_config_is_written_through_only_when_the_user_says_so(tree: Tree) -> None:
    link, real = linked_config(tree)
    before = snapshot(real)
    status, shown = run_on_a_terminal(tree, ["install", "vscode", "srv.py"], b"n\n")
    assert status == 1 and "Write through the symbolic link?" in shown, shown
    assert snapshot(real) == before
    status, shown = run_on_a_terminal(tree, ["install", "vscode", "srv.py"], b"y\ny\n")
    assert status == 0, shown
    assert link.is_symlink() and "srv" in json.loads(real.read_bytes())["servers"]


# -- tap --log --------------------------------------------------------------------------------------


def tap(tree: Tree, log: Path) -> subprocess.CompletedProcess[str]:
    line = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n'
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "tap", "--log", str(log), "--", *ECHO],
        input=line, capture_output=True, text=True, timeout=60, env=tree.env, cwd=tree.project,
    )


def test_tap_log_refuses_a_link_to_a_file(tree: Tree) -> None:
    before = snapshot(tree.bashrc)
    log = tree.project / "wire.jsonl"
    os.symlink(tree.bashrc, log)
    done = tap(tree, log)
    assert done.returncode == 2
    assert "is a symbolic link" in done.stderr
    assert snapshot(tree.bashrc) == before


def test_tap_log_refuses_a_dangling_link(tree: Tree) -> None:
    target = tree.hooks / "pre-commit"
    log = tree.project / "wire.jsonl"
    os.symlink(target, log)
    done = tap(tree, log)
    assert done.returncode == 2 and "is a symbolic link" in done.stderr
    assert not target.exists()


def test_tap_log_refuses_a_file_with_another_name(tree: Tree) -> None:
    before = snapshot(tree.bashrc)
    log = tree.project / "wire.jsonl"
    os.link(tree.bashrc, log)
    done = tap(tree, log)
    assert done.returncode == 2 and "other names" in done.stderr
    assert snapshot(tree.bashrc) == before


def test_tap_log_through_a_link_to_a_device_still_works(tree: Tree) -> None:
    log = tree.project / "to-null"
    os.symlink("/dev/null", log)
    done = tap(tree, log)
    assert done.returncode == 0, done.stderr


def test_tap_log_to_dev_stderr_adds_to_the_file_stderr_goes_to(tree: Tree) -> None:
    """The system's own links (``/dev/stderr`` -> ``/proc/self/fd/2``) are followed whatever they reach, in append mode."""
    err = tree.project / "stderr.txt"
    err.write_text("before\n")
    with open(err, "ab") as sink:
        done = subprocess.run(
            [sys.executable, "-m", "wiremcp", "tap", "--log", "/dev/stderr", "--", *ECHO],
            input=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n', stdout=subprocess.PIPE, stderr=sink, timeout=60,
            env=tree.env, cwd=tree.project,
        )
    assert done.returncode == 0
    text = err.read_text()
    assert text.startswith("before\n") and '"dir":"c2s"' in text and '"dir":"s2c"' in text
