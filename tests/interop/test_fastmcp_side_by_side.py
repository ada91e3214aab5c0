"""A FastMCP 4.2.3 server and its wiremcp port, side by side: the same client calls, the same answers (issue 27).

tests/servers/fastmcp_side/fastmcp_shop.py uses the issue's features as
FastMCP spells them (tags, a disabled tag, ``Depends`` on a tool, a resource
and a prompt, state through
``Context``, a ``Middleware`` and ``TimingMiddleware``, ``Tool.from_tool`` with
``ArgTransform``, resources, a template, a prompt), run by the fastmcp peer's
Python (tests/peers.py); tests/servers/fastmcp_side/wiremcp_shop.py is its
port. Both run as real subprocesses, over stdio and over Streamable HTTP on
loopback, in both protocol eras, and one `wiremcp.Client` session is driven
against each. What is the same is compared whole; what differs is a real
difference, asserted here as such and listed in docs/migrate/fastmcp.md
("Behaviours that differ"):

* a tool that returns ``str``: FastMCP publishes an ``outputSchema`` wrapping it
  (``{"result": string}``, ``x-fastmcp-wrap-result``) and sends
  ``structuredContent``; wiremcp sends text only. FastMCP also titles each
  tool from its name ("Price") and lists a text resource's ``mimeType``;
* tags are published under ``_meta.fastmcp.tags`` (FastMCP) and
  ``_meta["io.wiremcp/tags"]`` (wiremcp);
* an unexpected exception in a tool: FastMCP sends its text
  (``mask_error_details=False`` by default), wiremcp masks it;
* calling a disabled (or unknown) tool: FastMCP answers a tool result with
  ``isError``; wiremcp answers JSON-RPC -32602 (tools.mdx, "Error Handling");
* arguments a tool does not take: both answer ``isError``, in their own words;
* state set with ``ctx.set_state`` does not outlive the request on a
  2026-07-28 connection in FastMCP (its ``session_id`` is per request);
  wiremcp's ``ctx.session_state`` is the stdio connection's there, and
  refused over HTTP without authorization (no principal to key it by).
"""

from __future__ import annotations

import asyncio
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from _servers import free_port, serving_http
from peers import python_peer
from wiremcp import Client
from wiremcp.client import RemoteError

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parents[1] / "servers" / "fastmcp_side"
FASTMCP = HERE / "fastmcp_shop.py"
PORT = HERE / "wiremcp_shop.py"

#: Calls both answer alike: (name, arguments).
SAME_CALLS = [
    ("price", {"item": "tea"}),
    ("price", {"item": "bread"}),  # a ToolError: its text as raised, in both
    ("search", {"query": "a"}),
    ("find", {"q": "a"}),  # the transformed tool: renamed argument, hidden limit=2
    ("greet", {"greeting": "hi"}),  # Depends
    ("stamped", {}),  # middleware -> request state -> tool
]
#: Arguments the tool does not take (a hidden one, an injected one, a missing one): an isError result in both.
REFUSED_CALLS = [
    ("find", {"q": "a", "limit": 5}),
    ("greet", {"greeting": "hi", "user": "bo"}),
    ("price", {}),
]


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


@contextmanager
def _client(which: str, transport: str, era: str) -> Iterator[Client]:
    if which == "fastmcp":
        command = [str(python_peer("fastmcp-4.2.3")), str(FASTMCP)]
    else:
        command = [sys.executable, "-m", "wiremcp", "run", str(PORT)]
    if transport == "stdio":
        yield Client.stdio(command[0], command[1:], era=era, timeout=60)  # type: ignore[arg-type]
        return
    port = free_port()
    extra = ["--http", str(port)] if which == "fastmcp" else ["--http", "--host", "127.0.0.1", "--port", str(port)]
    with serving_http(command + extra, port) as url:
        yield Client.http(url, era=era, timeout=60)  # type: ignore[arg-type]


def _tags(definition: dict[str, Any]) -> list[str]:
    meta = definition.get("_meta") or {}
    return list(meta.get("fastmcp", {}).get("tags", []) or meta.get("io.wiremcp/tags", []))


def _without(definition: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in definition.items() if k not in keys}


async def _error(coro: Any) -> tuple[int, Any]:
    try:
        await coro
    except RemoteError as exc:
        return exc.code, exc.data
    raise AssertionError("expected a JSON-RPC error")


async def _session(client: Client) -> dict[str, Any]:
    """Everything one session sees, split into what should match and what is known to differ (``differ``)."""
    seen: dict[str, Any] = {}
    differ: dict[str, Any] = {}
    async with client as c:
        seen["era"] = c.era
        tools = {t["name"]: t for t in await c.list_tools()}
        seen["tools"] = {n: _without(t, "_meta", "outputSchema", "title") for n, t in tools.items()}
        seen["tags"] = {n: _tags(t) for n, t in tools.items()}
        differ["titles"] = {n: t.get("title") for n, t in tools.items()}
        differ["outputs"] = {
            n: _without(t["outputSchema"], "x-fastmcp-wrap-result") for n, t in tools.items() if "outputSchema" in t
        }
        seen["calls"], differ["structured"] = [], {}
        for name, arguments in SAME_CALLS:
            result = await c.call_tool(name, arguments)
            seen["calls"].append((name, result.is_error, result.text))
            differ["structured"][name] = result.structured_content
        seen["refused"] = [(await c.call_tool(n, a)).is_error for n, a in REFUSED_CALLS]
        differ["refused"] = [(await c.call_tool(n, a)).text for n, a in REFUSED_CALLS]
        crashed = await c.call_tool("restock", {"item": "tea"})
        seen["crashed"] = crashed.is_error
        differ["crashed"] = crashed.text
        try:
            wiped = await c.call_tool("wipe", {})
            differ["wipe"] = ("result", wiped.is_error, wiped.text)
        except RemoteError as exc:
            differ["wipe"] = ("error", exc.code, exc.data)
        visits: list[Any] = []
        for _ in range(2):
            visit = await c.call_tool("visit", {})
            visits.append(visit.structured_content["result"] if not visit.is_error else "refused")
        differ["visits"] = visits
        resources = await c.list_resources()
        seen["resources"] = [_without(r, "_meta", "mimeType") for r in resources]
        differ["resource_mime"] = [r.get("mimeType") for r in resources]
        seen["templates"] = [_without(t, "_meta", "mimeType") for t in await c.list_resource_templates()]
        seen["reads"] = [
            (await c.read_resource(u)).contents for u in ("shop://hours", "shop://owner", "items://tea", "items://jam")
        ]
        seen["read_missing"] = await _error(c.read_resource("nope://x"))
        seen["prompts"] = [_without(p, "_meta") for p in await c.list_prompts()]
        pitch = await c.get_prompt("pitch", {"item": "tea"})
        seen["pitch"] = (pitch.description, pitch.messages)
        thank = await c.get_prompt("thank", {"item": "jam"})
        seen["thank"] = thank.messages
        seen["prompt_missing_argument"] = (await _error(c.get_prompt("pitch", {})))[0]
        seen["prompt_unknown"] = (await _error(c.get_prompt("nope", {})))[0]
    seen["differ"] = differ
    return seen


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_port_answers_as_the_fastmcp_original(transport: str, era: str) -> None:
    if transport == "http":
        pytest.importorskip("uvicorn")
    with _client("fastmcp", transport, era) as client:
        original = _run(_session(client))
    with _client("wiremcp", transport, era) as client:
        port = _run(_session(client))
    theirs, ours = original.pop("differ"), port.pop("differ")
    assert port == original
    # what both say, spelled out once
    assert port["tags"] == {"price": ["catalog"], "search": ["catalog"], "find": ["catalog"], "restock": [], "greet": [], "stamped": [], "visit": []}
    assert port["tools"]["find"]["inputSchema"] == {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "Part of an item's name."}},
        "required": ["q"],
        "additionalProperties": False,
    }
    assert "user" not in port["tools"]["greet"]["inputSchema"]["properties"]
    assert port["calls"] == [
        ("price", False, "3.5"),
        ("price", True, "no such item: bread"),
        ("search", False, '["cake","jam","tea"]'),
        ("find", False, '["cake","jam"]'),
        ("greet", False, "hi, ada"),
        ("stamped", False, "stamped stamped"),
    ]
    assert port["refused"] == [True, True, True] and port["crashed"] is True
    assert port["read_missing"] == (-32602, {"uri": "nope://x"})
    # Depends on a resource and a prompt: injected, not a prompt argument
    assert port["reads"][1] == [{"uri": "shop://owner", "mimeType": "text/plain", "text": "run by ada"}]
    assert [p.get("arguments") for p in port["prompts"] if p["name"] == "thank"] == [[{"name": "item", "required": True}]]
    assert port["thank"] == [{"role": "user", "content": {"type": "text", "text": "ada thanks you for buying jam."}}]
    assert port["prompt_missing_argument"] == port["prompt_unknown"] == -32602
    _assert_the_differences(theirs, ours, transport, era)


def _assert_the_differences(theirs: dict[str, Any], ours: dict[str, Any], transport: str, era: str) -> None:
    """What differs, each a real difference (docs/migrate/fastmcp.md, "Behaviours that differ")."""
    # `-> str`: FastMCP wraps it in structured content with an outputSchema; wiremcp sends text
    wrapped = {"greet", "stamped", "restock"}
    assert {n: s for n, s in theirs["outputs"].items() if n not in wrapped} == ours["outputs"]
    assert set(ours["outputs"]) == {"price", "search", "find", "visit"}
    assert theirs["outputs"]["greet"] == {"properties": {"result": {"type": "string"}}, "required": ["result"], "type": "object"}
    assert {n: s for n, s in theirs["structured"].items() if n not in wrapped} == {
        n: s for n, s in ours["structured"].items() if n not in wrapped
    }
    assert theirs["structured"]["greet"] == {"result": "hi, ada"} and ours["structured"]["greet"] is None
    # FastMCP titles tools from their names and lists a text resource's MIME type; wiremcp says neither unless told
    assert theirs["titles"]["price"] == "Price" and set(ours["titles"].values()) == {None}
    assert set(theirs["resource_mime"]) == {"text/plain"} and set(ours["resource_mime"]) == {None}
    # arguments a tool does not take: both isError, in their own words
    assert ours["refused"] == [
        "Invalid arguments for tool 'find': 'limit' is not an accepted argument",
        "Invalid arguments for tool 'greet': 'user' is not an accepted argument",
        "Invalid arguments for tool 'price': 'item' is required",
    ]
    assert "limit" in theirs["refused"][0] and "user" in theirs["refused"][1] and "item" in theirs["refused"][2]
    # an unexpected exception: FastMCP shows its text (mask_error_details=False by default), wiremcp masks it
    assert theirs["crashed"] == "Error calling tool 'restock': warehouse at 10.0.0.7 is offline"
    assert "10.0.0.7" not in ours["crashed"] and ours["crashed"].startswith("Error in tool 'restock': ")
    # a disabled tool: a tool result in FastMCP, a protocol error in wiremcp
    assert theirs["wipe"] == ("result", True, "Unknown tool: 'wipe'")
    assert ours["wipe"] == ("error", -32602, {"name": "wipe"})
    # state through Context across two calls
    assert theirs["visits"] == ([1, 1] if era == "modern" else [1, 2])
    assert ours["visits"] == ([1, 2] if transport == "stdio" or era == "legacy" else ["refused", "refused"])
