"""Finding S2: ``wiremcp run``'s SQLite task store was readable by every local user.

`SQLiteTaskStore` created ``$XDG_STATE_HOME/wiremcp/`` and ``tasks.sqlite3``
with the process umask (0755 and 0644 under the usual 022): another account on
the machine could read every task's arguments and results (tasks.md: results
may hold anything the tool returns). Now the directory it creates is 0700 and
the file (and SQLite's -wal and -shm files, which take its mode) 0600, also
when the file existed before. Over a real ``wiremcp run`` process.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import META, request, wiremcp_cmd

TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
TASK_SERVER = str(Path(__file__).resolve().parents[1] / "server" / "tasks" / "task_server.py")


@pytest.fixture
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _make_a_task(spawn: Any, env: dict[str, str]) -> Any:
    peer = spawn(*wiremcp_cmd("run", TASK_SERVER), env=env)
    peer.send(request(1, "tools/call", {"name": "quick", "arguments": {"x": "private"}}, meta=EXT))
    while True:
        reply = peer.recv(10.0)
        if reply.get("id") == 1:
            break
    assert reply["result"]["resultType"] == "task", reply
    return peer


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_default_task_store_is_private_to_the_user(spawn: Any, tmp_path: Path, usual_umask: None) -> None:
    home = tmp_path / "state"
    peer = _make_a_task(spawn, {"XDG_STATE_HOME": str(home)})
    folder = home / "wiremcp"
    db = folder / "tasks.sqlite3"
    assert _mode(folder) == 0o700
    assert _mode(db) == 0o600
    for extra in (folder / "tasks.sqlite3-wal", folder / "tasks.sqlite3-shm"):
        if extra.exists():  # present while the server runs (WAL mode)
            assert _mode(extra) == 0o600, extra
    peer.kill()


def test_a_task_store_file_made_world_readable_before_is_made_private(spawn: Any, tmp_path: Path, usual_umask: None) -> None:
    db = tmp_path / "tasks.sqlite3"
    db.touch(mode=0o644)
    assert _mode(db) == 0o644
    peer = _make_a_task(spawn, {"WIREMCP_TASK_STORE": f"sqlite:{db}"})
    assert _mode(db) == 0o600
    peer.kill()
