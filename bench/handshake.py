"""The host handshake cold start: spawn a stdio server and send what a host sends first.

A host (an IDE, a desktop client) starts the server, then

- modern era (2026-07-28): ``server/discover``, then ``tools/list``, then a
  ``tools/call``, each request carrying the ``_meta`` envelope;
- legacy era (2025-11-25): ``initialize``, then ``notifications/initialized``
  with ``tools/list``, then a ``tools/call``;

each step sent once the previous reply is in (a host reads the server's
capabilities before it lists, and the list before it calls). The figure is
the wall time from ``Popen`` to the reply of the ``tools/call``; the server
CPU (``utime+stime`` of its process tree from ``/proc``) up to that reply is
kept beside it. Every reply is checked: ``server/discover`` returns
``supportedVersions``, ``initialize`` a ``protocolVersion``, ``tools/list`` a
tool named ``echo`` with an ``inputSchema``, the call the echoed text.

    python bench/handshake.py --era modern -- .venv/bin/wiremcp run examples/echo.py

``steps(era)`` is also what ``instructions.py handshake`` feeds a server under
callgrind.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver  # noqa: E402
from driver import CLIENT_INFO, LEGACY_VERSION, MODERN_META, INITIALIZED_BODY, rpc  # noqa: E402

PAYLOAD = driver.make_payload(100)
ERAS = driver.ERAS

Check = Callable[[Any], "str | None"]


def _check_discover(msg: Any) -> str | None:
    result = msg.get("result") if isinstance(msg, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("supportedVersions"), list):
        return f"server/discover: no supportedVersions in {str(msg)[:300]}"
    return None


def _check_initialize(msg: Any) -> str | None:
    result = msg.get("result") if isinstance(msg, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("protocolVersion"), str):
        return f"initialize: no protocolVersion in {str(msg)[:300]}"
    return None


def _check_list(msg: Any) -> str | None:
    result = msg.get("result") if isinstance(msg, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or not any(
        isinstance(t, dict) and t.get("name") == "echo" and isinstance(t.get("inputSchema"), dict) for t in tools
    ):
        return f"tools/list: no echo tool with an inputSchema in {str(msg)[:300]}"
    return None


def _check_call(msg: Any) -> str | None:
    problem = driver.check_reply(msg, 3, PAYLOAD)
    return f"tools/call: {problem}" if problem else None


@dataclass(frozen=True)
class Step:
    lines: tuple[bytes, ...]  # written together (a notification goes with the request after it)
    req_id: int  # the reply waited for
    check: Check


def steps(era: str) -> tuple[Step, ...]:
    """The three exchanges a host makes first, in order."""
    call_params: dict[str, Any] = {"name": "echo", "arguments": {"text": PAYLOAD}}
    if era == "modern":
        meta = {"_meta": MODERN_META}
        call_params.update(meta)
        return (
            Step((rpc("server/discover", dict(meta), 1),), 1, _check_discover),
            Step((rpc("tools/list", dict(meta), 2),), 2, _check_list),
            Step((rpc("tools/call", call_params, 3),), 3, _check_call),
        )
    init = rpc("initialize", {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}, 1)
    return (
        Step((init,), 1, _check_initialize),
        Step((INITIALIZED_BODY, rpc("tools/list", None, 2)), 2, _check_list),
        Step((rpc("tools/call", call_params, 3),), 3, _check_call),
    )


@dataclass
class HandshakeResult:
    impl: str = ""
    era: str = ""
    ok: bool = False
    available: bool = True
    errors: int = 0
    error_messages: list[str] = field(default_factory=list)
    first_reply_ms: float = 0.0  # discover / initialize answered
    list_reply_ms: float = 0.0
    cold_start_ms: float = 0.0  # the tools/call answered: the figure
    server_cpu_ms: float = 0.0  # the server's CPU up to that reply


def run_handshake(cmd: Sequence[str], *, era: str, cwd: str | None = None, impl: str = "") -> HandshakeResult:
    """Spawn ``cmd`` on stdio pipes, make the host's three exchanges, stop it."""
    res = HandshakeResult(impl=impl, era=era)
    todo = steps(era)  # built before the clock starts
    try:
        server = driver.spawn(cmd, "stdio", cwd)
    except driver.NotAvailable as exc:
        res.available = False
        res.error_messages.append(str(exc))
        return res
    chan = driver.StdioChannel(server.proc)
    try:
        at: list[float] = []
        for step in todo:
            for line in step.lines:
                chan.send_line(line)
            reply = chan.wait_reply(step.req_id)
            at.append(time.perf_counter())
            problem = step.check(reply)
            if problem:
                raise driver.CaseError(problem)
        res.server_cpu_ms = driver.cpu_seconds(driver.process_tree(server.proc.pid)) * 1e3
        res.first_reply_ms, res.list_reply_ms, res.cold_start_ms = ((t - server.t_spawn) * 1e3 for t in at)
    except driver.CaseError as exc:
        res.errors += 1
        res.error_messages.append(str(exc))
        tail = server.stderr_tail(400)
        if tail:
            res.error_messages.append(f"server stderr: {tail}")
    finally:
        chan.close()
        server.stop()
    res.ok = res.available and res.errors == 0
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--era", choices=driver.ERAS, default="modern")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the server command")
    args = ap.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("give the server command after --")
    res = run_handshake(cmd, era=args.era)
    sys.stdout.buffer.write(driver.dumps(asdict(res)) + b"\n")
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
