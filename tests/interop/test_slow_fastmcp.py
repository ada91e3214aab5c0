"""The wiremcp client against a fastmcp 4.2.3 (2026-07-28) server slow to start over stdio (issue 24).

Under load, ``wiremcp call fail`` against fastmcp failed: the DiscoverResult came
after the probe limit, the client fell back to ``initialize``, and fastmcp (now
serving 2026-07-28 on that connection) answered -32022 "connection is serving the
2026-07-28 era". The fastmcp server here prints a line to stderr, then takes
longer than the probe limit to serve, so the probe clock runs out before it can
answer (`wiremcp.client._negotiate`): the late DiscoverResult must win
(tests/client/test_slow_start.py has the -32022-first order).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from peers import python_peer
from wiremcp.client import Client, EraCache
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

FOREIGN = Path(__file__).resolve().parent / "frameworks" / "foreign_server.py"
#: Writes a line to stderr, sleeps, then runs the fastmcp server as its own __main__.
DELAYED = (
    "import runpy, sys, time; sys.stderr.write('starting\\n'); sys.stderr.flush(); "
    "time.sleep(float(sys.argv[1])); sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def _command(delay: float) -> tuple[str, list[str]]:
    return str(python_peer("fastmcp-4.2.3")), ["-c", DELAYED, str(delay), str(FOREIGN)]


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_a_late_discover_answer_from_fastmcp_settles_the_modern_era() -> None:
    sent: list[Any] = []

    async def main() -> None:
        command, args = _command(2.0)
        on_wire = lambda d, b: sent.append(orjson.loads(b)) if d == "send" else None  # noqa: E731
        async with Client.stdio(command, args, probe_timeout=0.3, on_wire=on_wire) as c:
            assert c.era is Era.MODERN and c.protocol_version == "2026-07-28"
            result = await c.call_tool("fail")
            assert result.is_error and "this tool always fails" in result.text

    _run(main())
    methods = [m.get("method") for m in sent if "method" in m]
    assert methods[:3] == ["server/discover", "initialize", "tools/call"], methods
