"""Helpers for the client tests: commands for real server processes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Awaitable

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
ROOT = TESTS.parent
SAMPLE = str(TESTS / "servers" / "sample.py")
LEGACY = str(HERE / "servers" / "legacy_only.py")
OFFICIAL_PYTHON = ROOT / "bench" / ".venv-official" / "bin" / "python"
OFFICIAL_ECHO = str(ROOT / "bench" / "fixtures" / "official_echo.py")


def run(coro: Awaitable[Any]) -> Any:
    """Run one test coroutine on a fresh event loop (no pytest-asyncio needed)."""
    return asyncio.run(asyncio.wait_for(coro, 60))  # type: ignore[arg-type]


def sample_cmd() -> tuple[str, list[str]]:
    return sys.executable, ["-m", "wiremcp", "run", SAMPLE]


def legacy_cmd(mode: str = "error") -> tuple[str, list[str]]:
    return sys.executable, [LEGACY, mode]
