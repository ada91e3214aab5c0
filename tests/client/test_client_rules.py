"""Client rules that need a misbehaving server: a scripted raw-JSON stdio process.

Spec: basic/index.mdx (ResultType), basic/patterns/mrtr.mdx (Client
Requirements), server/utilities/caching.mdx, server/resources.mdx,
server/prompts.mdx, server/utilities/completion.mdx,
server/utilities/pagination.mdx.
"""

from __future__ import annotations

from typing import Any

import sys

import orjson
import pytest

from _helpers import run, TESTS
from wiremcp.client import Client, ProtocolViolation

pytestmark = pytest.mark.slow

SCRIPTED = str(TESTS / "servers" / "scripted.py")
STATE = "opaque \u00e9=+/ \"quoted\" state"


def client(**options: Any) -> Any:
    return Client.stdio(sys.executable, [SCRIPTED], **options)


def test_unknown_result_type_is_invalid() -> None:
    """basic/index.mdx, ResultType: a resultType the client does not recognize MUST be considered invalid."""

    async def main() -> None:
        async with client() as c:
            with pytest.raises(ProtocolViolation, match="banana"):
                await c.call_tool("weird")
            # absent resultType = complete (backward compatibility)
            assert (await c.call_tool("no_result_type")).text == "final"

    run(main())


def test_request_state_is_echoed_byte_for_byte_under_a_new_id() -> None:
    """mrtr.mdx, Client Requirements 1-3: retry at once, echo requestState exactly, new JSON-RPC id, no inputResponses."""
    sent = []

    async def main() -> Any:
        async with client(on_wire=lambda d, b: sent.append((d, b))) as c:
            return await c.call_tool("state_only", {"x": 1})

    result = run(main())
    echoed = orjson.loads(result.text)
    assert echoed == {"state": STATE, "inputResponses": None}
    calls = [orjson.loads(b) for d, b in sent if d == "send" and b'"state_only"' in b]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    assert "requestState" not in calls[0]["params"]
    assert calls[1]["params"]["arguments"] == {"x": 1}
    raw_state = orjson.dumps(STATE)
    assert raw_state in [b for d, b in sent if d == "send" and b'"state_only"' in b][1]


def test_input_rounds_are_bounded() -> None:
    """mrtr.mdx: a server MAY ask again; the client bounds the rounds and then fails."""

    async def main() -> None:
        async with client(max_input_rounds=3, on_wire=lambda d, b: sent.append(b) if d == "send" else None) as c:
            with pytest.raises(ProtocolViolation, match="3 rounds"):
                await c.call_tool("forever")

    sent: list[bytes] = []
    run(main())
    assert sum(1 for b in sent if b'"forever"' in b) == 4


def test_malformed_input_required() -> None:
    """mrtr.mdx, Server Requirements 6; undeclared capability (Requirement 7) is refused by the client."""

    async def main() -> None:
        async with client() as c:
            with pytest.raises(ProtocolViolation, match="inputRequests or requestState"):
                await c.call_tool("empty_input")
            with pytest.raises(ProtocolViolation, match="did not declare"):
                await c.call_tool("undeclared")

    run(main())


def test_resources_prompts_completion_and_pagination() -> None:
    """server/resources.mdx, server/prompts.mdx, completion.mdx, pagination.mdx."""

    async def main() -> None:
        async with client() as c:
            assert [r["uri"] for r in await c.list_resources()] == ["mem://a", "mem://b"]
            assert [t["uriTemplate"] for t in await c.list_resource_templates()] == ["mem://{x}"]
            read = await c.read_resource("mem://a")
            assert read.text == "content of mem://a" and read.ttl_ms == 60000
            prompt = await c.get_prompt("greet", {"who": "ada"})
            assert prompt.description == "greeting" and prompt.messages[0]["content"]["text"] == "hello ada"
            assert [p["name"] for p in await c.list_prompts()] == ["greet"]
            done = await c.complete({"type": "ref/prompt", "name": "greet"}, "who", "a")
            assert done.values == ["a1", "a2"] and done.total == 2 and not done.has_more

    run(main())


def test_cache_keys_and_mrtr_results_are_not_cached() -> None:
    """caching.mdx, Cache Key: per method and params; results of MRTR retries are never cached."""
    sent = []

    async def main() -> Any:
        async with client(roots=[{"uri": "file:///w", "name": "w"}], on_wire=lambda d, b: sent.append((d, b))) as c:
            await c.read_resource("mem://a")
            await c.read_resource("mem://a")
            await c.read_resource("mem://z")
            first = await c.read_resource("mem://ask")
            await c.read_resource("mem://ask")
            return first

    first = run(main())
    assert orjson.loads(first.text) == [{"uri": "file:///w", "name": "w"}]
    reads = [orjson.loads(b)["params"]["uri"] for d, b in sent if d == "send" and b"resources/read" in b]
    assert reads.count("mem://a") == 1 and reads.count("mem://z") == 1
    assert reads.count("mem://ask") == 4  # two calls, each two rounds: nothing cached


def test_unclaimed_log_messages_go_to_the_client_callback() -> None:
    """stdio: notifications/message names no request; with no call asking for logs it goes to Client(on_log=)."""
    logs: list[Any] = []

    async def main() -> None:
        async with client(on_log=logs.append) as c:
            await c.call_tool("shout_log")

    run(main())
    assert logs == [{"level": "info", "data": "hello"}]
