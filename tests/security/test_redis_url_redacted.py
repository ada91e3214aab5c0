"""Finding S1: a Redis password given as ``?password=`` (which redis-py reads) reached stderr and logs.

`wiremcp.backends.redis.redacted` hid only the userinfo password
(``redis://:pw@host``); ``redis://host/0?password=pw`` printed whole in the
start-up refusal and in "cannot reach Redis at ...". Over a real
``wiremcp run --http`` process.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")

from wiremcp.backends.redis import RedisBackend, redacted  # noqa: E402

SECRET = "s3cret-redis-pw-4f1c"
ECHO = str(Path(__file__).resolve().parents[2] / "src" / "wiremcp" / "examples" / "echo.py")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(env_extra: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WIREMCP_")}
    env.update(env_extra, XDG_STATE_HOME=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", "--http", "--port", "0", ECHO],
        env=env, capture_output=True, text=True, timeout=60,
    )


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:{port}/0?password=" + SECRET,
        "redis://127.0.0.1:{port}/0?db=0&password=" + SECRET,
        "redis://:" + SECRET + "@127.0.0.1:{port}/0",
    ],
)
def test_an_unreachable_redis_is_named_without_its_password(url: str, tmp_path: Path) -> None:
    url = url.format(port=_closed_port())
    done = _run({"WIREMCP_REDIS_URL": url, "WIREMCP_STATE_KEY": "security-tests-shared-key-0123456789"}, tmp_path)
    assert done.returncode != 0
    assert "cannot reach Redis at" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_a_shared_backend_without_a_state_key_is_refused_without_the_password(tmp_path: Path) -> None:
    done = _run({"WIREMCP_REDIS_URL": f"redis://127.0.0.1:{_closed_port()}/0?password={SECRET}"}, tmp_path)
    assert done.returncode != 0
    assert "WIREMCP_STATE_KEY" in done.stderr
    assert SECRET not in done.stderr + done.stdout


def test_redacted_keeps_everything_but_the_password() -> None:
    assert redacted(f"redis://h:6379/0?db=1&password={SECRET}&x") == "redis://h:6379/0?db=1&password=***&x"
    assert redacted(f"unix:///run/redis.sock?password={SECRET}") == "unix:///run/redis.sock?password=***"
    assert redacted("unix:///run/redis.sock") == "unix:///run/redis.sock"
    assert redacted(f"rediss://user:{SECRET}@h:6380") == "rediss://user:***@h:6380"
    assert SECRET not in repr(RedisBackend(f"redis://h/0?password={SECRET}"))
