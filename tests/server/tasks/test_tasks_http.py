"""The tasks extension over Streamable HTTP on loopback: routing headers, task binding, cancel races.

The server is ``wiremcp run tests/server/tasks/task_server.py --http --port 0``;
the tests speak HTTP with ``http.client``. Spec: extensions/tasks/tasks.md
("Streamable HTTP: Routing Headers", "Security Considerations"),
basic/transports/streamable-http.mdx (Request Metadata).
"""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import orjson
import pytest

from conftest import META, wiremcp_cmd

pytestmark = pytest.mark.slow
pytest.importorskip("uvicorn", reason="the HTTP transport needs the [http] extra")

HERE = Path(__file__).resolve().parent
TASKS = "io.modelcontextprotocol/tasks"
EXT = {**META, "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {}}}
NAME_FIELD = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    log = tempfile.NamedTemporaryFile(prefix="wiremcp-tasks-http-", suffix=".log", delete=False)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path_factory.mktemp("state"))}  # wiremcp run: SQLite there
    proc = subprocess.Popen(
        wiremcp_cmd("run", str(HERE / "task_server.py"), "--http", "--port", "0"), stdout=subprocess.DEVNULL, stderr=log, env=env
    )
    try:
        deadline = time.monotonic() + 20
        while not (found := re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", Path(log.name).read_text(errors="replace"))):
            assert time.monotonic() < deadline and proc.poll() is None, Path(log.name).read_text()
            time.sleep(0.02)
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(10)
        Path(log.name).unlink(missing_ok=True)


def post(port: int, message: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
    """POST one message; (status, headers, the JSON-RPC reply: the body, or the SSE stream's response)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request("POST", "/mcp", orjson.dumps(message), {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})})
        resp = conn.getresponse()
        raw = resp.read()
        got = {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()
    if got.get("content-type", "").startswith("text/event-stream"):
        events = [orjson.loads(line[5:]) for line in raw.split(b"\n") if line.startswith(b"data:") and line[5:].strip()]
        body = next((e for e in events if "id" in e and "method" not in e), None)
    else:
        body = orjson.loads(raw) if raw else None
    return resp.status, got, body


def modern_headers(method: str, params: dict[str, Any]) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    field = NAME_FIELD.get(method)
    if field and isinstance(params.get(field), str):
        headers["Mcp-Name"] = params[field]
    return headers


class Modern:
    def __init__(self, port: int) -> None:
        self.port = port
        self.n = 0

    def __call__(self, method: str, params: dict[str, Any], *, headers: dict[str, str] | None = None, meta: dict[str, Any] = EXT) -> tuple[int, Any]:
        self.n += 1
        message = {"jsonrpc": "2.0", "id": self.n, "method": method, "params": {**params, "_meta": meta}}
        status, _, body = post(self.port, message, headers if headers is not None else modern_headers(method, params))
        return status, body

    def result(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        status, body = self(method, params)
        assert status == 200 and "result" in body, (status, body)
        return body["result"]

    def poll(self, task_id: str, until: Any) -> dict[str, Any]:
        end = time.monotonic() + 15
        while True:
            task = self.result("tasks/get", {"taskId": task_id})
            if until(task) or time.monotonic() > end:
                return task


def terminal(task: dict[str, Any]) -> bool:
    return task["status"] in ("completed", "failed", "cancelled")


def test_task_flow_over_http(port):
    rpc = Modern(port)
    task_id = rpc.result("tools/call", {"name": "gate", "arguments": {}})["taskId"]
    parked = rpc.poll(task_id, lambda t: t["status"] == "input_required")
    assert list(parked["inputRequests"]) == ["confirm"]
    rpc.result("tasks/update", {"taskId": task_id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}}})
    assert rpc.poll(task_id, terminal)["result"]["content"][0]["text"] == "confirmed=True action=accept"


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_mcp_name_must_carry_the_task_id(port, method):
    rpc = Modern(port)
    task_id = rpc.result("tools/call", {"name": "hang", "arguments": {}})["taskId"]
    params = {"taskId": task_id, "inputResponses": {}}
    status, body = rpc(method, params, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": "another-task"})
    assert status == 400 and body["error"]["code"] == -32020 and "does not match" in body["error"]["message"]
    status, body = rpc(method, params, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method})
    assert status == 400 and body["error"]["code"] == -32020 and "Mcp-Name header is required" in body["error"]["message"]
    status, body = rpc(method, params)
    assert status == 200 and body["result"]["resultType"] == "complete"
    rpc.result("tasks/cancel", {"taskId": task_id})


def test_unknown_task_is_32602_and_http_400(port):
    status, body = Modern(port)("tasks/get", {"taskId": "nobody"})
    assert status == 400 and body["error"]["code"] == -32602 and body["error"]["data"]["reason"] == "unknown"


def legacy_session(port: int) -> tuple[str, Any]:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}
    status, headers, _ = post(port, init)
    assert status == 200
    sid = headers["mcp-session-id"]
    session_headers = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_headers)[0] == 202

    def ask(id_: int, method: str, params: dict[str, Any]) -> Any:
        return post(port, {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}, session_headers)[2]

    return sid, ask


def test_a_task_is_bound_to_who_made_it(port):
    """tasks.md, Security Considerations (auth binding): another caller's task is -32602, saying so."""
    _, alice = legacy_session(port)
    _, bob = legacy_session(port)
    task_id = alice(1, "tools/call", {"name": "quick", "arguments": {}, "task": {}})["result"]["task"]["taskId"]
    assert alice(2, "tasks/result", {"taskId": task_id})["result"]["content"][0]["text"] == "done "
    foreign = bob(1, "tasks/get", {"taskId": task_id})["error"]
    assert foreign["code"] == -32602 and foreign["data"] == {"taskId": task_id, "reason": "foreign"}
    assert "another client" in foreign["message"]
    assert bob(2, "tasks/list", {})["result"]["tasks"] == []
    status, body = Modern(port)("tasks/get", {"taskId": task_id})
    assert status == 400 and body["error"]["data"]["reason"] == "foreign"


def test_cancel_racing_completion_leaves_one_outcome(port):
    """The store's first terminal transition wins: a task is completed or cancelled, and stays so."""
    rpc = Modern(port)
    outcomes = set()
    for _ in range(15):
        task_id = rpc.result("tools/call", {"name": "quick", "arguments": {"x": "race"}})["taskId"]
        assert rpc.result("tasks/cancel", {"taskId": task_id})["resultType"] == "complete"
        first = rpc.poll(task_id, terminal)
        second = rpc.result("tasks/get", {"taskId": task_id})
        assert first["status"] in ("completed", "cancelled")
        assert (second["status"], second.get("result")) == (first["status"], first.get("result"))
        if first["status"] == "completed":
            assert first["result"]["content"][0]["text"] == "done race"
        outcomes.add(first["status"])
    assert outcomes <= {"completed", "cancelled"}
