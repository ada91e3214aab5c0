"""Helpers for the client tests: commands for real server processes."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any, Awaitable

import pytest

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
SAMPLE = str(TESTS / "servers" / "sample.py")
LEGACY = str(TESTS / "servers" / "legacy_only.py")
OFFICIAL_PYTHON = ROOT / "bench" / ".venv-official" / "bin" / "python"
OFFICIAL_ECHO = str(ROOT / "bench" / "fixtures" / "official_echo.py")
#: .ci/run sets this after installing the official SDK: interop tests must run, never skip.
REQUIRE_INTEROP = bool(os.environ.get("WIREMCP_REQUIRE_INTEROP"))
needs_official = pytest.mark.skipif(
    not OFFICIAL_PYTHON.exists() and not REQUIRE_INTEROP,
    reason="bench/.venv-official is not set up (bash bench/setup_official.sh)",
)


def run(coro: Awaitable[Any]) -> Any:
    """Run one test coroutine on a fresh event loop (no pytest-asyncio needed)."""
    return asyncio.run(asyncio.wait_for(coro, 60))


def sample_cmd() -> tuple[str, list[str]]:
    return sys.executable, ["-m", "wiremcp", "run", SAMPLE]


def legacy_cmd(mode: str = "error") -> tuple[str, list[str]]:
    return sys.executable, [LEGACY, mode]


class Wire:
    """An ``on_wire`` collector: every envelope sent and received, decoded when it is JSON."""

    def __init__(self) -> None:
        self.sent: list[Any] = []
        self.received: list[Any] = []
        self._arrived = asyncio.Event()

    def __call__(self, direction: str, data: bytes) -> None:
        import orjson

        try:
            obj: Any = orjson.loads(data)
        except orjson.JSONDecodeError:
            obj = data
        (self.sent if direction == "send" else self.received).append(obj)
        if direction == "recv":
            self._arrived.set()

    async def reply(self, predicate: Any, timeout: float = 10) -> Any:
        """The first received message ``predicate`` accepts, waiting for it up to ``timeout`` seconds."""
        async def wait() -> Any:
            while True:
                for msg in self.received:
                    if predicate(msg):
                        return msg
                self._arrived.clear()
                await self._arrived.wait()

        return await asyncio.wait_for(wait(), timeout)
