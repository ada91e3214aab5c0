"""bench/scale.py's open-loop driver and its instruction counts: worker cost per call at a fixed rate.

A closed loop (``--inflight`` connections, each sending its next call when the
last one is answered) drives the machine to saturation: on 2 cores the
workers, nginx and the driver share them, so with 2 workers each one gets
about half the calls of one worker alone, finds fewer of them per event-loop
wake-up and pays more CPU per call. That is the machine, not a coordination
cost. `paced` sends the calls on a fixed schedule instead (open loop: the
k-th call at ``start + k / rate``, whatever the replies do), so that 1 and 2
workers are compared at the same rate *per worker*, below saturation; it says
the rate it achieved and how late the schedule fell (a late schedule means the
machine could not keep up: the figure is then not at the asked rate).

`instructions` runs the workers under ``valgrind --tool=callgrind`` behind
nginx on Redis, paces a fixed number of calls through nginx at a low rate,
and counts each worker's user-space instructions between two
``callgrind_control`` dumps taken while every worker is idle (as
bench/instructions.py does for the handshake); an idle window of the same
length, dumped the same way, is subtracted (the workers' own timers). The
count does not depend on the machine's load.
"""

from __future__ import annotations

import concurrent.futures
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from scale.services import Nginx, RedisServer, Worker, stop_deployment  # before instructions, which puts bench/ (scale.py) first

from driver import HttpChannel, RequestFactory, check_reply, make_payload, modern_http_headers
from instructions import _idle, _summary

Snapshot = Callable[[], dict[str, float]]


def paced(port: int, rate: float, conns: int, duration: float, warmup: float,
          snapshot: Snapshot | None = None, limit: int | None = None) -> dict[str, Any]:
    """Modern echo calls through ``port`` at ``rate`` per second (open loop) on up to ``conns`` connections.

    Sends for ``warmup`` then ``duration`` seconds (or until ``limit`` calls
    of the window were sent), then waits for every reply. ``snapshot`` is read
    at the window's start and end (``before``, ``after``); ``count`` is the
    calls answered within the window, ``answered`` all of them, ``sent`` those
    sent within it; ``lag_ms`` the most a call of the window went out after its
    scheduled time (the driver late, or no idle connection when it was due;
    ``select`` wakes in 1 ms steps).
    """
    payload = make_payload(100)
    factory = RequestFactory("modern", payload)
    chan = HttpChannel("127.0.0.1", port, conns, modern_http_headers())
    clock = time.monotonic
    start = clock()
    window_at, stop_at = start + warmup, start + warmup + duration
    sent = answered = errors = count = window_sent = 0
    lag = 0.0
    before: dict[str, float] = {}
    after: dict[str, float] = {}
    t0 = t1 = 0.0
    measuring, sending = False, True
    try:
        while sending or sent > answered:
            now = clock()
            if sending and not measuring and now >= window_at:
                before = snapshot() if snapshot else {}
                t0, count, window_sent, measuring = clock(), 0, 0, True
            elif sending and measuring and (now >= stop_at or (limit is not None and window_sent >= limit)):
                t1 = clock()
                after = snapshot() if snapshot else {}
                sending = False
            if sending:
                due = int((now - start) * rate) + 1
                if measuring and sent < due:  # how late the next call goes out (or would: no idle connection)
                    lag = max(lag, now - (start + sent / rate))
                while sent < due and chan.idle and not (limit is not None and measuring and window_sent >= limit):
                    sent += 1
                    if measuring:
                        window_sent += 1
                    chan.submit(sent, factory.body(sent))
                timeout = max(0.0, start + sent / rate - clock()) if chan.idle else 0.05
            else:
                timeout = 1.0
            for req_id, msg, err in chan.poll(min(timeout, 0.05)):
                problem = err or check_reply(msg, req_id, payload)
                if problem:
                    errors += 1
                    if errors == 1:
                        print(f"  error: {problem}", flush=True)
                answered += 1
                if measuring and sending:
                    count += 1
    finally:
        chan.close()
    elapsed = max(t1 - t0, 1e-9)
    return {"count": count, "answered": answered, "sent": window_sent, "elapsed": elapsed, "errors": errors,
            "lag_ms": lag * 1e3, "before": before, "after": after}


def _dump(pid: int, out: Path) -> int:
    """A ``callgrind_control`` dump of ``pid`` now: the instructions since its last dump (or its start)."""
    pattern = re.compile(rf"{re.escape(out.name)}\.{pid}\.(\d+)")

    def dumps() -> list[tuple[int, Path]]:
        return sorted((int(m.group(1)), p) for p in out.parent.iterdir() if (m := pattern.fullmatch(p.name)))

    done = len(dumps())
    subprocess.run(["callgrind_control", "--dump", str(pid)], check=True, capture_output=True, timeout=300)
    deadline = time.monotonic() + 60
    while len(found := dumps()) <= done or not re.search(r"^(?:summary|totals): ", found[-1][1].read_text(), re.M):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no callgrind dump of {pid} in {out.parent}")
        time.sleep(0.1)
    return _summary(str(found[-1][1]))


def _idle_dump(pids: list[int], out: Path) -> tuple[list[int], float]:
    """Every worker idle, then each one dumped: the instructions since the last dump, and the time now."""
    for pid in pids:
        _idle(pid)
    counts = [_dump(pid, out) for pid in pids]
    return counts, time.monotonic()


def instructions(n: int, target: str, env: dict[str, str], rate: float, calls: int, warmup: float) -> dict[str, Any]:
    """Worker instructions per call with ``n`` workers under callgrind, ``calls`` per worker at ``rate`` each."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return {"workers": n, "unavailable": "valgrind (callgrind_control) is not installed"}
    tmp = Path(tempfile.mkdtemp(prefix="wiremcp-scale-cg-"))
    out = tmp / "cg"
    redis = RedisServer()
    workers: list[Worker] = []
    nginx = None
    try:
        # the same dict probes in every run; bytecode caches written (start-up under callgrind is slow enough)
        wenv = {**env, "WIREMCP_REDIS_URL": redis.url, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": ""}
        wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p")
        with concurrent.futures.ThreadPoolExecutor(n) as pool:  # start-up under callgrind is slow: all at once
            futures = [pool.submit(Worker, target, wenv, wrapper=wrapper, start_timeout=600.0) for _ in range(n)]
        workers = [f.result() for f in futures if f.exception() is None]
        for f in futures:
            if (exc := f.exception()) is not None:
                raise exc
        nginx = Nginx([w.port for w in workers])
        pids = [w.proc.pid for w in workers]
        warm = paced(nginx.port, rate * n, 4 * n, 0.0, warmup)  # every worker's first calls, nginx's upstream connections
        _, started = _idle_dump(pids, out)
        run = paced(nginx.port, rate * n, 4 * n, 3600.0, 0.0, limit=calls * n)
        busy, ended = _idle_dump(pids, out)
        time.sleep(ended - started)  # as long again with no call: the workers' own timers
        idle, idled = _idle_dump(pids, out)
        scale = (ended - started) / (idled - ended)
        per_call = (sum(busy) - sum(idle) * scale) / max(run["answered"], 1)
        return {"workers": n, "calls": run["answered"], "rate_per_worker": rate, "errors": warm["errors"] + run["errors"],
                "lag_ms": run["lag_ms"], "window_s": ended - started, "idle_window_s": idled - ended,
                "busy": busy, "idle": idle, "instructions_per_call": per_call}
    finally:
        stop_deployment(nginx, workers, redis)
        shutil.rmtree(tmp, ignore_errors=True)

