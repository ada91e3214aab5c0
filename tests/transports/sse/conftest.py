"""Fixtures: official-SDK HTTP+SSE servers (sse_servers.py)."""

from __future__ import annotations

from typing import Callable, Iterator

import pytest

from sse_servers import SSEServer


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

