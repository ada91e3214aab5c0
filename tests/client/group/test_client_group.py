"""ClientGroup: one client over a wiremcp stdio server, a wiremcp HTTP server with authorization and
the official SDK's 2024-11-05 HTTP+SSE server at once, configured from ``mcpServers`` JSON.

Spec: server/tools.mdx ("Tool Names": the prefixed names stay in the allowed
characters), the list_changed notifications (tools.mdx, resources.mdx,
prompts.mdx, patterns/subscriptions.mdx), basic/authorization (a bearer token
on every HTTP request), basic/transports.mdx ("Backwards Compatibility").
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from group_helpers import STDIO_SERVER, SSEServer, needs_official, stdio_entry
from group_helpers import node, protected, sse_server  # noqa: F401 - the fixtures
from wiremcp.client import ConnectionClosed
from wiremcp.group import ClientGroup, ConfigError, ServerConfig, ServerUnavailable, load_config


def run(coro: Any, timeout: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def until(predicate: Callable[[], bool], what: str, timeout: float = 30) -> None:
    """Wait for a state the group reaches on its own (a reconnection, a notification)."""
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.05)

    try:
        await asyncio.wait_for(poll(), timeout)
    except TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


# -- the configuration ----------------------------------------------------------------------


def test_load_config_reads_the_hosts_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mcpServers (Claude Desktop, Cursor, wiremcp install) and servers (VS Code); disabled entries; ${VAR}."""
    monkeypatch.setenv("GROUP_TEST_TOKEN", "s3cret")
    monkeypatch.delenv("GROUP_TEST_UNSET", raising=False)
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({
        "globalShortcut": "kept by hosts, ignored here",
        "mcpServers": {
            "echo": {"command": "/usr/bin/python3", "args": ["-m", "wiremcp", "run", "echo.py"], "env": {"A": "${GROUP_TEST_UNSET:-fallback}"}},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${GROUP_TEST_TOKEN}"}},
            "vscode-style": {"type": "http", "url": "https://example.com/other"},
            "windsurf": {"serverUrl": "https://example.com/w"},
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "off": {"command": "nothing", "disabled": True},
        },
    }))
    servers = load_config(path)
    assert list(servers) == ["echo", "remote", "vscode-style", "windsurf", "old"]
    assert servers["echo"] == ServerConfig("echo", "stdio", command="/usr/bin/python3", args=("-m", "wiremcp", "run", "echo.py"), env={"A": "fallback"})
    assert servers["remote"].transport == "http" and servers["remote"].headers == {"Authorization": "Bearer s3cret"}
    assert servers["windsurf"].url == "https://example.com/w"
    assert servers["old"].transport == "sse"
    assert load_config({"servers": {"x": {"command": "c"}}})["x"].command == "c"  # VS Code's key
    assert load_config({"x": {"command": "c"}})["x"].command == "c"  # the inner object alone
    assert load_config(path, expand_env=False)["remote"].headers == {"Authorization": "Bearer ${GROUP_TEST_TOKEN}"}


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"args": ["x"]}, "'command' must be a non-empty string"),
        ({"command": "c", "args": "x y"}, "'args' must be a list of strings"),
        ({"command": "c", "url": "http://h/mcp"}, "not both"),
        ({"url": 7}, "'url' must be a non-empty string"),
        ({"type": "websocket", "url": "ws://h"}, "'type' must be one of"),
        ({"url": "http://h/mcp", "headers": {"X": 1}}, "'headers' must be an object of strings"),
        ({"command": "${GROUP_TEST_UNSET}"}, "${GROUP_TEST_UNSET}, which is not set"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_config_errors_name_the_server_and_the_key(entry: Any, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROUP_TEST_UNSET", raising=False)
    with pytest.raises(ConfigError) as info:
        load_config({"mcpServers": {"srv": entry}})
    assert "server 'srv'" in str(info.value) and message in str(info.value)


def test_server_names_must_make_valid_tool_name_prefixes(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        load_config({"mcpServers": {"my server": {"command": "c"}}})
    with pytest.raises(ConfigError, match="contains the separator"):
        ClientGroup({"a__b": {"command": "c"}})
    with pytest.raises(ConfigError, match="not a server of this group"):
        ClientGroup({"a": {"command": "c"}}, auth={"b": object()})  # type: ignore[dict-item]  # the check under test
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {} // a comment\n}')
    with pytest.raises(ConfigError, match="not JSON"):
        load_config(bad)


# -- three servers at once ------------------------------------------------------------------


@needs_official
def test_three_servers_one_dying_mid_run(
    tmp_path: Path, protected: tuple[Any, Any], sse_server: Callable[..., SSEServer]
) -> None:
    """stdio (modern), HTTP with a bearer token (modern), HTTP+SSE (2024-11-05, through the fallback).

    The stdio server dies in the middle of a call: that call fails, its
    entries leave the lists, the other two keep answering, and it comes back.
    """
    issuer, http = protected
    old = sse_server("--version", "2024-11-05")
    token = issuer.token("reader", http.url, "mcp")
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "local": stdio_entry(),
        "secure": {"url": http.url, "headers": {"Authorization": f"Bearer {token}"}},
        "old": {"url": old.url},
    }}))
    changes: list[tuple[str, str]] = []

    async def main() -> None:
        async with ClientGroup.from_config(
            str(config), timeout=20, reconnect_delay=0.1, on_change=lambda s, w: changes.append((s, w))
        ) as group:
            status = group.status
            assert {name: s.state for name, s in status.items()} == {"local": "ready", "secure": "ready", "old": "ready"}
            assert (status["local"].era, status["secure"].era, status["old"].era) == ("modern", "modern", "legacy")
            assert status["old"].protocol_version == "2024-11-05"

            names = [t["name"] for t in await group.list_tools()]
            # secure's admin_echo needs the admin scope, which this token lacks: lists hide what the
            # caller may not use (docs/security.md, "Authorization at one door").
            assert names == [
                "local__echo", "local__whoami", "local__grow", "local__die",
                "secure__whoami",
                "old__echo", "old__add", "old__slow", "old__cancellations", "old__grow",
            ]
            # Each call goes to its own server; the token reached the protected one.
            assert (await group.call_tool("local__whoami")).text == "the stdio server"
            identity = (await group.call_tool("secure__whoami")).structured_content
            assert identity == {"subject": "reader", "client_id": "reader", "scopes": ["mcp"]}
            assert (await group.call_tool("old__add", {"a": 2, "b": 3})).text == "5"
            assert group.route("old__add") == ("old", "add")

            # Resources keep their URIs and are read where they were listed (or templated).
            uris = {r["uri"]: r["name"] for r in await group.list_resources()}
            assert uris == {"notes://stdio": "local__notes", "memo://notes": "old__notes"}
            assert (await group.read_resource("memo://notes")).text == "remember the milk"
            assert (await group.read_resource("notes://stdio/7")).text == "stdio note 7"
            prompts = [p["name"] for p in await group.list_prompts()]
            assert prompts == ["local__greet", "old__greet"]
            assert "from stdio" in (await group.get_prompt("local__greet", {"who": "Ada"})).raw["messages"][0]["content"]["text"]

            # List changes are followed: modern (subscriptions/listen) and legacy (notifications).
            await group.call_tool("local__grow", {"name": "fresh"})
            await group.call_tool("old__grow", {"name": "late"})
            await until(lambda: ("local", "tools") in changes and ("old", "tools") in changes, "both list changes")
            names = [t["name"] for t in await group.list_tools()]
            assert "local__fresh" in names and "old__late" in names
            assert (await group.call_tool("old__late")).text == "late"

            # The stdio server dies mid-call.
            with pytest.raises(ConnectionClosed):
                await group.call_tool("local__die")
            await until(lambda: group.status["local"].state != "ready", "the stdio server marked failed")
            failed = group.status["local"]
            if failed.state == "failed":  # it may already be reconnecting
                assert failed.error is not None and "exit status 3" in failed.error
                names = [t["name"] for t in await group.list_tools()]
                assert not any(n.startswith("local__") for n in names)
            assert ("local", "failed") in changes
            # The others keep working meanwhile.
            assert (await group.call_tool("secure__whoami")).structured_content == identity
            assert (await group.call_tool("old__echo", {"text": "still"})).text == "still"

            # It comes back (a new process), with its own tools again.
            await group.wait_ready("local", timeout=60)
            assert group.status["local"].attempts == 2 and group.status["local"].error is None
            assert (await group.call_tool("local__echo", {"text": "back"})).text == "back"
            assert "local__whoami" in [t["name"] for t in await group.list_tools()]

    run(main(), timeout=180)


class Bearer:
    """The smallest authorization hook (HTTPAuth): a fixed token on every request."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.sent = 0

    async def headers(self, method: str, url: str) -> dict[str, str]:
        self.sent += 1
        return {"Authorization": f"Bearer {self.token}"}

    async def on_response(self, status: int, headers: Any, url: str) -> bool:
        return False


def test_auth_hook_and_a_server_that_cannot_start(protected: tuple[Any, Any]) -> None:
    """auth={name: hook} authorizes the HTTP server; a stdio server that exits at once is failed, retried
    with a growing delay, and calls routed to it say why; the other server is unaffected."""
    issuer, http = protected
    hook = Bearer(issuer.token("reader", http.url, "mcp"))
    servers = {
        "secure": {"url": http.url},
        "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.stderr.write('no luck'); sys.exit(5)"]},
    }

    async def main() -> None:
        async with ClientGroup(servers, auth={"secure": hook}, timeout=20, reconnect_delay=0.05, max_reconnect_delay=0.4) as group:
            assert group.status["secure"].state == "ready" and hook.sent > 0
            assert group.status["broken"].state == "failed"
            assert [t["name"] for t in await group.list_tools()] == ["secure__whoami"]  # admin_echo needs admin
            with pytest.raises(ServerUnavailable) as info:
                await group.call_tool("broken__anything")
            assert "server 'broken' is unavailable" in str(info.value)
            await until(lambda: group.status["broken"].attempts >= 4, "four attempts")
            retry_in = group.status["broken"].retry_in
            assert retry_in is None or retry_in <= 0.4  # the delay is capped
            assert (await group.call_tool("secure__whoami")).structured_content["subject"] == "reader"
        assert {s.state for s in group.status.values()} == {"closed"}

    run(main())


def test_names_prefixed_only_on_collision() -> None:
    """names="collisions": a name one server offers stays as it is; shared names are prefixed."""
    servers = {"a": stdio_entry(), "b": stdio_entry()}
    changes: list[tuple[str, str]] = []

    async def main() -> None:
        async with ClientGroup(servers, names="collisions", timeout=20, on_change=lambda s, w: changes.append((s, w))) as group:
            await group.call_tool("a__grow", {"name": "only_a"})
            await until(lambda: ("a", "tools") in changes, "a's list change")
            names = sorted(t["name"] for t in await group.list_tools())
            assert "only_a" in names and "a__echo" in names and "b__echo" in names and "echo" not in names
            assert group.route("only_a") == ("a", "only_a")
            assert (await group.call_tool("only_a")).text == "only_a"
            with pytest.raises(Exception, match="say which with server="):
                await group.read_resource("notes://stdio")
            assert (await group.read_resource("notes://stdio", server="b")).text == "stdio notes"

    run(main())


def test_the_group_is_public() -> None:
    import wiremcp

    assert wiremcp.ClientGroup is ClientGroup
    assert Path(STDIO_SERVER).exists()
