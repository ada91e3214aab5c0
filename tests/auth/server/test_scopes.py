"""Per-operation scopes (``scopes=`` on tools, resources, prompts) and ``ctx.auth``, over real HTTP.

basic/authorization/ "Runtime Insufficient Scope Errors": 403 with
``error="insufficient_scope"`` and every scope the operation needs;
"Servers MUST account for scope hierarchies". Served by `scoped_app`
(``MCPApp(server, auth=...)`` on uvicorn), both eras.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import httpx
import pytest
from _servers import uvicorn_app

from ._oauth import challenge, request

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    yield from _serve({})


def _serve(extra: dict[str, str]) -> Iterator[str]:
    with uvicorn_app("scoped_app:app", HERE, extra, url_env="SCOPED_RESOURCE") as served:
        yield served


def post(url: str, message: dict[str, Any], token: str | None, headers: dict[str, str] | None = None) -> httpx.Response:
    hdrs = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    params = message.get("params") or {}
    if "_meta" in params:
        hdrs["mcp-protocol-version"] = "2026-07-28"
        hdrs["mcp-method"] = message["method"]
        for field in ("name", "uri"):
            if field in params and message["method"] in ("tools/call", "prompts/get", "resources/read"):
                hdrs["mcp-name"] = params[field]
    if token is not None:
        hdrs["authorization"] = f"Bearer {token}"
    hdrs.update(headers or {})
    return httpx.post(url, json=message, headers=hdrs, timeout=10)


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = response.json()
    assert "result" in body, body
    return body["result"]  # type: ignore[no-any-return]


def forbidden(response: httpx.Response, scope: str) -> None:
    assert response.status_code == 403, response.text
    params = challenge(response)
    assert params["error"] == "insufficient_scope"
    assert params["scope"] == scope
    assert response.json()["id"] == 1


def test_ctx_auth_is_the_verified_token(url: str):
    result = ok(post(url, request("tools/call", {"name": "whoami", "arguments": {}}), "t-files"))
    assert result["content"][0]["text"] == "bob files mcp"


def test_tool_scopes(url: str):
    call = request("tools/call", {"name": "list_files", "arguments": {}})
    forbidden(post(url, call, "t-mcp"), "mcp files")
    assert ok(post(url, call, "t-files"))["content"][0]["text"] == "files for bob"


def test_tool_scopes_under_middleware_are_403_too():
    """With middleware every request is a coroutine, so the refusal comes after an await: still a 403."""
    for url in _serve({"SCOPED_MIDDLEWARE": "1"}):
        call = request("tools/call", {"name": "list_files", "arguments": {}})
        forbidden(post(url, call, "t-mcp"), "mcp files")
        assert ok(post(url, call, "t-files"))["content"][0]["text"] == "files for bob"
        forbidden(post(url, request("resources/read", {"uri": "file:///secret"}), "t-mcp"), "mcp files")


def test_scope_hierarchy(url: str):
    call = request("tools/call", {"name": "list_files", "arguments": {}})
    assert ok(post(url, call, "t-admin"))["content"][0]["text"] == "files for cid"
    who = ok(post(url, request("tools/call", {"name": "whoami", "arguments": {}}), "t-admin"))
    assert who["content"][0]["text"] == "cid admin files mcp"  # the effective scopes


def test_resource_and_template_scopes(url: str):
    for uri in ("file:///secret", "file:///docs/readme"):
        read = request("resources/read", {"uri": uri})
        forbidden(post(url, read, "t-mcp"), "mcp files")
        assert ok(post(url, read, "t-files"))["contents"]
    assert ok(post(url, request("resources/read", {"uri": "file:///public"}), "t-mcp"))["contents"]


def test_prompt_scopes(url: str):
    get = request("prompts/get", {"name": "audit"})
    forbidden(post(url, get, "t-files"), "mcp audit")
    assert ok(post(url, get, "t-audit"))["messages"]


def test_required_scope_and_unknown_tokens(url: str):
    got = post(url, request("tools/list"), "nope")
    assert got.status_code == 401 and challenge(got)["error"] == "invalid_token"
    got = post(url, request("tools/list"), None)
    assert got.status_code == 401 and challenge(got)["scope"] == "mcp"


def test_two_authorization_headers_are_400(url: str):
    got = httpx.post(
        url, content=b"{}",
        headers=[("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
                 ("authorization", "Bearer t-mcp"), ("authorization", "Bearer t-files")],
        timeout=10,
    )
    assert got.status_code == 400 and challenge(got)["error"] == "invalid_request"


def test_legacy_session_is_authenticated_and_scoped(url: str):
    """A 2025-11-25 session: every request needs the token; a scope refusal is a JSON-RPC error in the session."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}
    assert post(url, init, None).status_code == 401
    opened = post(url, init, "t-mcp")
    assert opened.status_code == 200, opened.text
    headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, "t-mcp", headers).status_code == 202
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    assert post(url, call, None, headers).status_code == 401  # the session id is no credential
    # a later token of the same principal (refreshed, stepped up) goes on with the session
    assert ok(post(url, call, "t-ann-files", headers))["content"][0]["text"] == "ann files mcp"
    refused = post(url, {**call, "params": {"name": "list_files", "arguments": {}}}, "t-mcp", headers)
    error = refused.json()["error"]
    assert error["code"] == -32600 and "insufficient scope" in error["message"]


def test_a_legacy_session_is_bound_to_the_principal_that_opened_it(url: str):
    """Security best practices, "Session Hijacking": a valid token for someone else does not get
    into ann's session; the id is unknown to it (404), for POST, GET and DELETE alike."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}
    opened = post(url, init, "t-mcp")
    assert opened.status_code == 200, opened.text
    sid = opened.headers["mcp-session-id"]
    headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    assert post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, "t-mcp", headers).status_code == 202
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    hijack = post(url, call, "t-files", headers)  # bob's valid token, ann's session id
    assert hijack.status_code == 404, hijack.text
    assert "ann" not in hijack.text
    for method in ("GET", "DELETE"):
        got = httpx.request(method, url, headers={**headers, "authorization": "Bearer t-admin",
                                                  "accept": "text/event-stream"}, timeout=10)
        assert got.status_code == 404, (method, got.text)
    # the session is still ann's, and still there
    assert ok(post(url, call, "t-mcp", headers))["content"][0]["text"] == "ann mcp"
    deleted = httpx.delete(url, headers={**headers, "authorization": "Bearer t-mcp"}, timeout=10)
    assert deleted.status_code == 204


def test_a_handler_never_sees_the_raw_token(url: str):
    """Token passthrough (security best practices): the server keeps the token it verified to itself;
    a tool gets the verified identity (`ctx.auth`: subject, client, scopes, claims) and nothing that
    holds the token, so it cannot forward it to another API."""
    from .scoped_app import RAW_TOKEN

    seen = ok(post(url, request("tools/call", {"name": "peek", "arguments": {}}), RAW_TOKEN))["content"][0]["text"]
    assert "subject='eve'" in seen  # the identity is there
    assert RAW_TOKEN not in seen


def test_scopes_without_auth_are_warned_about(caplog):
    import wiremcp
    from wiremcp.transports.http import MCPApp

    server = wiremcp.Server("open")

    @server.tool(scopes=["admin"])
    def danger() -> str:
        return "x"

    with caplog.at_level("WARNING", logger="wiremcp.auth"):
        MCPApp(server)
    assert "tool 'danger'" in caplog.text and "not enforced" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="wiremcp.auth"):
        MCPApp(wiremcp.Server("plain"))
    assert caplog.text == ""


def test_an_endpoint_without_auth_loads_no_auth_code():
    code = (
        "import sys, wiremcp; from wiremcp.transports.http import MCPApp; MCPApp(wiremcp.Server('x'));"
        "bad = [m for m in sys.modules if m.startswith(('wiremcp.auth', 'jwt', 'cryptography'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
