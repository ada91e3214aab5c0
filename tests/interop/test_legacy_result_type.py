"""No ``resultType`` in the results of a legacy session (issue 24), over real stdio and HTTP.

``resultType`` exists only in 2026-07-28 (schema.mdx, ``Result``); the 2025-11-25,
2025-06-18, 2025-03-26 and 2024-11-05 schemas have no such member, and a client
validating strictly against them must not meet it. Every result a legacy session
receives is checked here with raw envelopes against ``wiremcp run
examples/everything.py``: tools/list, tools/call, prompts/list, prompts/get,
resources/list, resources/templates/list, resources/read, completion/complete.
The modern request on the same server keeps its ``resultType`` (the fast path
is untouched).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import httpx
import pytest

from _servers import wiremcp_http

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = str(ROOT / "examples" / "everything.py")
LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("tools/list", {}),
    ("tools/call", {"name": "test_simple_text", "arguments": {}}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "test://static-text"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": {"name": "arg1", "value": ""}}),
]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
Rpc = Callable[[int, str, dict[str, Any]], dict[str, Any]]


def _initialize(version: str) -> dict[str, Any]:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}


def _check(version: str, rpc: Rpc, notify: Callable[[str], None]) -> None:
    init = rpc(1, "initialize", _initialize(version))
    assert init["result"]["protocolVersion"] == version and "resultType" not in init["result"]
    notify("notifications/initialized")
    for n, (method, params) in enumerate(CALLS, start=2):
        reply = rpc(n, method, params)
        assert "result" in reply, (method, reply)
        assert not {"resultType", "ttlMs", "cacheScope"} & set(reply["result"]), f"{version} {method}: {sorted(reply['result'])}"
    modern = rpc(99, "tools/call", {"name": "test_simple_text", "arguments": {}, "_meta": MODERN_META})
    assert modern["result"]["resultType"] == "complete"


@pytest.fixture
def stdio_server() -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", EVERYTHING],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


@pytest.mark.parametrize("version", LEGACY)
def test_a_legacy_stdio_session_gets_no_result_type(stdio_server: subprocess.Popen[str], version: str) -> None:
    stdin, stdout = stdio_server.stdin, stdio_server.stdout
    assert stdin is not None and stdout is not None

    def write(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message) + "\n")
        stdin.flush()

    def rpc(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        write({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        while True:
            message = json.loads(stdout.readline())
            if message.get("id") == id and "method" not in message:
                return message  # type: ignore[no-any-return]

    _check(version, rpc, lambda method: write({"jsonrpc": "2.0", "method": method}))


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with wiremcp_http(EVERYTHING) as url:
        yield url


def _body(response: httpx.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        replies = [json.loads(d) for d in data if d]
        return next(r for r in replies if "method" not in r)  # type: ignore[no-any-return]
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("version", LEGACY)
def test_a_legacy_http_session_gets_no_result_type(http_url: str, version: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=30) as http:

        def post(message: dict[str, Any]) -> httpx.Response:
            response = http.post(http_url, json=message, headers=headers)
            assert response.status_code in (200, 202), response.text
            return response

        def rpc(id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            modern = "_meta" in params
            if modern:  # a modern request is stateless: no session, no legacy version header
                response = http.post(http_url, json={"jsonrpc": "2.0", "id": id, "method": method, "params": params}, headers={
                    **headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": params["name"],
                })
                return _body(response)
            response = post({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            if method == "initialize":
                headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
                if version != "2024-11-05":
                    headers["MCP-Protocol-Version"] = version
            return _body(response)

        _check(version, rpc, lambda method: post({"jsonrpc": "2.0", "method": method}) and None)
