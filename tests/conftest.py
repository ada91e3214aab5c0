"""Shared test helpers: a real server subprocess spoken to line by line."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

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
        return orjson.loads(line)

    def ask(self, message: Any, timeout: float = 10.0) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout)

    def expect_silence(self, timeout: float = 0.3) -> None:
        line = self.read_line(timeout)
        assert line is None, f"expected no output, got {line!r}"

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
        if self.proc.poll() is None:
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
