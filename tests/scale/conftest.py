"""Fixtures of the scale-out tests: a real redis-server on a free loopback port (services.py).

The tests skip (and CI fails on the skip: tests/expected_skips.txt does not
declare it) when redis-server, nginx or redis-py is missing;
.ci/system-packages and the ``test`` extra install them.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable, Coroutine, Iterator

import pytest

from .services import SERVICES_MISSING, RedisServer

#: The requestState key every worker of a test deployment shares.
STATE_KEY = "scale-tests-shared-key-0123456789"

needs_services = pytest.mark.skipif(
    bool(SERVICES_MISSING), reason=f"not installed: {', '.join(SERVICES_MISSING)} (.ci/system-packages)"
)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    try:
        yield server
    finally:
        server.kill()


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an ``async def`` test with ``asyncio.run`` (fixtures are passed through)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run
