"""Tool transformation (issue 27) end to end: a real stdio subprocess, real HTTP on loopback, both eras, and a proxy.

* examples/transform.py (the docs' example): tools derived from a mounted
  server's tool. Each derived inputSchema is exactly the source's with the
  renames, hidden arguments, descriptions and defaults applied; calls are
  mapped back (a hidden argument's fixed value, a default filled in); a
  hidden argument, or a renamed one under its old name, is refused with the
  very error an unknown argument gets; output functions wrap the result
  (text, or structured with their own outputSchema);
* tests/servers/transform_proxy.py: ``wiremcp.proxy`` in front of the example
  (another process), deriving from the upstream's tools: the derived
  definitions come from the upstream's list, ``replace=True`` takes the
  source off the list and refuses calls to it, and a call that comes before
  any list works (the proxy lists upstream itself);
* mistakes are refused at registration.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from _http_process import HTTPServer
from conftest import ROOT, SERVERS, StdioPeer, call, wiremcp_cmd
from wiremcp import Client
from wiremcp.client import RemoteError
from wiremcp.server import Server
from wiremcp.server.transform import Arg

EXAMPLE = str(ROOT / "examples" / "transform.py")
PROXY = str(SERVERS / "transform_proxy.py")

SOURCE_SCHEMA = {
    "type": "object",
    "properties": {
        "loc": {"type": "string"},
        "d": {"type": "integer", "default": 1},
        "units": {"type": "string", "default": "metric"},
        "api_v": {"type": "integer", "default": 1},
    },
    "required": ["loc"],
    "additionalProperties": False,
}
FORECAST = {
    "name": "forecast",
    "description": "The weather forecast for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city, e.g. 'Paris'."},
            "days": {"type": "integer", "default": 3, "description": "How many days ahead, 1 to 7."},
            "units": {"type": "string", "default": "metric"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    "outputSchema": {"type": "object"},
}
FORECAST_TEXT = {
    "name": "forecast_text",
    "description": "The forecast for a city, as one line.",
    "inputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "d": {"type": "integer", "default": 1}},
        "required": ["city"],
        "additionalProperties": False,
    },
}
TEMPERATURE = {
    "name": "temperature",
    "description": "Forecast.",
    "inputSchema": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "celsius": {"type": "integer"}},
        "required": ["city", "celsius"],
    },
}


def _unknown(tool: str, argument: str) -> str:
    return f"Invalid arguments for tool {tool!r}: {argument!r} is not an accepted argument"


async def _example(client: Client) -> None:
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert list(tools) == ["vendor_fc", "forecast", "forecast_text", "temperature"]
        assert tools["vendor_fc"]["inputSchema"] == SOURCE_SCHEMA
        assert tools["forecast"] == FORECAST
        assert tools["forecast_text"] == FORECAST_TEXT
        assert tools["temperature"] == TEMPERATURE
        # renamed, defaulted (days=3) and hidden with a fixed value (api_v=2)
        paris = await c.call_tool("forecast", {"city": "Paris"})
        assert paris.structured_content == {"location": "Paris", "days": 3, "units": "metric", "temperature": 21, "api": 2}
        oslo = await c.call_tool("forecast", {"city": "Oslo", "days": 1, "units": "imperial"})
        assert oslo.structured_content == {"location": "Oslo", "days": 1, "units": "imperial", "temperature": 70, "api": 2}
        text = await c.call_tool("forecast_text", {"city": "Rome", "d": 2})
        assert text.text == "Rome: 70 degrees (imperial), 2 day(s) ahead" and text.structured_content is None
        typed = await c.call_tool("temperature", {"city": "Lima"})
        assert typed.structured_content == {"city": "Lima", "celsius": 21}
        # hidden, old names, unknown: one error, the one an unknown argument gets from any tool
        for tool, arguments, refused in [
            ("forecast", {"city": "x", "api_v": 9}, "api_v"),
            ("forecast", {"city": "x", "loc": "y"}, "loc"),
            ("forecast", {"city": "x", "bogus": 1}, "bogus"),
            ("forecast_text", {"city": "x", "units": "metric"}, "units"),
            ("vendor_fc", {"loc": "x", "bogus": 1}, "bogus"),
        ]:
            result = await c.call_tool(tool, arguments)
            assert result.is_error and result.text == _unknown(tool, refused), (tool, result.raw)
        missing = await c.call_tool("forecast", {"loc": "x"})
        assert missing.is_error and missing.text.startswith("Invalid arguments for tool 'forecast': ")


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_derived_tools_over_stdio(era: str) -> None:
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", EXAMPLE], era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_example(client), 60))


@pytest.fixture(scope="module")
def example_http() -> Any:
    pytest.importorskip("uvicorn")
    served = HTTPServer(EXAMPLE)
    yield served
    served.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_derived_tools_over_http(example_http: HTTPServer, era: str) -> None:
    asyncio.run(asyncio.wait_for(_example(Client.http(example_http.url, era=era)), 60))  # type: ignore[arg-type]


# -- a proxied source ---------------------------------------------------------------


async def _proxied(client: Client) -> None:
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        # `forecast` is replaced by `weather`; `where` follows its source `vendor_fc`
        assert list(tools) == ["vendor_fc", "where", "weather", "forecast_text", "temperature"]
        assert tools["weather"] == {
            "name": "weather",
            "description": "Weather, via the proxy.",
            "inputSchema": {
                "type": "object",
                "properties": {"place": {"type": "string", "description": "Where."}, "units": {"type": "string", "default": "metric"}},
                "required": ["place"],
                "additionalProperties": False,
            },
            "outputSchema": {"type": "object"},
        }
        assert tools["where"]["inputSchema"]["properties"].keys() == {"city", "d", "units", "api_v"}
        weather = await c.call_tool("weather", {"place": "Paris"})
        assert weather.structured_content == {"location": "Paris", "days": 5, "units": "metric", "temperature": 21, "api": 2}
        assert (await c.call_tool("where", {"city": "oslo"})).text == "OSLO"
        hidden = await c.call_tool("weather", {"place": "x", "days": 1})
        assert hidden.is_error and hidden.text == _unknown("weather", "days")
        old = await c.call_tool("weather", {"place": "x", "city": "x"})
        assert old.is_error and old.text == _unknown("weather", "city")
        with pytest.raises(RemoteError, match="Unknown tool: forecast"):
            await c.call_tool("forecast", {"city": "x"})
        assert (await c.call_tool("temperature", {"city": "Lima"})).structured_content == {"city": "Lima", "celsius": 21}


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_derived_from_a_proxied_tool_over_stdio(era: str) -> None:
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", PROXY], era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_proxied(client), 90))


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_derived_from_a_proxied_tool_over_http(era: str) -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(PROXY)
    try:
        asyncio.run(asyncio.wait_for(_proxied(Client.http(served.url, era=era)), 90))  # type: ignore[arg-type]
    finally:
        served.stop()


@pytest.mark.slow
def test_a_proxied_derived_tool_called_before_any_list(spawn: Any) -> None:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", PROXY))
    reply = peer.ask(call(1, "weather", {"place": "Quito"}), timeout=60)
    assert reply["result"]["structuredContent"]["location"] == "Quito", reply
    refused = peer.ask(call(2, "weather", {"place": "Quito", "days": 2}), timeout=60)
    assert refused["result"]["content"][0]["text"] == _unknown("weather", "days")


# -- refused at registration ------------------------------------------------------


def _source() -> Server:
    server = Server("s")

    @server.tool(inline=True)
    def search(q: str, limit: int = 5, lang: str = "en") -> str:
        return q

    return server


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"arguments": {"nope": Arg(rename="x")}}, "the source has no argument 'nope'"),
        ({"arguments": {"q": Arg(hide=True)}}, "argument 'q' is required by the source: hiding it needs default="),
        ({"arguments": {"q": Arg(rename="limit")}}, "two arguments would be named 'limit'"),
        ({"arguments": {"q": Arg(hide=True, default="x", rename="y")}}, "rename= and description= do not apply"),
        ({"arguments": {"q": Arg(default=object())}}, "is not JSON"),
        ({"arguments": {"q": "query"}}, "must be an Arg"),
        ({"arguments": {"limit": Arg(hide=True, default="ten")}}, "the value given for argument 'limit' does not fit"),
        ({"arguments": {"lang": Arg(default=3)}}, "the value given for argument 'lang' does not fit"),
        ({"output_schema": {"type": "object"}}, "give output= too"),
        ({"name": "search"}, "a tool named 'search' is already registered"),
    ],
)
def test_a_bad_transformation_is_refused(options: dict[str, Any], problem: str) -> None:
    server = _source()
    with pytest.raises((TypeError, ValueError), match=problem):
        server.add_transformed("search", **{"name": "find", **options})
    assert list(server.tools) == ["search"]


def test_replace_and_sources() -> None:
    server = _source()
    with pytest.raises(ValueError, match="has no tool named 'missing'"):
        server.add_transformed("missing", name="x")
    other = _source().get_tool("search")
    assert other is not None
    with pytest.raises(ValueError, match="replace=True needs a source registered in this server"):
        server.add_transformed(other, name="x", replace=True)
    server.add_transformed(other, name="from_another_server")
    derived = server.add_transformed("search", name="search", arguments={"q": Arg(rename="query")}, replace=True)
    assert derived is not None and list(server.tools) == ["from_another_server", "search"]
    assert derived.definition["inputSchema"]["required"] == ["query"]
    assert derived.call({"query": "kept"}, None) == {"resultType": "complete", "content": [{"type": "text", "text": "kept"}]}


def test_a_transformed_tool_keeps_its_sources_tags_under_visibility_rules() -> None:
    """The derived tool is tagged as its source (FastMCP's Tool.from_tool keeps them too) and filtered by them."""
    from wiremcp.testing import connect

    shop = Server("shop")

    @shop.tool(tags={"catalog"})
    def search(query: str, limit: int = 10) -> list[str]:
        return [query][:limit]

    shop.add_transformed("search", name="find", arguments={"query": Arg(rename="q")})
    shop.disable("search")

    async def main() -> None:
        async with connect(shop) as mcp:
            tools = {t["name"]: t for t in await mcp.client.list_tools()}
            assert list(tools) == ["find"] and tools["find"]["_meta"]["io.wiremcp/tags"] == ["catalog"]
            shop.disable(tags={"catalog"})
            assert await mcp.client.list_tools(refresh=True) == []

    asyncio.run(asyncio.wait_for(main(), 30))
