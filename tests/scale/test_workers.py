"""``wiremcp run TARGET --http --workers N``: uvicorn worker processes sharing one port, and start-up errors.

Spec: basic/patterns/subscriptions.mdx (Graceful Closure: a server that
shuts down ends each stream with its result), basic/patterns/mrtr.mdx
(instances share the state key). The rules are those of cli/_run.py.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from wiremcp.client import Client

from .conftest import STATE_KEY, needs_services, sync
from .services import ROOT, RedisServer, Worker, free_port

pytest.importorskip("redis", reason="the Redis backend needs the [redis] extra")
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

pytestmark = [pytest.mark.slow, needs_services]

WORKER = "tests/scale/worker.py"


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("WIREMCP_REDIS_URL", "WIREMCP_STATE_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", *args], capture_output=True, text=True, cwd=ROOT,
        env={**clean, **env}, timeout=60, stdin=subprocess.DEVNULL,
    )


def test_several_workers_without_a_state_key_refuse_to_start():
    done = _run(WORKER, "--http", "--port", str(free_port()), "--workers", "2", env={})
    assert done.returncode == 2
    assert "--workers 2 needs a requestState key shared by the workers: set WIREMCP_STATE_KEY" in done.stderr


def test_workers_need_http():
    done = _run(WORKER, "--workers", "2", env={"WIREMCP_STATE_KEY": STATE_KEY})
    assert done.returncode == 2 and "--workers needs --http" in done.stderr


def test_a_shared_backend_without_a_state_key_refuses_to_start():
    done = _run(WORKER, "--http", "--port", str(free_port()), env={"WIREMCP_REDIS_URL": "redis://127.0.0.1:1/0"})
    assert done.returncode != 0
    assert "set WIREMCP_STATE_KEY (or Server(state_keys=...)) to the same key on every worker" in done.stderr


def test_redis_unreachable_at_start_stops_the_server_with_a_clear_error():
    port = free_port()
    done = _run(
        WORKER, "--http", "--port", str(free_port()),
        env={"WIREMCP_REDIS_URL": f"redis://127.0.0.1:{port}/0", "WIREMCP_STATE_KEY": STATE_KEY},
    )
    assert done.returncode != 0
    assert f"cannot reach Redis at redis://127.0.0.1:{port}/0 (WIREMCP_REDIS_URL)" in done.stderr


def test_several_workers_without_redis_warn_that_they_share_nothing():
    worker = Worker(WORKER, {"WIREMCP_STATE_KEY": STATE_KEY}, "--workers", "2")
    try:
        assert "warning: 2 workers without WIREMCP_REDIS_URL share no state" in worker.log()
    finally:
        worker.stop()


@sync
async def test_two_workers_share_changes_through_redis_and_close_streams_gracefully(redis_server: RedisServer):
    worker = Worker(WORKER, {"WIREMCP_REDIS_URL": redis_server.url, "WIREMCP_STATE_KEY": STATE_KEY}, "--workers", "2")
    try:
        # the port accepts as soon as the supervisor binds it: wait until both workers answer
        seen: set[str] = set()
        async with asyncio.timeout(60):
            while len(seen) < 2:
                async with Client.http(worker.url, era="modern", timeout=20) as probe:
                    seen.add((await probe.call_tool("whoami")).text)
        uris = [f"file:///n{i}" for i in range(300)]
        async with Client.http(worker.url, era="modern", timeout=20) as listener:
            async with listener.listen(resources=uris) as sub:
                holder = None
                pids: list[str] = []
                for uri in uris:  # each call on a new connection: the kernel spreads them over the workers
                    async with Client.http(worker.url, era="modern", timeout=20) as caller:
                        pids.append((await caller.call_tool("touch", {"uri": uri})).text)
                    if len(set(pids)) == 2:
                        break
                assert len(set(pids)) == 2, f"every call reached one worker: {pids}"
                got = []
                async with asyncio.timeout(10):
                    async for method, params in sub:
                        got.append(params["uri"])
                        if len(got) == len(pids):
                            break
                # each change once, from both workers (changes made on different workers arrive in the
                # order Redis got them, which need not be the order of the calls: the publish is not awaited)
                assert sorted(got) == sorted(uris[: len(pids)])
                # SIGTERM to the supervisor: each worker ends its streams with their result first
                worker.proc.send_signal(signal.SIGTERM)
                async with asyncio.timeout(10):
                    async for method, params in sub:
                        raise AssertionError(f"unexpected {method} {params}")
                assert sub.dropped == 0
                del holder
        assert worker.proc.wait(15) == 0
    finally:
        worker.stop()


def _worker_lines(worker: Worker, pattern: str, want: int) -> set[str]:
    """The distinct process ids of ``pattern``'s matches in the worker's stderr, once ``want`` of them are there."""
    import re
    import time

    deadline = time.monotonic() + 60
    while True:
        pids = set(re.findall(pattern, worker.log()))
        if len(pids) >= want or time.monotonic() > deadline or worker.proc.poll() is not None:
            return pids
        time.sleep(0.05)


def test_log_level_info_holds_in_every_worker():
    worker = Worker(WORKER, {"WIREMCP_STATE_KEY": STATE_KEY}, "--workers", "2", "--log-level", "info")
    try:
        pids = _worker_lines(worker, r"INFO wiremcp\.cli: worker (\d+): serving 'scale-worker' version 1\.0\.0", 2)
        assert len(pids) == 2, worker.log()
        assert str(worker.proc.pid) not in pids  # the children's lines, not the supervisor's
    finally:
        worker.stop()


def test_log_format_json_holds_in_every_worker():
    import json

    worker = Worker(
        WORKER, {"WIREMCP_STATE_KEY": STATE_KEY}, "--workers", "2", "--log-level", "INFO", "--log-format", "json"
    )
    try:
        pids = _worker_lines(worker, r'"worker (\d+): serving', 2)
        assert len(pids) == 2, worker.log()
        for line in worker.log().splitlines():
            if "worker " in line and ": serving 'scale-worker'" in line:
                record = json.loads(line)  # the whole line is one JSON object
                assert record["logger"] == "wiremcp.cli" and record["level"] == "INFO", record
    finally:
        worker.stop()
