"""Tags and visibility (docs/tags.md) end to end: ``examples/tags.py`` over a real stdio subprocess and real
HTTP on loopback, in both eras.

* tags are published in ``_meta["io.wiremcp/tags"]`` of each listed component;
* ``exclude_tags={"internal"}``: ``dump_state`` is in no list and calling it is ``Unknown tool``;
* ``server.disable(tags={"admin"})`` at start hides ``clear_notes``, ``review_notes`` and
  ``notes://audit``: absent from the lists, and asking for each gets exactly the error of an
  unknown one; the ``admin_mode`` tool enables them at run time, and the change is announced:
  on ``subscriptions/listen`` streams (2026-07-28), as session notifications (2025-11-25);
* lists still hide what a token's scopes do not allow (in-process, a token set by hand).
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterator

import pytest

from conftest import META, ROOT, StdioPeer, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow

TAGS = str(ROOT / "examples" / "tags.py")
TAGS_META = "io.wiremcp/tags"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
SHOWN = ["list_notes", "add_note", "admin_mode"]
ADMIN = ["list_notes", "add_note", "clear_notes", "admin_mode"]
CHANGED = ["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"]


@pytest.fixture
def notes(spawn: Any) -> StdioPeer:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", TAGS))
    return peer


def result_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" in reply, reply
    out: dict[str, Any] = reply["result"]
    return out


def legacy(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


def until_reply(peer: StdioPeer, id_: Any, count: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The reply to ``id_`` and ``count`` notifications, in whichever order they come."""
    notes: list[dict[str, Any]] = []
    reply: dict[str, Any] = {}
    while not reply or len(notes) < count:
        message = peer.recv()
        if message.get("id") == id_ and "method" not in message:
            reply = message
        else:
            notes.append(message)
    return notes, reply


def check_hidden(ask: Any) -> None:
    """Each hidden component gets the error an unknown one gets (``ask(method, params)`` -> error)."""
    for name in ("clear_notes", "dump_state", "no_such_tool"):
        assert ask("tools/call", {"name": name, "arguments": {}}) == {
            "code": -32602, "message": f"Unknown tool: {name}", "data": {"name": name}}
    for name in ("review_notes", "no_such_prompt"):
        assert ask("prompts/get", {"name": name}) == {
            "code": -32602, "message": f"Invalid params: unknown prompt {name!r}", "data": {"name": name}}
    hidden, unknown = ask("resources/read", {"uri": "notes://audit"}), ask("resources/read", {"uri": "notes://nope"})
    assert (hidden["code"], hidden["data"]) == (unknown["code"], {"uri": "notes://audit"})


def check_lists(tools: list[dict[str, Any]], prompts: list[dict[str, Any]], resources: list[dict[str, Any]], admin: bool) -> None:
    assert [t["name"] for t in tools] == (ADMIN if admin else SHOWN)
    by_name = {t["name"]: t for t in tools}
    assert by_name["list_notes"]["_meta"] == {TAGS_META: ["read"]}
    assert "_meta" not in by_name["admin_mode"]
    if admin:
        assert by_name["clear_notes"]["_meta"] == {TAGS_META: ["admin", "write"]}  # sorted
    assert [p["name"] for p in prompts] == (["review_notes"] if admin else [])
    assert [(r["uri"], r["_meta"][TAGS_META]) for r in resources] == (
        [("notes://all", ["read"]), ("notes://audit", ["admin"])] if admin else [("notes://all", ["read"])])


# -- stdio, 2026-07-28 ----------------------------------------------------------------------


def test_stdio_modern_hidden_then_enabled_and_announced_on_listen_streams(notes: StdioPeer) -> None:
    def ask(method: str, params: dict[str, Any]) -> Any:
        return notes.ask(request("q", method, params))["error"]

    def lists(id_: int) -> tuple[Any, Any, Any]:
        return tuple(result_of(notes.ask(request(f"{id_}-{n}", m)))[k] for n, (m, k) in enumerate(
            [("tools/list", "tools"), ("prompts/list", "prompts"), ("resources/list", "resources")]))

    caps = result_of(notes.ask(request(1, "server/discover")))["capabilities"]
    assert set(caps) == {"tools", "prompts", "resources"}  # a prompt is registered, though none is served now
    check_lists(*lists(2), admin=False)
    check_hidden(ask)
    listen = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
    ack = notes.ask(request("sub", "subscriptions/listen", {"notifications": listen}))
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    notes.send(call(3, "admin_mode", {"on": True}))
    got, reply = until_reply(notes, 3, 3)
    assert result_of(reply)["content"][0]["text"] == "admin mode on"
    assert sorted(n["method"] for n in got) == sorted(CHANGED)
    assert all(n["params"]["_meta"][SUB_ID] == "sub" for n in got)
    check_lists(*lists(4), admin=True)
    assert result_of(notes.ask(call(5, "clear_notes")))["content"][0]["text"] == "cleared"
    assert result_of(notes.ask(request(6, "prompts/get", {"name": "review_notes"})))["messages"]
    assert result_of(notes.ask(request(7, "resources/read", {"uri": "notes://audit"})))["contents"][0]["text"] == "0 note(s) kept"
    # switching on what is already on changes no list: nothing is announced
    assert result_of(notes.ask(call(8, "admin_mode", {"on": True})))["content"][0]["text"] == "admin mode on"
    notes.expect_nothing_more()
    assert ask("tools/call", {"name": "dump_state", "arguments": {}})["message"] == "Unknown tool: dump_state"


# -- stdio, 2025-11-25 ----------------------------------------------------------------------


def test_stdio_legacy_hidden_then_enabled_and_announced_in_the_session(notes: StdioPeer) -> None:
    init = notes.ask(legacy(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "old", "version": "0"}}))
    assert set(result_of(init)["capabilities"]) >= {"tools", "prompts", "resources"}
    notes.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def ask(method: str, params: dict[str, Any]) -> Any:
        return notes.ask(legacy("q", method, params))["error"]

    def lists() -> tuple[Any, Any, Any]:
        return (result_of(notes.ask(legacy(1, "tools/list")))["tools"], result_of(notes.ask(legacy(2, "prompts/list")))["prompts"],
                result_of(notes.ask(legacy(3, "resources/list")))["resources"])

    check_lists(*lists(), admin=False)
    check_hidden(ask)
    notes.send(legacy(4, "tools/call", {"name": "admin_mode", "arguments": {"on": True}}))
    got, reply = until_reply(notes, 4, 3)
    assert result_of(reply)["content"][0]["text"] == "admin mode on"
    assert sorted(n["method"] for n in got) == sorted(CHANGED)
    check_lists(*lists(), admin=True)
    notes.send(legacy(5, "tools/call", {"name": "admin_mode", "arguments": {"on": False}}))
    got, _ = until_reply(notes, 5, 3)
    assert sorted(n["method"] for n in got) == sorted(CHANGED)
    check_lists(*lists(), admin=False)
    notes.expect_nothing_more(legacy=True)


# -- HTTP, both eras, wiremcp's Client ---------------------------------------------------------


@pytest.fixture
def notes_http() -> Iterator[str]:
    pytest.importorskip("uvicorn")
    from _servers import wiremcp_http

    with wiremcp_http(TAGS) as url:
        yield url


def test_http_modern_listen_stream_gets_the_changes(notes_http: str) -> None:
    from wiremcp import Client
    from wiremcp.client import RemoteError

    async def main() -> None:
        async with Client.http(notes_http, era="modern") as client:
            assert [t["name"] for t in await client.list_tools()] == SHOWN
            with pytest.raises(RemoteError) as caught:
                await client.call_tool("clear_notes")
            assert (caught.value.code, caught.value.message) == (-32602, "Unknown tool: clear_notes")
            async with client.listen(tools=True, prompts=True, resources_list=True) as sub:
                assert (await client.call_tool("admin_mode", {"on": True})).text == "admin mode on"
                seen = []
                async for method, _ in sub:
                    seen.append(method)
                    if len(seen) == 3:
                        break
            assert sorted(seen) == sorted(CHANGED)
            check_lists(await client.list_tools(), await client.list_prompts(), await client.list_resources(), admin=True)
            assert (await client.call_tool("clear_notes")).text == "cleared"

    asyncio.run(asyncio.wait_for(main(), 60))


def test_http_legacy_session_gets_the_changes(notes_http: str) -> None:
    from wiremcp import Client

    async def main() -> None:
        changed: asyncio.Queue[str] = asyncio.Queue()

        async def on_notification(note: Any) -> None:
            changed.put_nowait(note.method)

        async with Client.http(notes_http, era="legacy", on_notification=on_notification) as client:
            check_lists(await client.list_tools(), await client.list_prompts(), await client.list_resources(), admin=False)
            assert (await client.call_tool("admin_mode", {"on": True})).text == "admin mode on"
            seen = [await changed.get() for _ in range(3)]
            assert sorted(seen) == sorted(CHANGED)
            check_lists(await client.list_tools(), await client.list_prompts(), await client.list_resources(), admin=True)

    asyncio.run(asyncio.wait_for(main(), 60))
