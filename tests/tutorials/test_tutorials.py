"""Every tutorial's program (examples/tutorials/, docs/tutorials/) runs end to end over a real transport.

- first_server.py: its tools and resource over stdio, and `wiremcp install
  claude-desktop` writes a configuration whose command serves it;
- elicitation.py: the questions travel as MRTR rounds and the answers come back
  typed; a declined question changes nothing;
- agent.py: the agent loop calls the tools the question needs and answers;
- tasks.py: over Streamable HTTP, a task started by one client (which gets
  its id at once) and finished for another, which resumes it by id;
- remote_auth.py: over Streamable HTTP on loopback, with tokens signed by a key
  a real loopback HTTP server publishes (JWKS): no token is 401, a token
  without the write scope is refused for add_note, a full one works.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import wiremcp

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "examples" / "tutorials"

pytestmark = pytest.mark.slow


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def stdio(name: str, **options: Any) -> wiremcp.Client:
    return wiremcp.Client.stdio(sys.executable, ["-m", "wiremcp", "run", str(TUTORIALS / name)], **options)


def test_first_server_over_stdio():
    async def main() -> None:
        async with stdio("first_server.py") as client:
            assert client.server_info == {"name": "units", "version": "1.0.0"}
            tools = {tool["name"]: tool for tool in await client.list_tools()}
            assert tools["temperature"]["inputSchema"]["properties"]["to"]["enum"] == ["C", "F"]
            assert "kilometres" in tools["km_to_miles"]["inputSchema"]["properties"]["km"]["description"]
            assert (await client.call_tool("km_to_miles", {"km": 10})).structured_content == {"result": 6.214}
            assert (await client.call_tool("temperature", {"value": 212, "to": "C"})).structured_content == {"result": 100.0}
            wrong = await client.call_tool("temperature", {"value": 1, "to": "K"})
            assert wrong.is_error and "to" in wrong.text
            assert "1 mile = 1.609344 km" in (await client.read_resource("units://constants")).text

    run(main())


def test_first_server_installed_into_claude_desktop(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path), "APPDATA": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "wiremcp", "install", "claude-desktop", str(TUTORIALS / "first_server.py"), "--yes"],
        env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    configs = list(tmp_path.rglob("claude_desktop_config.json"))
    assert len(configs) == 1, configs
    (entry,) = json.loads(configs[0].read_text())["mcpServers"].values()

    async def main() -> None:
        # Start the server exactly as Claude Desktop would: the command and arguments of the entry.
        client = wiremcp.Client.stdio(entry["command"], entry.get("args", []), env={**os.environ, **entry.get("env", {})})
        async with client:
            assert (await client.call_tool("km_to_miles", {"km": 1.609344})).structured_content == {"result": 1.0}

    run(main())


def test_elicitation_rounds():
    asked: list[dict[str, Any]] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        if "table" in params["message"]:
            return {"action": "accept", "content": {"name": "Ada", "guests": 3}}
        return {"action": "accept", "content": {"ok": True}}

    async def decline(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async def main() -> None:
        async with stdio("elicitation.py", elicitation=answer) as client:
            result = await client.call_tool("book_table", {"restaurant": "Noma"})
            assert result.text == "Booked Noma for Ada, 3 guests.", result.text
            schema = asked[0]["requestedSchema"]
            assert schema["properties"]["guests"]["type"] == "integer" and set(schema["required"]) == {"name", "guests"}
            assert (await client.call_tool("cancel_all")).text == "Cancelled 1 bookings."
        async with stdio("elicitation.py", elicitation=decline) as client:
            assert (await client.call_tool("cancel_all")).text == "Nothing cancelled."

    run(main())


def test_agent_loop():
    done = subprocess.run(
        [sys.executable, str(TUTORIALS / "agent.py"), "How far is 42 km, and how warm is 98.6 F?"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "26.098; 37.0"


# -- remote_auth.py ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def issuer():
    """A loopback HTTP server publishing one RSA key as a JWKS; yields (issuer URL, jwks URL, sign)."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    jwks = json.dumps({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200 if self.path == "/jwks.json" else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(jwks if self.path == "/jwks.json" else b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{http.server_address[1]}"

    def sign(resource: str, scope: str, subject: str = "ada") -> str:
        now = int(time.time())
        claims = {"iss": base, "aud": resource, "sub": subject, "client_id": "cli", "scope": scope, "iat": now, "exp": now + 300}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1", "typ": "at+jwt"})

    yield base, f"{base}/jwks.json", sign
    http.shutdown()


def test_remote_server_with_authorization(issuer):
    base, jwks_uri, sign = issuer
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    env = {**os.environ, "WIREMCP_AUTH_ISSUER": base, "WIREMCP_AUTH_RESOURCE": resource, "WIREMCP_AUTH_JWKS_URI": jwks_uri}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", str(TUTORIALS / "remote_auth.py"), "--http", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)

        async def main() -> None:
            import aiohttp

            async with aiohttp.ClientSession() as session:
                body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}
                headers = {"Accept": "application/json, text/event-stream", "Mcp-Method": "tools/list"}
                async with session.post(resource, json=body, headers=headers) as response:
                    assert response.status == 401
                    challenge = response.headers["WWW-Authenticate"]
                    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge

            reader = {"Authorization": f"Bearer {sign(resource, 'notes:read')}"}
            async with wiremcp.Client.http(resource, headers=reader) as client:
                assert (await client.call_tool("whoami")).text == "ada"
                with pytest.raises(Exception) as refused:
                    await client.call_tool("add_note", {"text": "hi"})
                assert "notes:write" in str(refused.value)
            writer = {"Authorization": f"Bearer {sign(resource, 'notes:read notes:write', 'bob')}"}
            async with wiremcp.Client.http(resource, headers=writer) as client:
                assert (await client.call_tool("add_note", {"text": "hi"})).text == "added"
                assert (await client.call_tool("list_notes")).structured_content == {"result": ["hi (by bob)"]}

        run(main())
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        proc.stderr.close()


def serve_http(name: str, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", str(TUTORIALS / name), "--http", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"{name} did not start: {proc.stderr.read().decode() if proc.stderr else ''}")


def test_tasks_over_http(tmp_path):
    port = free_port()
    proc = serve_http("tasks.py", port, {**os.environ, "WIREMCP_TASK_STORE": f"sqlite:{tmp_path / 'tasks.sqlite3'}"})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async def main() -> None:
            async with wiremcp.Client.http(url, tasks=True) as client:
                handle = await client.call_tool("crunch", {"items": 10, "delay": 0.05}, task=True)
                assert isinstance(handle, wiremcp.TaskHandle) and handle.status == "working"
                task_id = handle.id
            async with wiremcp.Client.http(url, tasks=True) as client:
                statuses = [state.status async for state in client.task(task_id).watch()]
                assert statuses[-1] == "completed", statuses
                assert (await client.task(task_id).result()).text == "sum of squares 1..10 = 385"
            async with wiremcp.Client.http(url) as client:  # no tasks: the plain result, at the end of the request
                assert (await client.call_tool("crunch", {"items": 3, "delay": 0})).text == "sum of squares 1..3 = 14"

        run(main())
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        if proc.stderr:
            proc.stderr.close()
