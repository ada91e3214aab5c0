"""``wiremcp proxy``: a server of one era served to clients of the other, over stdio and HTTP.

Issue 16, item 8. The official ``mcp`` SDK's client in legacy mode
(2025-11-25 ``initialize``) uses a 2026-07-28-only wiremcp server
(tests/servers/modern_asks.py, ``legacy=False``) through the proxy: the
upstream's ``input_required`` round becomes a real ``elicitation/create``
request to the legacy client (2026-07-28 basic/patterns/mrtr.mdx; 2025-11-25
client/elicitation.mdx), and its progress is passed through
(basic/patterns/progress.mdx). A modern wiremcp client uses a legacy-only
server (tests/servers/legacy_only.py) through it: the upstream's
``elicitation/create`` request becomes ``input_required`` with a sealed
``requestState``, and the retry resumes the held upstream call, so the
upstream tool runs once. The proxy never passes the client's credentials
upstream (security_best_practices.mdx, "Token Passthrough").
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import SERVERS, wiremcp_cmd
from wiremcp.client import Client, RequestTimeout
from wiremcp.protocol import Era

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The official SDK's interpreter: bench/.venv-official, or another venv with mcp 2.3.0 named by WIREMCP_OFFICIAL_PYTHON.
OFFICIAL_PYTHON = Path(os.environ.get("WIREMCP_OFFICIAL_PYTHON") or ROOT / "bench" / ".venv-official" / "bin" / "python")
needs_official = pytest.mark.skipif(
    not OFFICIAL_PYTHON.exists() and not os.environ.get("WIREMCP_REQUIRE_INTEROP"),
    reason="bench/.venv-official is not set up (bash bench/setup_official.sh)",
)
MODERN_ONLY = str(SERVERS / "modern_asks.py")
LEGACY_ONLY = str(SERVERS / "legacy_only.py")
OFFICIAL_CLIENT = str(SERVERS / "official_legacy_client.py")

uvicorn = pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

from test_http import ServerProcess  # noqa: E402


def _proxy_http(*target: str) -> ServerProcess:
    return ServerProcess(
        wiremcp_cmd("proxy", "--http", "--port", "0", *target),
        r"serving 'wiremcp-proxy' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )


@pytest.fixture
def proxied_modern_http() -> Iterator[ServerProcess]:
    proc = _proxy_http(MODERN_ONLY)
    yield proc
    proc.stop()


def _official(*args: str) -> dict[str, Any]:
    done = subprocess.run([str(OFFICIAL_PYTHON), OFFICIAL_CLIENT, *args], capture_output=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return out


EXPECTED_FROM_MODERN = {
    "protocolVersion": "2025-11-25",
    "tools": ["count", "echo", "greet", "grow", "wait"],
    "echo": "hi",
    "greet": "Hello, Ada!",  # the modern upstream's input_required round, asked as a real request
    "count": "counted to 3",
    "progress": [[1.0, 3.0, "step 1"], [2.0, 3.0, "step 2"], [3.0, 3.0, "step 3"]],
}


@needs_official
def test_official_legacy_client_uses_a_modern_only_server_through_the_proxy_on_stdio() -> None:
    assert _official("stdio", *wiremcp_cmd("proxy", MODERN_ONLY)) == EXPECTED_FROM_MODERN


@needs_official
def test_official_legacy_client_uses_a_modern_only_server_through_the_proxy_on_http(
    proxied_modern_http: ServerProcess,
) -> None:
    assert _official("http", f"http://127.0.0.1:{proxied_modern_http.port}/mcp") == EXPECTED_FROM_MODERN


def test_the_modern_only_server_refuses_a_legacy_client_without_the_proxy() -> None:
    """The premise: without the proxy, initialize is refused (-32601)."""

    async def main() -> None:
        async with Client.stdio(sys.executable, ["-m", "wiremcp", "run", MODERN_ONLY], era="legacy") as c:
            await c.list_tools()

    with pytest.raises(Exception, match="initialize|Method not found|-32601"):
        asyncio.run(asyncio.wait_for(main(), 30))


async def _name(params: dict[str, Any]) -> dict[str, Any]:
    assert params["message"] == "name?"
    return {"action": "accept", "content": {"name": "Ada"}}


async def _modern_against_legacy(client: Client) -> None:
    async with client as c:
        assert c.era is Era.MODERN
        assert [t["name"] for t in await c.list_tools()] == ["echo", "ask", "received"]
        assert (await c.call_tool("echo", {"text": "yo"})).text == "yo"
        asked = await c.call_tool("ask", {})
        assert json.loads(asked.text) == {"action": "accept", "content": {"name": "Ada"}}
        received = json.loads((await c.call_tool("received", {})).text)
    calls = [m for m in received if m.get("method") == "tools/call" and m["params"]["name"] == "ask"]
    assert len(calls) == 1  # the retry resumed the held upstream call: the legacy tool ran once
    assert not any("Authorization" in json.dumps(m) for m in received)


def test_modern_client_uses_a_legacy_only_server_through_the_proxy_on_stdio() -> None:
    proxy = ["-m", "wiremcp", "proxy", "--", sys.executable, LEGACY_ONLY]
    asyncio.run(asyncio.wait_for(_modern_against_legacy(Client.stdio(sys.executable, proxy, elicitation=_name)), 60))


def test_modern_client_uses_a_legacy_only_server_through_the_proxy_on_http() -> None:
    proc = _proxy_http("--", sys.executable, LEGACY_ONLY)
    try:
        url = f"http://127.0.0.1:{proc.port}/mcp"
        asyncio.run(asyncio.wait_for(_modern_against_legacy(Client.http(url, elicitation=_name)), 60))
    finally:
        proc.stop()


def test_a_modern_client_hears_of_upstream_list_changes_through_the_proxy() -> None:
    async def main() -> None:
        proxy = ["-m", "wiremcp", "proxy", MODERN_ONLY]
        async with Client.stdio(sys.executable, proxy) as c:
            echoed = await c.call_tool("echo", {"text": "x"})
            # The client talks to the proxy: its serverInfo, named after the upstream's (issue 28).
            assert echoed.raw["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "modern-asks (via wiremcp proxy)"
            async with c.listen(tools=True) as sub:
                assert (await c.call_tool("grow", {})).text == "grown"
                method, _ = await asyncio.wait_for(sub.__anext__(), 10)
                assert method == "notifications/tools/list_changed"
            assert "grown" in [t["name"] for t in await c.list_tools(refresh=True)]
            assert (await c.call_tool("grown", {})).text == "I grew"

    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_proxy_never_forwards_the_clients_credentials() -> None:
    """The client's Authorization stays with the proxy; upstream sees the proxy's own (--header)."""
    upstream = ServerProcess(
        wiremcp_cmd("run", str(SERVERS / "lifecycle.py"), "--http", "--port", "0"),
        r"serving 'lifecycle' .* at http://127\.0\.0\.1:(\d+)/mcp",
    )
    try:
        proc = _proxy_http(f"http://127.0.0.1:{upstream.port}/mcp", "--header", "Authorization: Bearer proxy-own")
        try:

            async def main() -> dict[str, Any]:
                url = f"http://127.0.0.1:{proc.port}/mcp"
                async with Client.http(url, headers={"Authorization": "Bearer client-secret", "X-Test": "t"}) as c:
                    result = await c.call_tool("headers", {})
                    seen: dict[str, Any] = result.structured_content["headers"]
                    return seen

            seen = asyncio.run(asyncio.wait_for(main(), 60))
            assert seen["authorization"] == "Bearer proxy-own"
            assert seen["x-test"] is None  # no header of the client's request travels upstream
        finally:
            proc.stop()
    finally:
        upstream.stop()


def test_cancelling_a_request_cancels_the_upstream_call(tmp_path: Path) -> None:
    """basic/patterns/cancellation.mdx: the client's notifications/cancelled reaches the upstream tool."""
    log = tmp_path / "upstream.log"

    async def main() -> None:
        proxy = ["-m", "wiremcp", "proxy", MODERN_ONLY]
        async with Client.stdio(sys.executable, proxy, env={"MODERN_ASKS_LOG": str(log)}) as c:
            with pytest.raises(RequestTimeout):
                await c.call_tool("wait", {"seconds": 30}, timeout=0.5)
            for _ in range(100):
                if log.exists():
                    break
                await asyncio.sleep(0.05)

    asyncio.run(asyncio.wait_for(main(), 60))
    assert log.read_text() == "cancelled\n"


def test_progress_passes_through_the_proxy_to_a_modern_client() -> None:
    seen: list[Any] = []

    async def main() -> None:
        proxy = ["-m", "wiremcp", "proxy", MODERN_ONLY]
        async with Client.stdio(sys.executable, proxy) as c:
            result = await c.call_tool("count", {"to": 2}, on_progress=lambda p, t, m: seen.append([p, t, m]))
            assert result.text == "counted to 2"

    asyncio.run(asyncio.wait_for(main(), 60))
    assert seen == [[1, 2, "step 1"], [2, 2, "step 2"]]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_resources_prompts_and_errors_are_forwarded_in_both_eras(era: Any) -> None:
    """server/resources.mdx, server/prompts.mdx: read and get through the proxy; an upstream error keeps its code."""
    from wiremcp import proxy
    from wiremcp.testing import connect

    proxied = proxy(str(SERVERS / "library.py"))

    async def main() -> None:
        async with connect(proxied, era=era) as mcp:
            uris = [r["uri"] for r in await mcp.list_resources()]
            assert "test://static-text" in uris
            templates = [t["uriTemplate"] for t in await mcp.list_resource_templates()]
            assert "test://template/{id}/data" in templates
            read = await mcp.read_resource("test://static-text")
            assert read.contents[0]["text"] == "This is the content of the static text resource."
            prompt = await mcp.get_prompt("test_simple_prompt")
            assert prompt.messages[0]["content"]["text"] == "This is a simple prompt for testing."
            with pytest.raises(Exception) as failure:
                await mcp.read_resource("test://forbidden")
            assert getattr(failure.value, "code", None) == -32001
            assert getattr(failure.value, "data", None) == {"reason": "policy"}

    asyncio.run(asyncio.wait_for(main(), 60))
