"""Dependency injection (issue 27) end to end: a real stdio subprocess and real HTTP on loopback, both eras.

* examples/dependencies.py (the docs' example): injected parameters are not in
  the inputSchema, a caller sending one is refused as for any unknown
  argument, the lifespan-scoped database is shared by calls;
* tests/servers/depends.py: a request-scoped dependency asked for twice in a
  call (by two parameters, one through another dependency) runs once;
  lifespan-scoped ones (async generator, sync generator,
  ``@asynccontextmanager`` taking another) open once, before the first
  request is read, and close in reverse order when the server stops; a plain
  tool in a worker thread, a transformed tool and a mounted server's tool get
  theirs; a dependency's ToolError is shown, any other exception masked;
* mistakes are refused at registration (TypeError), not when a call comes.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any, AsyncIterator, Iterator

import pytest

from _http_process import HTTPServer
from conftest import ROOT, SERVERS, StdioPeer, call, request, wiremcp_cmd
from wiremcp import Client
from wiremcp.server import Context, Server
from wiremcp.server.depends import Depends

EXAMPLE = str(ROOT / "examples" / "dependencies.py")
DEPENDS = str(SERVERS / "depends.py")
OPENED = ["open pool", "open settings", "open client", "open child"]
CLOSED = ["close child", "close client", "close settings", "close pool"]


async def _notes(client: Client) -> None:
    async with client as c:
        tools = {t["name"]: t for t in await c.list_tools()}
        assert tools["add_note"]["inputSchema"] == {
            "type": "object",
            "properties": {"body": {"type": "string"}},
            "required": ["body"],
            "additionalProperties": False,
        }
        assert tools["my_notes"]["inputSchema"] == {"type": "object", "properties": {}, "additionalProperties": False}
        assert (await c.call_tool("add_note", {"body": "milk"})).text == "saved for wiremcp (call 1)"
        assert (await c.call_tool("add_note", {"body": "eggs"})).text == "saved for wiremcp (call 2)"
        assert (await c.call_tool("my_notes", {})).structured_content == {"result": ["milk", "eggs"]}
        refused = await c.call_tool("add_note", {"body": "x", "db": "mine"})
        assert refused.is_error
        assert refused.text == "Invalid arguments for tool 'add_note': 'db' is not an accepted argument"


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_example_over_stdio(era: str) -> None:
    client = Client.stdio(sys.executable, ["-m", "wiremcp", "run", EXAMPLE], era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_notes(client), 60))


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_example_over_http(era: str) -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(EXAMPLE)  # a process per era: the notes start empty
    try:
        asyncio.run(asyncio.wait_for(_notes(Client.http(served.url, era=era)), 60))  # type: ignore[arg-type]
    finally:
        served.stop()


def _text(reply: dict[str, Any]) -> str:
    assert "result" in reply, reply
    return str(reply["result"]["content"][0]["text"])


@pytest.mark.slow
def test_scopes_caching_and_lifespan_over_stdio(spawn: Any, tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    peer: StdioPeer = spawn(*wiremcp_cmd("run", DEPENDS), env={"DEPENDS_EVENTS": str(events)})
    first = _text(peer.ask(call(1, "whoami", {"name": "ada"})))
    # request_id ran once for the call though `rid` and `label` both asked for it; the resources opened once
    assert first == "ada pool 1 pool#1 client(settings) runs=1 settings=1"
    assert events.read_text().splitlines() == OPENED  # opened before the first request was answered, once
    assert _text(peer.ask(call(2, "whoami", {"name": "bo"}))) == "bo pool 2 pool#2 client(settings) runs=2 settings=1"
    assert _text(peer.ask(call(3, "threaded", {"x": 7}))) == "7 client(settings)"
    assert _text(peer.ask(call(4, "runs", {}))) == "3 settings=1"  # a transformed tool of a tool with dependencies
    assert _text(peer.ask(call(5, "kid_peek", {}))) == "child-resource"  # a mounted server's, opened with ours
    refused = peer.ask(call(6, "refused", {"x": 1}))["result"]
    assert refused["isError"] is True and refused["content"][0]["text"] == "no entry today"
    masked = peer.ask(call(7, "masked", {"x": 1}))["result"]
    assert masked["isError"] is True and "secret detail" not in masked["content"][0]["text"]
    listed = peer.ask(request(8, "tools/list"))["result"]["tools"]
    assert {t["name"]: sorted(t["inputSchema"]["properties"]) for t in listed} == {
        "whoami": ["name"], "threaded": ["x"], "refused": ["x"], "masked": ["x"], "runs": [], "kid_peek": [],
    }
    assert events.read_text().splitlines() == OPENED
    peer.finish_quietly()
    assert events.read_text().splitlines() == OPENED + CLOSED  # closed at shutdown, in reverse order


@pytest.mark.slow
def test_lifespan_resources_over_http_in_the_legacy_era(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    events = tmp_path / "events.txt"
    served = HTTPServer(DEPENDS, env={"DEPENDS_EVENTS": str(events)})

    async def main() -> None:
        async with Client.http(served.url, era="legacy") as c:
            assert (await c.call_tool("whoami", {"name": "ada"})).text.startswith("ada pool 1 pool#1 ")
            assert (await c.call_tool("whoami", {"name": "bo"})).text.endswith("runs=2 settings=1")

    try:
        asyncio.run(asyncio.wait_for(main(), 60))
        assert events.read_text().splitlines() == OPENED
    finally:
        served.stop()
    assert events.read_text().splitlines() == OPENED + CLOSED


# -- refused at registration ------------------------------------------------------


def _needs_x(x: int) -> int:
    return x


def _with_context(ctx: Context) -> Iterator[int]:
    yield 1


def _request_scoped() -> int:
    return 1


async def _lifespan_of_request(n: Annotated[int, Depends(_request_scoped)]) -> AsyncIterator[int]:
    yield n


async def _resource() -> AsyncIterator[str]:
    yield "r"


def _gen() -> Iterator[int]:
    yield 1


@pytest.mark.parametrize(
    "dependency, problem",
    [
        (Depends(_needs_x), "parameter 'x': give it a default"),
        (Depends(_with_context), "has no request: it cannot take a Context"),
        (Depends(_lifespan_of_request), "cannot use request-scoped"),
        (Depends(_gen, scope="request"), "is a generator (a resource): its scope is 'lifespan'"),
    ],
)
def test_a_bad_dependency_is_refused_at_registration(dependency: Depends, problem: str) -> None:
    server = Server("bad")

    async def tool(v: int) -> str:
        return ""

    tool.__annotations__ = {"v": Annotated[int, dependency], "return": str}  # (annotations are strings here)
    with pytest.raises(TypeError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        server.add_tool(tool)


def test_a_dependency_cycle_is_refused() -> None:
    def first(x: Annotated[int, "placeholder"]) -> int:
        return x

    marker = Depends(first)
    first.__annotations__["x"] = Annotated[int, marker]  # first depends on itself

    async def tool(v: int) -> str:
        return ""

    tool.__annotations__ = {"v": Annotated[int, marker], "return": str}
    with pytest.raises(TypeError, match="depends on itself"):
        Server("cycle").add_tool(tool)


def test_a_lifespan_dependency_outside_the_lifespan_is_named() -> None:
    """Called without a transport (no lifespan): the error says how to fix it (logged; the client gets a masked error)."""

    server = Server("outside")

    @server.tool
    async def use(r: Annotated[str, Depends(_resource)]) -> str:
        return r

    tool = server.get_tool("use")
    assert tool is not None and tool.depends is not None
    with pytest.raises(RuntimeError, match="lifespan of server 'outside' is not running"):
        asyncio.run(tool.depends.resolve(None))

    async def inside() -> str:
        async with server.lifespan:
            out = tool.call({}, None)
            assert not isinstance(out, dict)
            result = await out
            return str(result["content"][0]["text"])

    assert asyncio.run(inside()) == "r"


# -- resources, templates, prompts and completers ---------------------------------


async def _content_session(client: Client) -> None:
    from wiremcp.client import RemoteError

    async with client as c:
        templates = {t["uriTemplate"] for t in await c.list_resource_templates()}
        assert "depends://greet/{who}" in templates
        prompts = {p["name"]: p for p in await c.list_prompts()}
        assert prompts["brief"]["arguments"] == [{"name": "topic", "required": True}]  # `c` and `ctx` are injected
        assert "arguments" not in prompts["refused_prompt"]
        assert (await c.read_resource("depends://pool")).text.startswith("pool pool#")  # lifespan and request scope
        assert (await c.read_resource("depends://greet/ada")).text == "ada via client(settings)"
        got = await c.get_prompt("brief", {"topic": "cats"})
        assert [m["content"]["text"] for m in got.messages] == ["cats via client(settings)"]
        done = await c.complete({"type": "ref/prompt", "name": "brief"}, "topic", "ca")
        assert done.values == ["ca-client(settings)"]
        with pytest.raises(RemoteError) as masked:
            await c.read_resource("depends://masked")
        assert masked.value.code == -32603 and "secret detail" not in masked.value.message
        with pytest.raises(RemoteError) as refused:
            await c.get_prompt("refused_prompt")
        assert refused.value.code == -32603
        with pytest.raises(RemoteError) as unknown:  # an injected parameter is not an argument a client may send
            await c.get_prompt("brief", {"topic": "cats", "c": "mine"})
        assert unknown.value.code == -32602


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_resources_prompts_and_completers_get_theirs_over_stdio(era: str) -> None:
    client = Client.stdio(*_split(wiremcp_cmd("run", DEPENDS)), era=era)  # type: ignore[arg-type]
    asyncio.run(asyncio.wait_for(_content_session(client), 60))


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_resources_prompts_and_completers_get_theirs_over_http(era: str) -> None:
    pytest.importorskip("uvicorn")
    served = HTTPServer(DEPENDS)
    try:
        asyncio.run(asyncio.wait_for(_content_session(Client.http(served.url, era=era)), 60))  # type: ignore[arg-type]
    finally:
        served.stop()


def _split(argv: list[str]) -> tuple[str, list[str]]:
    return argv[0], argv[1:]


def test_a_server_without_depends_gives_its_resources_none() -> None:
    """Zero cost when unused: a resource or prompt without markers carries no injection."""
    server = Server("plain")

    @server.resource("plain://x")
    def x() -> str:
        return "x"

    @server.prompt
    def p(topic: str) -> str:
        return topic

    assert server.resources["plain://x"].sig.depends is None
    assert server.prompts["p"].sig.depends is None
