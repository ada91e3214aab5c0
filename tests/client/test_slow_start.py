"""The era probe against a stdio server that is slow to start (issue 24), over real processes.

2026-07-28 basic/transports/stdio.mdx, Backward Compatibility: "The server
returns any other error, or does not respond within a reasonable timeout: the
server is legacy." A server process still starting up is slow, not legacy, and
versioning.mdx: "a recognized modern JSON-RPC error (such as
UnsupportedProtocolVersionError) identifies a modern server: the client retries
with a supported version rather than falling back". So:

* the probe clock starts at the server's first output (stdout or stderr), and
  a process that has written nothing gets the request ``timeout`` to start;
* a discover answer that comes after the clock ran out is still taken: the
  server is modern, whatever the fallback ``initialize`` gets back;
* a -32022 to the fallback ``initialize`` means modern, not a failure;
* a legacy server that never answers the probe still falls back.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson
import pytest

from _helpers import TESTS, legacy_cmd, run
from wiremcp.client import Client
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

SLOW = str(TESTS / "servers" / "slow_start.py")
DELAY = 2.5


def _slow(banner: str | None = None) -> dict[str, Any]:
    env = {"WIREMCP_TEST_START_DELAY": str(DELAY), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    if banner is not None:
        env["WIREMCP_TEST_START_BANNER"] = banner
    return {"command": sys.executable, "args": ["-m", "wiremcp", "run", SLOW], "env": env}


def _methods(sent: list[Any]) -> list[Any]:
    return [m.get("method") for m in sent if "method" in m]


def test_a_silent_slow_starting_modern_server_is_probed_until_it_answers() -> None:
    """No output yet: the probe limit has not started, so no initialize races the late DiscoverResult."""
    sent: list[Any] = []

    async def main() -> None:
        spec = _slow()
        on_wire = lambda d, b: sent.append(orjson.loads(b)) if d == "send" else None  # noqa: E731
        async with Client.stdio(spec["command"], spec["args"], env=spec["env"], probe_timeout=0.5, on_wire=on_wire) as c:
            assert c.era is Era.MODERN and c.protocol_version == "2026-07-28"
            assert (await c.call_tool("echo", {"text": "up"})).text == "up"

    run(main())
    assert _methods(sent)[:2] == ["server/discover", "tools/call"]


def test_a_late_discover_answer_wins_over_the_fallback() -> None:
    """The server wrote a banner, then took longer than the probe limit: initialize went out, the late
    DiscoverResult (or the -32022 the modern server gives initialize) settles the modern era."""
    sent: list[Any] = []

    async def main() -> None:
        spec = _slow(banner="slow-start: loading")
        on_wire = lambda d, b: sent.append(orjson.loads(b)) if d == "send" else None  # noqa: E731
        async with Client.stdio(spec["command"], spec["args"], env=spec["env"], probe_timeout=0.5, on_wire=on_wire) as c:
            assert c.era is Era.MODERN and c.protocol_version == "2026-07-28"
            assert c.server is not None and c.server.server_info["name"] == "slow-start"
            assert (await c.call_tool("echo", {"text": "modern"})).text == "modern"

    run(main())
    assert _methods(sent)[:3] == ["server/discover", "initialize", "tools/call"]  # no notifications/initialized


def test_a_minus_32022_to_the_fallback_initialize_means_modern() -> None:
    """A server answering concurrently refuses initialize (-32022) before its late DiscoverResult comes."""
    sent: list[Any] = []

    async def main() -> None:
        args = [str(TESTS / "servers" / "late_discover.py"), "1.5"]
        on_wire = lambda d, b: sent.append(orjson.loads(b)) if d == "send" else None  # noqa: E731
        async with Client.stdio(sys.executable, args, probe_timeout=0.3, on_wire=on_wire) as c:
            assert c.era is Era.MODERN and c.protocol_version == "2026-07-28"
            assert (await c.call_tool("echo", {"text": "still modern"})).text == "still modern"

    run(main())
    assert _methods(sent)[:3] == ["server/discover", "initialize", "tools/call"]


def test_a_legacy_server_that_never_answers_the_probe_still_falls_back() -> None:
    """A mute legacy server (no output at all): the fallback comes once the start-up allowance is spent."""

    async def main() -> None:
        command, args = legacy_cmd("silent")
        async with Client.stdio(command, args, probe_timeout=0.3, timeout=1.5) as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2025-11-25"
            assert (await c.call_tool("echo", {"text": "old"})).text == "old"

    run(main())
