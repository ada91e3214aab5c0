"""Authorization at one door: one test per row of ``server._authorization.CHECKS``, over real HTTP,
against the real authorization server (oidc-provider, tests/auth/as/), in both eras.

The server is ``wiremcp run tests/auth/server/authz_app.py --http``. Three
tokens of the same user (alice), each from a real login (authorization code
with PKCE and ``resource``):

* ``ADMIN``: client A (the admin console), scopes ``mcp admin``;
* ``LOW``: the same client A, a later login asking for ``mcp`` only: the
  same caller, without the ``admin`` scope;
* ``OTHER``: client B, another OAuth client of the same user, ``mcp admin``:
  another caller (issuer, subject and client id are the caller).

Each row's test sends its method with ``LOW`` (refused, or the list hides
the admin items) and with ``OTHER`` (allowed where nothing is owned; the
task, the session or the ``requestState`` of client A refused). Refusals:
403 ``insufficient_scope`` with ``WWW-Authenticate`` under 2026-07-28; the
JSON-RPC error -32600 in a 2025-11-25 session; another caller's task is
-32602 (HTTP 400 under 2026-07-28); another caller's session is 404.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
import time
from dataclasses import dataclass
from typing import Any, Iterator

import httpx
import pytest

from ._oauth import AuthorizationServer, ProtectedServer, challenge, ec_key

pytestmark = pytest.mark.slow

TASKS = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
NAME_FIELD = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
              "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}


@dataclass
class Tokens:
    url: str
    admin: str
    low: str
    other: str


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def tokens(request: pytest.FixtureRequest, node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tokens]:
    """The server on one process with its SQLite task store (`wiremcp run`'s default), or on Redis: the
    Redis task store and the sessions shared through Redis (their own binding to the principal)."""
    with contextlib.ExitStack() as stack:
        env = {"XDG_STATE_HOME": str(tmp_path_factory.mktemp("state"))}
        if request.param == "redis":
            from scale.services import RedisServer

            redis = RedisServer()
            stack.callback(redis.kill)
            env.update(WIREMCP_REDIS_URL=redis.url, WIREMCP_STATE_KEY="authz-tests-state-key-0123456789abcdef")
        issuer = AuthorizationServer(node, tmp_path_factory.mktemp("as")).start([ec_key("k1")])
        stack.callback(issuer.stop)
        server = ProtectedServer(issuer.issuer, script="tests/auth/server/authz_app.py", env=env)
        stack.callback(server.stop)
        admin, client_a = issuer.user_token(server.url, "mcp admin")
        low, same = issuer.user_token(server.url, "mcp", client_id=client_a)
        other, client_b = issuer.user_token(server.url, "mcp admin")
        assert same == client_a != client_b
        yield Tokens(server.url, admin, low, other)


# -- speaking to the server ------------------------------------------------------------------

def _reply(response: httpx.Response) -> Any:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return next((e for e in events if "id" in e and "method" not in e), None)
    return response.json() if response.content else None


def modern(t: Tokens, token: str, method: str, params: dict[str, Any], *, tasks: bool = False) -> httpx.Response:
    caps: dict[str, Any] = {"elicitation": {}}
    if tasks:
        caps["extensions"] = {TASKS: {}}
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": caps}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "authorization": f"Bearer {token}", "mcp-protocol-version": MODERN, "mcp-method": method}
    field = NAME_FIELD.get(method)
    if field and type(params.get(field)) is str:
        headers["mcp-name"] = params[field]
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    return httpx.post(t.url, content=json.dumps(body), headers=headers, timeout=15)


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body = _reply(response)
    assert "result" in body, body
    return body["result"]  # type: ignore[no-any-return]


def forbidden(response: httpx.Response) -> None:
    """403 insufficient_scope naming admin, the JSON-RPC error in the body, nothing of the component."""
    assert response.status_code == 403, response.text
    params = challenge(response)
    assert params["error"] == "insufficient_scope" and "admin" in params["scope"].split(), params
    assert "insufficient scope" in response.json()["error"]["message"]
    assert "Acme" not in response.text and "secret" not in response.text


def foreign(response: httpx.Response) -> None:
    """Another caller's task: -32602 (HTTP 400), saying so, and nothing of the task."""
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == -32602 and error["data"]["reason"] == "foreign", error
    assert "secret" not in response.text


class Session:
    """A 2025-11-25 session opened with one token; each request may carry another."""

    def __init__(self, t: Tokens, token: str) -> None:
        self.t = t
        self.token = token
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                           "clientInfo": {"name": "old", "version": "1"}}}
        opened = self._post(init, token, {})
        assert opened.status_code == 200, opened.text
        self.headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        assert self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, token, self.headers).status_code == 202
        self.n = 0

    def _post(self, body: dict[str, Any], token: str, headers: dict[str, str]) -> httpx.Response:
        hdrs = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                "authorization": f"Bearer {token}", **headers}
        return httpx.post(self.t.url, content=json.dumps(body), headers=hdrs, timeout=15)

    def raw(self, method: str, params: dict[str, Any], token: str | None = None) -> httpx.Response:
        self.n += 1
        return self._post({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}, token or self.token, self.headers)

    def __call__(self, method: str, params: dict[str, Any], token: str | None = None) -> dict[str, Any]:
        response = self.raw(method, params, token)
        assert response.status_code == 200, response.text
        return _reply(response)  # type: ignore[no-any-return]


def refused_in_session(reply: dict[str, Any]) -> None:
    error = reply["error"]
    assert error["code"] == -32600 and "insufficient scope" in error["message"], error
    assert "Acme" not in json.dumps(reply) and "secret" not in json.dumps(reply)


def foreign_in_session(reply: dict[str, Any]) -> None:
    error = reply["error"]
    assert error["code"] == -32602 and error["data"]["reason"] == "foreign", error
    assert "secret" not in json.dumps(reply)


def session_bound(t: Tokens, method: str, params: dict[str, Any]) -> None:
    """SESSION: the same caller with fewer scopes goes on in its session; another client's token gets 404."""
    mine = Session(t, t.admin)
    assert "result" in mine(method, params, t.low)
    hijack = mine.raw(method, params, t.other)
    assert hijack.status_code == 404, hijack.text


def modern_task(t: Tokens, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = ok(modern(t, t.admin, "tools/call", {"name": tool, "arguments": arguments or {}}, tasks=True))
    assert result["resultType"] == "task", result
    return str(result["taskId"])


def legacy_task(session: Session, tool: str) -> str:
    reply = session("tools/call", {"name": tool, "arguments": {}, "task": {}})
    return str(reply["result"]["task"]["taskId"])


def poll(t: Tokens, task_id: str, status: str) -> dict[str, Any]:
    end = time.monotonic() + 15
    while True:
        task = ok(modern(t, t.admin, "tasks/get", {"taskId": task_id}, tasks=True))
        if task["status"] == status or time.monotonic() > end:
            assert task["status"] == status, task
            return task
        time.sleep(0.05)


def state_bound(t: Tokens, method: str, params: dict[str, Any]) -> None:
    """A requestState sealed for client A is refused from client B (-32602), accepted from A."""
    first = ok(modern(t, t.admin, method, params))
    assert first["resultType"] == "input_required", first
    retry = {**params, "requestState": first["requestState"], "inputResponses": YES}
    replayed = modern(t, t.other, method, retry)
    assert replayed.status_code == 400, replayed.text
    assert replayed.json()["error"]["code"] == -32602 and "confirmed" not in replayed.text
    assert "confirmed=True" in json.dumps(ok(modern(t, t.admin, method, retry)))


# -- one test per row ------------------------------------------------------------------------

def test_row_initialize(tokens: Tokens) -> None:
    Session(tokens, tokens.low)  # no scope beyond the endpoint's
    session_bound(tokens, "ping", {})


def test_row_server_discover(tokens: Tokens) -> None:
    for token in (tokens.low, tokens.other):
        assert ok(modern(tokens, token, "server/discover", {}))["capabilities"]["tools"] is not None


def test_row_ping(tokens: Tokens) -> None:
    session_bound(tokens, "ping", {})


def test_row_logging_setLevel(tokens: Tokens) -> None:
    session_bound(tokens, "logging/setLevel", {"level": "error"})


def test_row_resources_unsubscribe(tokens: Tokens) -> None:
    session_bound(tokens, "resources/unsubscribe", {"uri": "admin://report"})


def _names(items: list[dict[str, Any]], field: str = "name") -> set[str]:
    return {item[field] for item in items}


def _lists(tokens: Tokens, method: str, key: str, field: str, hidden: str) -> None:
    low = ok(modern(tokens, tokens.low, method, {}))
    assert hidden not in _names(low[key], field)
    full = ok(modern(tokens, tokens.other, method, {}))
    assert hidden in _names(full[key], field)
    assert low["cacheScope"] == full["cacheScope"] == "private"  # it depends on the token: no shared cache
    session = Session(tokens, tokens.admin)
    assert hidden in _names(session(method, {})["result"][key], field)
    assert hidden not in _names(session(method, {}, tokens.low)["result"][key], field)


def test_row_tools_list(tokens: Tokens) -> None:
    _lists(tokens, "tools/list", "tools", "name", "admin_report")


def test_row_resources_list(tokens: Tokens) -> None:
    _lists(tokens, "resources/list", "resources", "uri", "admin://report")


def test_row_resources_templates_list(tokens: Tokens) -> None:
    _lists(tokens, "resources/templates/list", "resourceTemplates", "uriTemplate", "admin://customers/{name}")


def test_row_prompts_list(tokens: Tokens) -> None:
    _lists(tokens, "prompts/list", "prompts", "name", "audit")


def _component(tokens: Tokens, method: str, params: dict[str, Any], expect: str) -> None:
    forbidden(modern(tokens, tokens.low, method, params))
    assert expect in json.dumps(ok(modern(tokens, tokens.other, method, params)))
    session = Session(tokens, tokens.admin)
    refused_in_session(session(method, params, tokens.low))
    assert expect in json.dumps(session(method, params)["result"])
    assert expect in json.dumps(Session(tokens, tokens.other)(method, params)["result"])


def test_row_tools_call(tokens: Tokens) -> None:
    _component(tokens, "tools/call", {"name": "admin_report", "arguments": {"text": "x"}}, "admin secret x")
    state_bound(tokens, "tools/call", {"name": "confirm", "arguments": {}})


def test_row_resources_read(tokens: Tokens) -> None:
    _component(tokens, "resources/read", {"uri": "admin://report"}, "admin report")
    assert ok(modern(tokens, tokens.admin, "resources/read", {"uri": "admin://report"}))["cacheScope"] == "private"
    assert ok(modern(tokens, tokens.low, "resources/read", {"uri": "public://readme"}))["cacheScope"] == "public"
    _component(tokens, "resources/read", {"uri": "admin://customers/acme"}, "customer acme")
    state_bound(tokens, "resources/read", {"uri": "public://asks"})


def test_row_prompts_get(tokens: Tokens) -> None:
    _component(tokens, "prompts/get", {"name": "audit", "arguments": {"customer": "acme"}}, "audit acme")
    state_bound(tokens, "prompts/get", {"name": "ask_prompt"})


def test_row_completion_complete(tokens: Tokens) -> None:
    """The completer of a scoped prompt or template does not run without the scope (issue 23, defect 3)."""
    for ref, argument in (({"type": "ref/prompt", "name": "audit"}, "customer"),
                          ({"type": "ref/resource", "uri": "admin://customers/{name}"}, "name")):
        _component(tokens, "completion/complete", {"ref": ref, "argument": {"name": argument, "value": "A"}}, "Acme Corp")


def test_row_resources_subscribe(tokens: Tokens) -> None:
    session = Session(tokens, tokens.admin)
    refused_in_session(session("resources/subscribe", {"uri": "admin://report"}, tokens.low))
    assert session("resources/subscribe", {"uri": "admin://report"})["result"] == {}
    assert Session(tokens, tokens.other)("resources/subscribe", {"uri": "admin://report"})["result"] == {}
    assert session("resources/subscribe", {"uri": "public://readme"}, tokens.low)["result"] == {}


def _acknowledged(tokens: Tokens, token: str, notifications: dict[str, Any]) -> dict[str, Any] | httpx.Response:
    """Open subscriptions/listen; the acknowledged filter (then close), or the refusal."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"notifications": notifications, "_meta": meta}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "authorization": f"Bearer {token}", "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}
    with httpx.stream("POST", tokens.url, content=json.dumps(body), headers=headers, timeout=15) as response:
        if response.status_code != 200:
            response.read()
            return response
        for line in response.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event.get("method") == "notifications/subscriptions/acknowledged":
                    return event["params"]["notifications"]  # type: ignore[no-any-return]
    raise AssertionError("no acknowledgement")


def test_row_subscriptions_listen(tokens: Tokens) -> None:
    refused = _acknowledged(tokens, tokens.low, {"resourceSubscriptions": ["admin://report"]})
    assert isinstance(refused, httpx.Response)
    forbidden(refused)
    agreed = _acknowledged(tokens, tokens.other, {"resourceSubscriptions": ["admin://report"]})
    assert isinstance(agreed, dict) and agreed["resourceSubscriptions"] == ["admin://report"]
    # task status notifications: only for the caller's own tasks whose tool's scopes it holds
    task_id = modern_task(tokens, "admin_wait")
    try:
        for token, expected in ((tokens.admin, [task_id]), (tokens.low, []), (tokens.other, [])):
            got = _acknowledged(tokens, token, {"taskIds": [task_id]})
            assert isinstance(got, dict) and got["taskIds"] == expected, (got, expected)
    finally:
        ok(modern(tokens, tokens.admin, "tasks/cancel", {"taskId": task_id}, tasks=True))


def test_row_tasks_get(tokens: Tokens) -> None:
    """Issue 23, defect 2: another client of the same user read the admin task; a token without admin too."""
    task_id = modern_task(tokens, "admin_report", {"text": "x"})
    foreign(modern(tokens, tokens.other, "tasks/get", {"taskId": task_id}, tasks=True))
    forbidden(modern(tokens, tokens.low, "tasks/get", {"taskId": task_id}, tasks=True))
    assert "admin secret x" in json.dumps(poll(tokens, task_id, "completed"))
    mine = Session(tokens, tokens.admin)
    legacy_id = legacy_task(mine, "admin_report")
    foreign_in_session(Session(tokens, tokens.other)("tasks/get", {"taskId": legacy_id}))
    refused_in_session(mine("tasks/get", {"taskId": legacy_id}, tokens.low))
    assert mine("tasks/get", {"taskId": legacy_id})["result"]["taskId"] == legacy_id


def test_row_tasks_result(tokens: Tokens) -> None:
    mine = Session(tokens, tokens.admin)
    task_id = legacy_task(mine, "admin_report")
    foreign_in_session(Session(tokens, tokens.other)("tasks/result", {"taskId": task_id}))
    refused_in_session(mine("tasks/result", {"taskId": task_id}, tokens.low))
    assert "admin secret" in json.dumps(mine("tasks/result", {"taskId": task_id})["result"])


def test_row_tasks_update(tokens: Tokens) -> None:
    task_id = modern_task(tokens, "admin_gate")
    poll(tokens, task_id, "input_required")
    update = {"taskId": task_id, "inputResponses": YES}
    foreign(modern(tokens, tokens.other, "tasks/update", update, tasks=True))
    forbidden(modern(tokens, tokens.low, "tasks/update", update, tasks=True))
    assert poll(tokens, task_id, "input_required")["inputRequests"]  # neither answer was taken
    ok(modern(tokens, tokens.admin, "tasks/update", update, tasks=True))
    assert "admin confirmed=True" in json.dumps(poll(tokens, task_id, "completed"))


def test_row_tasks_cancel(tokens: Tokens) -> None:
    task_id = modern_task(tokens, "admin_wait")
    foreign(modern(tokens, tokens.other, "tasks/cancel", {"taskId": task_id}, tasks=True))
    forbidden(modern(tokens, tokens.low, "tasks/cancel", {"taskId": task_id}, tasks=True))
    poll(tokens, task_id, "working")
    ok(modern(tokens, tokens.admin, "tasks/cancel", {"taskId": task_id}, tasks=True))
    poll(tokens, task_id, "cancelled")
    mine = Session(tokens, tokens.admin)
    legacy_id = legacy_task(mine, "admin_wait")
    foreign_in_session(Session(tokens, tokens.other)("tasks/cancel", {"taskId": legacy_id}))
    refused_in_session(mine("tasks/cancel", {"taskId": legacy_id}, tokens.low))
    assert mine("tasks/get", {"taskId": legacy_id})["result"]["status"] == "working"
    assert mine("tasks/cancel", {"taskId": legacy_id})["result"]["status"] == "cancelled"


def test_row_tasks_list(tokens: Tokens) -> None:
    mine = Session(tokens, tokens.admin)
    task_id = legacy_task(mine, "admin_report")
    assert task_id in {t["taskId"] for t in mine("tasks/list", {})["result"]["tasks"]}
    assert mine("tasks/list", {}, tokens.low)["result"]["tasks"] == []
    assert Session(tokens, tokens.other)("tasks/list", {})["result"]["tasks"] == []


def test_every_row_has_its_test() -> None:
    """A method added to the table without a test here fails this (and a test for a row that went away)."""
    from wiremcp.server._authorization import CHECKS

    wanted = {"test_row_" + method.replace("/", "_") for method in CHECKS}
    have = {name for name in globals() if name.startswith("test_row_")}
    assert wanted == have


def test_the_table_in_docs_security_is_the_one_applied() -> None:
    """docs/security.md shows `CHECKS` as `markdown_table` renders it: the page cannot drift from the code."""
    from wiremcp.server._authorization import markdown_table

    page = (Path(__file__).resolve().parents[3] / "docs" / "security.md").read_text()
    start = "<!-- authorization-table: generated by wiremcp.server._authorization.markdown_table -->\n"
    shown = page[page.index(start) + len(start):page.index("<!-- /authorization-table -->")]
    assert shown == markdown_table(), "regenerate the table in docs/security.md from markdown_table()"


def test_every_method_served_has_a_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request method a server with everything (both eras, tasks, completion) answers is in the table."""
    import importlib.util

    from wiremcp.server._authorization import CHECKS
    from wiremcp.server._legacy import LEGACY_ONLY_METHODS

    monkeypatch.setenv("WIREMCP_AUTH_ISSUER", "http://127.0.0.1:9")
    monkeypatch.setenv("WIREMCP_AUTH_RESOURCE", "http://127.0.0.1:9/mcp")
    spec = importlib.util.spec_from_file_location("authz_app_rows", Path(__file__).resolve().parent / "authz_app.py")
    assert spec is not None and spec.loader is not None
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    served = set(app.server._engine.methods) | set(app.server._engine.legacy_methods) | set(LEGACY_ONLY_METHODS)
    assert served == set(CHECKS), (served ^ set(CHECKS))
