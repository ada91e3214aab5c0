"""Issue 23, item 7: a legacy upstream's elicitation never reaches another downstream client.

A legacy (2025-11-25) upstream on stdio sends ``elicitation/create`` with
nothing that names the call it is for. Before the fix the proxy gave such a
request to "the most recent call in flight": with two downstream clients
calling at once, the first client's question went to the second client, whose
answer came back to the first one (a leak between users). Now the proxy
routes such a request only when it can tell whose it is (the call's own HTTP
stream, or the one call in flight) and otherwise refuses it (the upstream
gets an error), never guessing. Real processes: ``wiremcp proxy --http`` in
front of tests/servers/legacy_only.py, two `wiremcp.Client` over HTTP; and a
proxy speaking 2025-11-25 to an HTTP upstream (tests/servers/legacy_http.py),
where each question comes on its call's stream and reaches its own client.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from conftest import SERVERS, wiremcp_cmd
from wiremcp.client import Client

pytestmark = pytest.mark.slow
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from test_http import ServerProcess  # noqa: E402

LEGACY_ONLY = str(SERVERS / "legacy_only.py")


def _proxy() -> ServerProcess:
    return ServerProcess(
        wiremcp_cmd("proxy", "--http", "--port", "0", "--", sys.executable, LEGACY_ONLY),
        r"serving 'wiremcp-proxy' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )


def _answering(name: str, asked: list[str]) -> Any:
    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(name)
        return {"action": "accept", "content": {"name": name}}

    return answer


async def _two_clients_at_once(url: str) -> tuple[list[str], dict[str, Any]]:
    asked: list[str] = []
    results: dict[str, Any] = {}

    async def one(name: str, delay: float) -> None:
        async with Client.http(url, elicitation=_answering(name, asked)) as client:
            try:
                results[name] = json.loads((await client.call_tool("ask", {"delay": delay})).text)
            except Exception as exc:  # noqa: BLE001 - a refusal is an allowed outcome, a leak is not
                results[name] = f"error: {exc}"

    # alice's upstream call waits 1 s before asking: bob's call is in flight by then
    await asyncio.gather(one("alice", 1.0), one("bob", 0.0))
    return asked, results


def test_two_clients_calling_at_once_never_get_each_others_elicitation() -> None:
    proc = _proxy()
    try:
        url = f"http://127.0.0.1:{proc.port}/mcp"
        asked, results = asyncio.run(asyncio.wait_for(_two_clients_at_once(url), 60))
    finally:
        proc.stop()
    print("asked:", asked, "results:", results)
    # Before: the two calls never ended (alice's question went to bob's call; 60 s timeout).
    assert asked.count("alice") <= 1 and asked.count("bob") <= 1, asked
    for me, other in (("alice", "bob"), ("bob", "alice")):
        got = results[me]
        assert other not in json.dumps(got), f"{me} received {other}'s answer: {got}"
        if isinstance(got, dict) and got.get("action") == "accept":
            assert got["content"] == {"name": me}


def test_one_call_in_flight_is_asked_as_before() -> None:
    proc = _proxy()
    try:
        url = f"http://127.0.0.1:{proc.port}/mcp"

        async def main() -> Any:
            asked: list[str] = []
            async with Client.http(url, elicitation=_answering("carol", asked)) as client:
                got = json.loads((await client.call_tool("ask", {})).text)
            return asked, got

        asked, got = asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        proc.stop()
    assert asked == ["carol"]
    assert got == {"action": "accept", "content": {"name": "carol"}}


def test_over_http_each_clients_elicitation_reaches_that_client() -> None:
    upstream = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "legacy_http.py"), "--http", "--port", "0"), r"at http://127\.0\.0\.1:(\d+)/mcp"
    )
    proc = None
    try:
        proc = ServerProcess(
            [sys.executable, str(SERVERS / "legacy_upstream_proxy.py"), f"http://127.0.0.1:{upstream.port}/mcp"],
            r"serving 'wiremcp-proxy' .* at http://127\.0\.0\.1:(\d+)/mcp",
        )
        url = f"http://127.0.0.1:{proc.port}/mcp"

        async def main() -> tuple[list[str], dict[str, str]]:
            asked: list[str] = []
            results: dict[str, str] = {}
            both_in_flight = asyncio.Event()

            def answering(name: str) -> Any:
                async def answer(params: dict[str, Any]) -> dict[str, Any]:
                    asked.append(name)
                    if len(asked) == 2:
                        both_in_flight.set()
                    await asyncio.wait_for(both_in_flight.wait(), 20)  # both questions out before either answer
                    return {"action": "accept", "content": {"name": name}}

                return answer

            async def one(name: str) -> None:
                async with Client.http(url, elicitation=answering(name)) as client:
                    results[name] = (await client.call_tool("ask_name", {})).text

            await asyncio.gather(one("alice"), one("bob"))
            return asked, results

        asked, results = asyncio.run(asyncio.wait_for(main(), 60))
    finally:
        if proc is not None:
            proc.stop()
        upstream.stop()
    assert sorted(asked) == ["alice", "bob"]
    assert results == {"alice": "Hello, alice!", "bob": "Hello, bob!"}
