"""Era detection and the legacy (2025-11-25) path, against real processes.

Spec: basic/versioning.mdx (Backward Compatibility, Compatibility Matrix),
basic/transports/stdio.mdx (Backward Compatibility), 2025-11-25
basic/lifecycle.mdx (Initialization), 2025-11-25 client/elicitation.mdx.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from _helpers import OFFICIAL_ECHO, OFFICIAL_PYTHON, needs_official, legacy_cmd, run
from wiremcp.client import Client, EraCache, RemoteError
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow


def test_fallback_on_non_modern_error() -> None:
    """stdio.mdx: any error that is not a recognized modern error means legacy: initialize follows."""
    sent = []
    eras = EraCache()

    async def main() -> Any:
        command, args = legacy_cmd("error")
        async with Client.stdio(command, args, eras=eras, on_wire=lambda d, b: sent.append((d, orjson.loads(b)))) as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2025-11-25"
            assert c.server_info == {"name": "legacy", "version": "1.0"}
            assert c.server is not None and c.server.instructions == "old school"
            assert [t["name"] for t in await c.list_tools()] == ["echo", "ask", "received"]
            assert (await c.call_tool("echo", {"text": "hi"})).text == "hi"
            await c.ping()
            received = orjson.loads((await c.call_tool("received")).text)
            return received, c.transport.cache_key

    received, key = run(main())
    methods = [m.get("method") for m in received]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    init = received[1]["params"]
    assert init["protocolVersion"] == "2025-11-25" and init["clientInfo"]["name"] == "wiremcp"
    # Legacy requests carry no modern _meta.
    later = [m for m in received[3:] if m.get("method") in ("tools/list", "tools/call")]
    assert later and all("io.modelcontextprotocol/protocolVersion" not in (m.get("params") or {}).get("_meta", {}) for m in later)
    assert eras.get(key) == (Era.LEGACY, "2025-11-25")


def test_era_is_cached_per_server() -> None:
    """versioning.mdx: the era is cached for the server; a second client given the same EraCache skips the probe."""
    eras = EraCache()

    async def main() -> Any:
        command, args = legacy_cmd("error")
        async with Client.stdio(command, args, eras=eras) as c:
            assert c.era is Era.LEGACY
        async with Client.stdio(command, args, eras=eras) as c:
            received = orjson.loads((await c.call_tool("received")).text)
        return received

    received = run(main())
    assert [m.get("method") for m in received][:2] == ["initialize", "notifications/initialized"]


def test_fallback_on_silence() -> None:
    """stdio.mdx: no answer to the probe within a timeout means legacy.

    This server writes nothing at all, so the probe clock starts once the start-up allowance (the
    request ``timeout``) is spent (`wiremcp.client._negotiate`).
    """

    async def main() -> None:
        command, args = legacy_cmd("silent")
        async with Client.stdio(command, args, probe_timeout=0.3, timeout=1.5) as c:
            assert c.era is Era.LEGACY
            assert (await c.call_tool("echo", {"text": "late"})).text == "late"

    run(main())


def test_legacy_server_requests_answered_by_callbacks() -> None:
    """2025-11-25: the server sends elicitation/create on the connection; the elicitation callback answers it."""
    asked = []

    async def elicit(params: Any) -> Any:
        asked.append(params)
        return {"action": "accept", "content": {"name": "octocat"}}

    async def main() -> Any:
        command, args = legacy_cmd("error")
        async with Client.stdio(command, args, elicitation=elicit) as c:
            return await c.call_tool("ask")

    result = run(main())
    assert asked and asked[0]["message"] == "name?"
    assert orjson.loads(result.text) == {"action": "accept", "content": {"name": "octocat"}}


def test_legacy_server_request_without_callback_gets_an_error() -> None:
    """A server request the client did not declare a capability for gets -32601, never silence."""

    async def main() -> Any:
        command, args = legacy_cmd("error")
        async with Client.stdio(command, args) as c:
            return await c.call_tool("ask")

    result = run(main())
    assert orjson.loads(result.text)["code"] == -32601




@needs_official
def test_official_sdk_server_modern() -> None:
    """Interop: the official SDK (mcp 2.3.0) server answers the probe; we stay modern."""

    async def main() -> None:
        async with Client.stdio(str(OFFICIAL_PYTHON), [OFFICIAL_ECHO]) as c:
            assert c.era is Era.MODERN
            assert (c.server_info or {})["name"] == "bench-echo"
            assert [t["name"] for t in await c.list_tools()] == ["echo"]
            assert (await c.call_tool("echo", {"text": "über"})).text == "über"
            with pytest.raises(RemoteError):
                await c.request("no/such/method")

    run(main())


@needs_official
def test_official_sdk_server_forced_legacy() -> None:
    """Interop: era='legacy' runs the 2025-11-25 initialize handshake against the official SDK server."""

    async def main() -> None:
        async with Client.stdio(str(OFFICIAL_PYTHON), [OFFICIAL_ECHO], era="legacy") as c:
            assert c.era is Era.LEGACY and c.protocol_version == "2025-11-25"
            assert (c.server_info or {})["name"] == "bench-echo"
            await c.ping()
            assert [t["name"] for t in await c.list_tools()] == ["echo"]
            assert (await c.call_tool("echo", {"text": "old"})).text == "old"

    run(main())


def test_era_knowledge_is_per_client_by_default() -> None:
    """No process-global era cache: a client without a shared EraCache probes for itself."""

    async def main() -> Any:
        command, args = legacy_cmd("error")
        async with Client.stdio(command, args) as c:
            assert c.era is Era.LEGACY and len(c.eras) == 1
        async with Client.stdio(command, args) as c:
            assert len(c.eras) == 1
            return orjson.loads((await c.call_tool("received")).text)

    received = run(main())
    assert [m.get("method") for m in received][:2] == ["server/discover", "initialize"]
