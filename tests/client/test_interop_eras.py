"""Our client against our server, both eras, over stdio and HTTP, with one handler.

The `greet` tool of tests/servers/rounds.py asks for the user's name with
`ctx.elicit`. A modern client answers it through multi round-trip requests
(2026-07-28 basic/patterns/mrtr.mdx); a legacy client answers a real
`elicitation/create` request (2025-11-25 client/elicitation.mdx). The same
`elicitation=` callback serves both.
"""

from __future__ import annotations

from typing import Any, Callable

import asyncio
import sys

import pytest

from _helpers import TESTS, run
from test_client_http import http_server  # noqa: F401 - the fixture
from wiremcp.client import Client
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

ROUNDS = str(TESTS / "servers" / "rounds.py")


async def answer_name(params: Any) -> Any:
    assert params["message"] == "What is your name?"
    return {"action": "accept", "content": {"name": "Ada"}}


async def exercise(client: Client, era: Era) -> None:
    assert client.era is era
    assert (await client.call_tool("greet", {})).text == "Hello, Ada!"
    assert (await client.call_tool("two_step", {})).text == "Ada likes Ada"


async def answer_both(params: Any) -> Any:
    if "colour" in params["message"].lower() or "Colour" in params["message"]:
        return {"action": "accept", "content": {"color": "Ada"}}
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_stdio_both_eras(era: str) -> None:
    expected = Era.MODERN if era == "auto" else Era.LEGACY

    async def main() -> None:
        async with Client.stdio(sys.executable, ["-m", "wiremcp", "run", ROUNDS], era=era, elicitation=answer_both) as c:
            await exercise(c, expected)

    run(main())


@pytest.mark.parametrize("era", ["auto", "legacy"])
def test_http_both_eras(http_server: Callable[[str], str], era: str) -> None:  # noqa: F811
    url = http_server(ROUNDS)
    expected = Era.MODERN if era == "auto" else Era.LEGACY

    async def main() -> None:
        async with Client.http(url, era=era, elicitation=answer_both) as c:
            await exercise(c, expected)

    run(main())


def test_modern_and_legacy_clients_interleaved_on_one_http_server(http_server: Callable[[str], str]) -> None:  # noqa: F811
    url = http_server(ROUNDS)

    async def one(era: str) -> str:
        async with Client.http(url, era=era, elicitation=answer_both) as c:
            texts = []
            for _ in range(3):
                texts.append((await c.call_tool("greet", {})).text)
                await asyncio.sleep(0)
            assert c.era is not None
            return f"{c.era.value}:{','.join(texts)}"

    async def main() -> Any:
        return await asyncio.gather(one("modern"), one("legacy"), one("modern"), one("legacy"))

    results = run(main())
    assert results == [f"{era}:" + ",".join(["Hello, Ada!"] * 3) for era in ("modern", "legacy", "modern", "legacy")]
