"""Shared test helpers: a real server subprocess spoken to line by line; the strict-skip rule.

Strict skips: when ``CI`` or ``WIREMCP_STRICT_SKIPS`` is set, a test that
skips fails instead (a suite whose HTTP or conformance tests silently skip
must not pass), unless the skip is declared expected: its reason contains a
line of tests/expected_skips.txt, or the test carries
``@pytest.mark.expected_skip("part of the reason")``. An xfail is not a
skip. A run that collects no test at all (pytest's exit status 5) fails too.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

# A suite started in the background by a non-interactive shell (`cmd &`, nohup) inherits SIGINT
# ignored, and so would every process it starts: the tests that stop a server or a pytest with
# Ctrl-C (SIGINT) would then see it carry on. Ctrl-C works in the suite as it does in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
#: The spec's schemas and examples, copied into the repository (tests/spec/README.md).
SPEC = Path(__file__).resolve().parent / "spec"

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
}


def request(id: Any, method: str, params: dict[str, Any] | None = None, *, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params = dict(params or {})
    params["_meta"] = META if meta is None else meta
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def call(id: Any, tool: str, arguments: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
    meta = {**META, **meta_extra} if meta_extra else None
    return request(id, "tools/call", {"name": tool, "arguments": arguments or {}}, meta=meta)


class StdioPeer:
    """A server subprocess; write raw lines, read raw lines with timeouts."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
        self._buffer = b""
        self._syncs = 0

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(orjson.dumps(message) + b"\n")

    def read_line(self, timeout: float = 10.0) -> bytes | None:
        """The next line from stdout (without newline), or None at timeout/EOF."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        line = self.read_line(timeout)
        assert line is not None, f"no reply within {timeout}s; stderr: {self.stderr_so_far()}"
        message: dict[str, Any] = orjson.loads(line)
        return message

    def ask(self, message: Any, timeout: float = 10.0) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout)

    def expect_nothing_more(self, *, legacy: bool = False) -> None:
        """A synchronisation point: send a request and require its reply to be the very next line.

        Whatever the server was going to send because of the earlier messages
        it has sent by the time it reads a later line, so the synchronisation
        reply coming first proves that nothing else was sent, without waiting
        a fixed time. The request is ``server/discover`` (every 2026-07-28
        server answers it, and ``ping`` is not part of that revision), or
        ``ping`` with ``legacy=True``: in a 2025-11-25 session on the stream
        ``server/discover`` is not a method, and ``ping`` is answered ``{}``.
        """
        self._syncs += 1
        id_ = f"sync-{self._syncs}"
        if legacy:
            self.send({"jsonrpc": "2.0", "id": id_, "method": "ping"})
        else:
            self.send(request(id_, "server/discover"))
        line = self.read_line()
        assert line is not None, f"no reply to the synchronisation request; stderr: {self.stderr_so_far()}"
        reply = orjson.loads(line)
        assert reply.get("id") == id_ and "result" in reply, f"expected nothing before the synchronisation reply, got {reply}"
        if legacy:
            assert reply == {"jsonrpc": "2.0", "id": id_, "result": {}}, reply

    def finish_quietly(self) -> str:
        """The strongest synchronisation point: end the input, and require a clean exit with nothing more on stdout.

        At end of input the server drains every request still in flight and
        flushes its replies before it exits (stdio.mdx, Shutdown), so a reply
        that should never be sent cannot hide behind a fixed wait. Returns stderr.
        """
        code, rest, err = self.finish()
        assert rest == b"", f"expected nothing more on stdout, got {rest[:2000]!r}"
        assert code == 0, f"exit status {code}; stderr: {err[-2000:]}"
        return err

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = 10.0) -> int:
        return self.proc.wait(timeout)

    def stderr_so_far(self) -> str:
        if self.proc.poll() is None:
            return "(process still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def finish(self) -> tuple[int, bytes, str]:
        """Close stdin, wait; returns (exit code, the rest of stdout, stderr)."""
        if self.proc.stdin is not None:
            if not self.proc.stdin.closed:
                self.proc.stdin.close()
            self.proc.stdin = None
        rest, err = self.proc.communicate(timeout=15)
        return self.proc.returncode, self._buffer + rest, err.decode(errors="replace")

    def kill(self) -> None:
        """Stop the server: SIGTERM first, so that coverage (``sigterm = true``) writes its data."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None and not f.closed:
                f.close()


def wiremcp_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "wiremcp", *args]


@pytest.fixture
def sample() -> Iterator[StdioPeer]:
    peer = StdioPeer(wiremcp_cmd("run", str(SERVERS / "sample.py")))
    try:
        yield peer
    finally:
        peer.kill()


@pytest.fixture
def spawn() -> Iterator[Any]:
    peers: list[StdioPeer] = []

    def start(*args: str, env: dict[str, str] | None = None) -> StdioPeer:
        peer = StdioPeer(list(args), env)
        peers.append(peer)
        return peer

    try:
        yield start
    finally:
        for peer in peers:
            peer.kill()


# -- strict skips ---------------------------------------------------------------

#: Reasons (substrings) a skip may give in CI; one a line, ``#`` starts a comment.
EXPECTED_SKIPS_FILE = Path(__file__).resolve().parent / "expected_skips.txt"


def strict_skips() -> bool:
    return bool(os.environ.get("CI") or os.environ.get("WIREMCP_STRICT_SKIPS"))


def _expected_reasons() -> list[str]:
    try:
        text = EXPECTED_SKIPS_FILE.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    reasons = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [reason for reason in reasons if reason]


def _skip_reason(report: pytest.CollectReport | pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _unexpected(reason: str, node: Any) -> bool:
    declared = [m.args[0] if m.args else "" for m in node.iter_markers("expected_skip")] if node is not None else []
    return not any(part in reason for part in [*declared, *_expected_reasons()])


def _fail_skip(report: pytest.CollectReport | pytest.TestReport, node: Any) -> None:
    if not (strict_skips() and report.skipped and not hasattr(report, "wasxfail")):
        return
    reason = _skip_reason(report)
    if _unexpected(reason, node):
        report.outcome = "failed"
        report.longrepr = (
            f"unexpected skip ({reason}): CI or WIREMCP_STRICT_SKIPS is set, and this skip is neither marked "
            f"@pytest.mark.expected_skip(...) nor listed in {EXPECTED_SKIPS_FILE.name}"
        )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "expected_skip(reason): this test may skip in CI when its skip reason contains `reason`",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    _fail_skip(outcome.get_result(), item)  # type: ignore[attr-defined]


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    outcome = yield
    _fail_skip(outcome.get_result(), collector)  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if strict_skips() and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "FAILED: no tests were collected (exit status 5); in CI that is a failure, not a pass", red=True
            )
