"""The rules of tags and visibility (server/_visibility.py), through ``Server.handle``: the subset, the switches,
their order, what is announced, mounting, removal, scopes, misuse, and that a server without rules loads nothing.

The same over real transports, in both eras: tests/server/test_tags.py.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import orjson
import pytest

from conftest import META
from wiremcp import Server
from wiremcp.auth.server import AccessToken
from wiremcp.jsonrpc import JSONRPCError, Request
from wiremcp.server.transport import current_auth

TAGS_META = "io.wiremcp/tags"


def ask(server: Server, method: str, params: dict[str, Any] | None = None, auth: Any = None) -> dict[str, Any]:
    reset = current_auth.set(auth)
    try:
        out = server.handle(Request(1, method, {**(params or {}), "_meta": META}))
        assert type(out) is dict, "inline handlers answer at once"
        return out
    except JSONRPCError as exc:
        return {"error": exc.to_error()}
    finally:
        current_auth.reset(reset)


def names(server: Server, auth: Any = None) -> list[str]:
    return [t["name"] for t in ask(server, "tools/list", auth=auth)["tools"]]


def make(**options: Any) -> tuple[Server, list[Any]]:
    server = Server("v", **options)
    for name, tags in (("read", {"ro"}), ("write", {"rw"}), ("wipe", {"rw", "admin"}), ("plain", None)):
        server.add_tool(lambda: "ok", name=name, tags=tags, inline=True)
    events: list[Any] = []
    server.bus.subscribe(events.append)
    return server, events


def test_tags_are_published_sorted_and_checked() -> None:
    server, _ = make()
    tools = {t["name"]: t for t in ask(server, "tools/list")["tools"]}
    assert tools["wipe"]["_meta"] == {TAGS_META: ["admin", "rw"]} and "_meta" not in tools["plain"]
    with pytest.raises(TypeError, match="not one string"):
        server.add_tool(lambda: "x", name="x", tags="admin")
    with pytest.raises(ValueError, match="not a tag"):
        server.add_tool(lambda: "x", name="x", tags={""})
    with pytest.raises(ValueError, match="pass tags=, not meta="):
        server.add_tool(lambda: "x", name="x", tags={"a"}, meta={TAGS_META: ["b"]})
    server.add_tool(lambda: "x", name="kept", tags={"a"}, meta={"com.example/x": 1})
    assert server.tools["kept"].definition["_meta"] == {"com.example/x": 1, TAGS_META: ["a"]}


def test_include_and_exclude_serve_a_subset() -> None:
    assert names(make(include_tags={"rw"})[0]) == ["write", "wipe"]
    assert names(make(include_tags={"rw", "ro"}, exclude_tags={"admin"})[0]) == ["read", "write"]
    server, _ = make(exclude_tags={"admin"})
    assert names(server) == ["read", "write", "plain"]
    assert list(server.tools) == ["read", "write", "wipe", "plain"]  # registered, served or not
    assert server.get_tool("wipe") is None
    with pytest.raises(ValueError, match="outside the subset"):
        server.enable("wipe")
    server.enable(tags={"admin"})  # a switch cannot widen the subset either
    assert names(server) == ["read", "write", "plain"]


def test_the_latest_switch_naming_a_component_decides_and_order_is_kept() -> None:
    server, events = make()
    server.disable(tags={"rw"})
    assert names(server) == ["read", "plain"] and events == [("tools", None)]
    server.enable("wipe")  # later than the tag's switch: wins
    assert names(server) == ["read", "wipe", "plain"]  # registration order, not the order of switching
    server.disable(tags={"admin"})
    assert names(server) == ["read", "plain"]  # "admin" came later than wipe's own switch
    server.enable(tags={"rw"})
    assert names(server) == ["read", "write", "wipe", "plain"]  # and "rw" later than "admin"
    events.clear()
    server.enable(tags={"rw"})  # nothing changes: nothing is announced
    server.disable(tags={"nobody-has-this"})
    assert events == []


def test_a_tag_switch_applies_to_components_registered_later() -> None:
    server, _ = make()
    server.disable(tags={"beta"})
    server.add_tool(lambda: "x", name="new", tags={"beta"}, inline=True)
    assert "new" not in names(server)
    assert ask(server, "tools/call", {"name": "new"})["error"] == {
        "code": -32602, "message": "Unknown tool: new", "data": {"name": "new"}}
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(lambda: "x", name="new", inline=True)  # hidden, but registered
    server.enable(tags={"beta"})
    assert ask(server, "tools/call", {"name": "new"})["content"] == [{"type": "text", "text": "x"}]


def test_removal_forgets_the_switches_of_its_name() -> None:
    server, _ = make()
    server.disable("read")
    server.remove_tool("read")
    assert "read" not in server.tools
    server.add_tool(lambda: "again", name="read", inline=True)
    assert names(server)[-1] == "read"
    with pytest.raises(KeyError):
        server.remove_tool("read-not")


def test_resources_templates_and_prompts() -> None:
    server = Server("v")
    server.add_resource(lambda: "a", "mem://a", tags={"t"}, inline=True)
    server.add_resource(lambda id: id, "mem://item/{id}", tags={"t"}, inline=True)
    server.add_prompt(lambda: "p", name="same", tags={"t"}, inline=True)
    server.add_tool(lambda: "t", name="same", inline=True)
    with pytest.raises(ValueError, match="kind="):
        server.disable("same")
    server.disable("same", kind="prompt")
    assert ask(server, "prompts/list")["prompts"] == [] and names(server) == ["same"]
    server.disable("mem://item/{id}")
    assert ask(server, "resources/templates/list")["resourceTemplates"] == []
    assert ask(server, "resources/read", {"uri": "mem://item/7"})["error"]["data"] == {"uri": "mem://item/7"}
    server.disable(tags={"t"})
    assert ask(server, "resources/list")["resources"] == []
    assert set(server.capabilities()) == {"tools", "resources", "prompts"}  # registered: still declared
    server.enable(tags={"t"})
    assert ask(server, "resources/read", {"uri": "mem://item/7"})["contents"][0]["text"] == "7"
    assert [p["name"] for p in ask(server, "prompts/list")["prompts"]] == ["same"]
    with pytest.raises(KeyError):
        server.enable("mem://none")
    with pytest.raises(TypeError, match="one of the two"):
        server.enable()
    with pytest.raises(ValueError, match="kind is"):
        server.enable("same", kind="widget")  # type: ignore[arg-type]


def test_mounting_follows_the_child_and_the_parent_rules() -> None:
    child, _ = make()
    parent = Server("parent", exclude_tags={"admin"})
    parent.mount(child, "kid")
    assert names(parent) == ["kid_read", "kid_write", "kid_plain"]
    child.disable("read")  # the child's own switch: the parent's copy follows
    assert names(parent) == ["kid_write", "kid_plain"]
    parent.disable("kid_write")
    assert names(parent) == ["kid_plain"]
    child.enable("read")  # the child's list changed: the parent copies it again, keeping its own switches
    assert names(parent) == ["kid_read", "kid_plain"]
    parent.unmount("kid")
    assert names(parent) == [] and parent.tools == {}


def test_lists_still_hide_what_the_token_does_not_allow() -> None:
    server = Server("v")
    server.add_tool(lambda: "x", name="secret", scopes=["admin"], tags={"t"}, inline=True)
    server.add_tool(lambda: "x", name="open", tags={"t"}, inline=True)
    server.add_tool(lambda: "x", name="off", tags={"t"}, inline=True)
    server.disable("off")
    reader = AccessToken("ann", "app", frozenset({"read"}), {"iss": "https://as.example", "sub": "ann"})
    listed = ask(server, "tools/list", auth=reader)
    assert [t["name"] for t in listed["tools"]] == ["open"] and listed["cacheScope"] == "private"
    assert names(server) == ["secret", "open"]


def test_a_server_with_tags_and_no_rules_loads_nothing_more() -> None:
    program = textwrap.dedent(
        """
        import sys, orjson, wiremcp
        server = wiremcp.Server("s")
        server.add_tool(lambda: "x", name="x", tags={"a"}, inline=True)
        before = "wiremcp.server._visibility" in sys.modules
        server.disable("x")
        print(orjson.dumps([before, "wiremcp.server._visibility" in sys.modules]).decode())
        """
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, check=True, timeout=60)
    assert orjson.loads(out.stdout) == [False, True]
