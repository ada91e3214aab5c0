"""What a client learns when its stdio server dies: the exit status and the end of stderr, bounded.

Spec: basic/transports/stdio.mdx (Unexpected Termination; stderr is for
logging). Runs the crashing server in tests/servers/crashing.py.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from _helpers import TESTS, run
from wiremcp.client import Client, ConnectionClosed
from wiremcp.transports.stdio.client import STDERR_TAIL_LINES, STDERR_TAIL_WIDTH

pytestmark = pytest.mark.slow

CRASHING = str(TESTS / "servers" / "crashing.py")


@pytest.mark.parametrize("attempt", range(5))  # the exit and stdout's end race: every run must name both
def test_every_pending_call_learns_the_exit_status_and_the_stderr_tail(attempt: int) -> None:
    async def main() -> list[Any]:
        async with Client.stdio(sys.executable, [CRASHING]) as c:
            held = [asyncio.ensure_future(c.call_tool("hold")) for _ in range(3)]
            crash = asyncio.ensure_future(c.call_tool("crash"))
            return list(await asyncio.gather(*held, crash, return_exceptions=True))

    failures = run(main())
    assert len(failures) == 4 and len({str(f) for f in failures}) == 1
    failure = failures[0]
    assert type(failure) is ConnectionClosed
    message = str(failure)
    head, _, tail = message.partition("; its stderr ends with:\n  ")
    assert head == "the server closed its stdout (exit status 7)"
    lines = tail.split("\n  ")
    assert len(lines) == STDERR_TAIL_LINES
    assert lines[-3:] == ["Traceback (most recent call last):", "  the cheese module", "fatal: out of cheese"]
    # The 20,000-character line is cut: the message stays small whatever the server wrote.
    assert lines[1] == "x" * STDERR_TAIL_WIDTH + "... (20000 characters)"
    assert len(message) < STDERR_TAIL_LINES * (STDERR_TAIL_WIDTH + 40) + 100
