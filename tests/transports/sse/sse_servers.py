"""The official SDK's HTTP+SSE server as a real process on a free loopback port, and the ``sse_server``
fixture (used by tests/client/group too). Not a conftest.py: a second top-level ``conftest`` module
would shadow tests/conftest.py, which other tests import from."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent
OFFICIAL_PYTHON = Path(os.environ.get("WIREMCP_OFFICIAL_PYTHON") or ROOT / "bench" / ".venv-official" / "bin" / "python")
SSE_SERVER = str(HERE / "official_sse_server.py")
#: .ci/run sets this after installing the official SDK: interop tests must run, never skip.
REQUIRE_INTEROP = bool(os.environ.get("WIREMCP_REQUIRE_INTEROP"))
needs_official = pytest.mark.skipif(
    not OFFICIAL_PYTHON.exists() and not REQUIRE_INTEROP,
    reason="bench/.venv-official is not set up (bash bench/setup_official.sh)",
)


class SSEServer:
    """One official-SDK HTTP+SSE server process: ``url`` is its event stream (``/sse``)."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(OFFICIAL_PYTHON), SSE_SERVER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().split()
        if not line or line[0] != "ready":
            self.proc.kill()
            raise RuntimeError(f"the SSE server did not start: {self.proc.communicate()[1][-2000:]}")
        self.port = int(line[1])
        self.url = f"http://127.0.0.1:{self.port}/sse"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        self.kill()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def sse_server() -> Iterator[Callable[..., SSEServer]]:
    """Start official-SDK SSE servers (arguments: ``--version V`` pins the answered version)."""
    started: list[SSEServer] = []

    def start(*args: str) -> SSEServer:
        server = SSEServer(*args)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
