"""Issue 16 over real transports: what production authors coming from FastMCP expect.

Each bullet of the issue has a test here over a real stdio subprocess or a
real loopback HTTP server (``wiremcp run tests/servers/features.py``):

* a sync tool that blocks does not delay another request (stdio and HTTP),
  proved with a synchronisation point (a gate only another request opens),
  not a timing threshold; a cancelled threaded call gets no reply;
* bare ``@server.tool`` registers the tool;
* declared inputs (``Annotated[T, Elicit(...)]``) run the body once, in both
  eras; ``ctx.elicit`` re-runs it from the top under 2026-07-28;
* ``ctx.elicit(message, T)`` derives the form from a dataclass and converts
  the answer back;
* a tool's exception text is masked, a ToolError's is not; resources and
  prompts follow the same rule (-32603 with the same message shape).
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import META, ROOT, SERVERS, StdioPeer, call, request, wiremcp_cmd

FEATURES = str(SERVERS / "features.py")
ELICIT_META: dict[str, Any] = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}


@pytest.fixture
def features(spawn: Any) -> StdioPeer:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", FEATURES))
    return peer


def text_of(reply: dict[str, Any]) -> str:
    assert "result" in reply, reply
    content = reply["result"]["content"]
    return str(content[0]["text"])


# -- 1. sync tools run off the event loop ------------------------------------------


@pytest.mark.slow
def test_a_blocking_sync_tool_does_not_delay_another_request_stdio(features: StdioPeer) -> None:
    features.send(call(1, "block"))
    # `block` holds its worker thread until `release` runs: if it held the event loop,
    # this echo would never be answered (and `release` could never run).
    assert features.ask(call(2, "echo", {"text": "still here"})) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "still here"}],
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "features", "version": "1.0.0"}},
        },
    }
    features.send(call(3, "release"))
    replies = {r["id"]: text_of(r) for r in (features.recv(), features.recv())}
    assert replies == {1: "released", 3: "gate open"}


@pytest.mark.slow
def test_sync_tools_run_in_worker_threads_unless_inline(features: StdioPeer) -> None:
    assert text_of(features.ask(call(1, "worker_thread"))).startswith("wiremcp-worker")
    assert text_of(features.ask(call(2, "inline_thread"))) == "MainThread"


@pytest.mark.slow
def test_a_cancelled_threaded_call_gets_no_reply_and_its_late_result_is_dropped(features: StdioPeer) -> None:
    """cancellation.mdx: after notifications/cancelled nothing is sent for the request, not even its reply."""
    features.send(call(1, "block"))
    features.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}})
    # the thread still runs; the server is not blocked by it
    assert text_of(features.ask(call(2, "echo", {"text": "x"}))) == "x"
    # release the thread: its late result must be dropped, so the next line is release's reply
    assert features.ask(call(3, "release"))["id"] == 3
    assert features.ask(call(4, "echo", {"text": "after"}))["id"] == 4
    features.expect_nothing_more()


class HTTPServer:
    """``wiremcp run FILE --http --port 0`` with stderr in a file; knows its port once it is up."""

    def __init__(self, path: str) -> None:
        self.log_path = Path(tempfile.mkstemp(prefix="wiremcp-features-", suffix=".log")[1])
        self._log = open(self.log_path, "wb")
        args = wiremcp_cmd("run", path, "--http", "--port", "0", "--log-level", "INFO")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log, cwd=ROOT)
        deadline = time.monotonic() + 20
        while True:
            found = re.search(r"at http://127\.0\.0\.1:(\d+)/mcp", self.log_path.read_text(errors="replace"))
            if found:
                self.port = int(found.group(1))
                break
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"the server did not start:\n{self.log_path.read_text(errors='replace')}")
            time.sleep(0.02)
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def features_http() -> Iterator[HTTPServer]:
    pytest.importorskip("uvicorn")
    server = HTTPServer(FEATURES)
    yield server
    server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_blocking_sync_tool_does_not_delay_another_request_http(features_http: HTTPServer, era: str) -> None:
    from wiremcp import Client

    async def main() -> None:
        async with Client.http(features_http.url, era=era) as client:
            await client.call_tool("reset")
            sleeper = asyncio.ensure_future(client.call_tool("block"))
            # answered while `block` still holds its thread: only `release` below lets it finish
            assert (await client.call_tool("echo", {"text": "hi"})).text == "hi"
            assert not sleeper.done()
            assert (await client.call_tool("release")).text == "gate open"
            assert (await sleeper).text == "released"

    asyncio.run(main())


# -- 2. decorators with and without parentheses -------------------------------------


@pytest.mark.slow
def test_bare_decorators_register(features: StdioPeer) -> None:
    tools = {t["name"] for t in features.ask(request(1, "tools/list"))["result"]["tools"]}
    assert {"block", "release", "echo", "crash", "refuse", "profile", "signup", "paint"} <= tools
    prompts = features.ask(request(2, "prompts/list"))["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["refusing_prompt"]


# -- 3. declared inputs run the body once ---------------------------------------------


def _accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


@pytest.mark.slow
def test_declared_inputs_are_not_arguments(features: StdioPeer) -> None:
    tools = {t["name"]: t for t in features.ask(request(1, "tools/list"))["result"]["tools"]}
    schema = tools["signup"]["inputSchema"]
    assert schema["properties"] == {"email_domain": {"type": "string"}} and schema["required"] == ["email_domain"]
    assert tools["paint"]["inputSchema"]["properties"] == {}


@pytest.mark.slow
def test_declared_inputs_modern_body_runs_once(features: StdioPeer) -> None:
    first = features.ask(call(1, "signup", {"email_domain": "example.com"}, **ELICIT_META))["result"]
    assert first["resultType"] == "input_required"
    asked = first["inputRequests"]
    assert set(asked) == {"name", "person"}  # both asked in one round
    assert asked["name"]["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"value": {"type": "string"}},
        "required": ["value"],
    }
    assert asked["person"]["params"]["requestedSchema"]["properties"]["plan"] == {
        "type": "string",
        "enum": ["free", "pro"],
        "default": "free",
    }
    assert text_of(features.ask(call(2, "count", {"name": "signup"}))) == "0"  # the body has not run
    params = {
        "name": "signup",
        "arguments": {"email_domain": "example.com"},
        "requestState": first["requestState"],
        "inputResponses": {"name": _accept({"value": "Ada"}), "person": _accept({"name": "Ada", "age": 36})},
    }
    done = features.ask(request(3, "tools/call", params, meta=ELICIT_META))
    assert text_of(done) == "Ada <ada@example.com>, 36, run 1"
    assert text_of(features.ask(call(4, "count", {"name": "signup"}))) == "1"


@pytest.mark.slow
def test_resolver_inputs_take_several_rounds_and_the_body_runs_once(features: StdioPeer) -> None:
    state = None
    responses: dict[str, Any] = {}
    answers = {"input-1": _accept({"value": True}), "input-2": _accept({"value": "teal"})}
    for round_ in range(1, 4):
        params: dict[str, Any] = {"name": "paint", "arguments": {}}
        if state is not None:
            params["requestState"], params["inputResponses"] = state, responses
        result = features.ask(request(round_, "tools/call", params, meta=ELICIT_META))["result"]
        if result["resultType"] == "complete":
            break
        (key,) = result["inputRequests"]
        state, responses = result["requestState"], {key: answers[key]}
    assert round_ == 3  # two questions, one after the other, then the body
    assert result["content"][0]["text"] == "painted teal, run 1"


@pytest.mark.slow
def test_imperative_elicit_reruns_the_handler_each_round(features: StdioPeer) -> None:
    """The documented caveat: without declared inputs the body re-runs from the top (2026-07-28)."""
    first = features.ask(call(1, "side_effects", **ELICIT_META))["result"]
    second = features.ask(
        request(2, "tools/call", {"name": "side_effects", "arguments": {}, "requestState": first["requestState"],
                                  "inputResponses": {"input-1": _accept({"value": "a"})}}, meta=ELICIT_META)
    )["result"]
    assert second["resultType"] == "input_required"
    done = features.ask(
        request(3, "tools/call", {"name": "side_effects", "arguments": {}, "requestState": second["requestState"],
                                  "inputResponses": {"input-2": _accept({"value": "b"})}}, meta=ELICIT_META)
    )
    assert text_of(done) == "a b, run 3"


def _legacy(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


def _initialize(peer: StdioPeer) -> None:
    reply = peer.ask(_legacy(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                                               "clientInfo": {"name": "t", "version": "0"}}))
    assert reply["result"]["protocolVersion"] == "2025-11-25"
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@pytest.mark.slow
def test_declared_inputs_legacy_session_sends_real_requests(features: StdioPeer) -> None:
    _initialize(features)
    features.send(_legacy(1, "tools/call", {"name": "signup", "arguments": {"email_domain": "example.org"}}))
    asked = [features.recv(), features.recv()]
    assert sorted(a["method"] for a in asked) == ["elicitation/create", "elicitation/create"]
    for a in asked:
        message = a["params"]["message"]
        content = {"value": "Grace"} if message == "What is your name?" else {"name": "Grace", "age": 85, "plan": "pro"}
        features.send({"jsonrpc": "2.0", "id": a["id"], "result": _accept(content)})
    assert text_of(features.recv()) == "Grace <grace@example.org>, 85, run 1"


@pytest.mark.slow
def test_a_declined_required_input_is_a_tool_error_and_the_body_does_not_run(features: StdioPeer) -> None:
    first = features.ask(call(1, "signup", {"email_domain": "x.org"}, **ELICIT_META))["result"]
    params = {
        "name": "signup",
        "arguments": {"email_domain": "x.org"},
        "requestState": first["requestState"],
        "inputResponses": {"name": {"action": "decline"}, "person": {"action": "cancel"}},
    }
    result = features.ask(request(2, "tools/call", params, meta=ELICIT_META))["result"]
    assert result["isError"] is True and "'name'" in result["content"][0]["text"] and "decline" in result["content"][0]["text"]
    assert text_of(features.ask(call(3, "count", {"name": "signup"}))) == "0"


# -- 4. typed elicitation ---------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (_accept({"name": "Ada", "age": 36, "plan": "pro"}), "Ada is 36 on pro"),
        (_accept({"name": "Ada", "age": 36}), "Ada is 36 on free"),
        ({"action": "decline"}, "no profile (decline)"),
        ({"action": "cancel"}, "no profile (cancel)"),
    ],
)
def test_typed_elicitation(features: StdioPeer, response: dict[str, Any], expected: str) -> None:
    first = features.ask(call(1, "profile", **ELICIT_META))["result"]
    assert first["inputRequests"]["input-1"]["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"},
        },
        "required": ["name", "age"],
    }
    params = {"name": "profile", "arguments": {}, "requestState": first["requestState"], "inputResponses": {"input-1": response}}
    assert text_of(features.ask(request(2, "tools/call", params, meta=ELICIT_META))) == expected


@pytest.mark.slow
def test_typed_elicitation_answer_that_breaks_the_form_is_invalid_params(features: StdioPeer) -> None:
    first = features.ask(call(1, "profile", **ELICIT_META))["result"]
    params = {"name": "profile", "arguments": {}, "requestState": first["requestState"],
              "inputResponses": {"input-1": _accept({"name": "Ada", "age": "old"})}}
    reply = features.ask(request(2, "tools/call", params, meta=ELICIT_META))
    assert reply["error"]["code"] == -32602 and "requested schema" in reply["error"]["message"]


# -- 7. error masking ------------------------------------------------------------------------


@pytest.mark.slow
def test_errors_are_masked_on_every_path(features: StdioPeer) -> None:
    crash = features.ask(call(1, "crash"))["result"]
    assert crash["isError"] is True
    assert crash["content"] == [
        {"type": "text", "text": "Error in tool 'crash': an internal error occurred (the details are in the server's log)"}
    ]
    assert text_of(features.ask(call(2, "refuse"))) == "The date must be in the future."
    secret = features.ask(request(3, "resources/read", {"uri": "features://secret"}))
    assert secret["error"] == {
        "code": -32603,
        "message": "Error in resource 'features://secret': an internal error occurred (the details are in the server's log)",
    }
    refused = features.ask(request(4, "prompts/get", {"name": "refusing_prompt"}))
    assert refused["error"] == {"code": -32603, "message": "This prompt is switched off."}
    code, _, stderr = features.finish()
    assert code == 0
    assert "hunter2@db.internal" in stderr and "permission denied" in stderr  # the full exceptions are logged


@pytest.mark.slow
def test_mask_errors_off_from_the_environment(spawn: Any) -> None:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", FEATURES), env={"WIREMCP_MASK_ERRORS": "false"})
    assert text_of(peer.ask(call(1, "crash"))) == (
        "Error in tool 'crash': RuntimeError: db connect failed: postgres://admin:hunter2@db.internal/prod"
    )
    assert peer.ask(request(2, "resources/read", {"uri": "features://secret"}))["error"]["message"] == (
        "Error in resource 'features://secret': RuntimeError: open /etc/hunter2: permission denied"
    )


# -- the FastMCP-style example ------------------------------------------------------------


@pytest.mark.slow
def test_fastmcp_style_example_runs_with_wiremcp_run(spawn: Any, tmp_path: Path) -> None:
    peer: StdioPeer = spawn(*wiremcp_cmd("run", "examples/fastmcp_style.py"), env={"NOTES_DB": str(tmp_path / "notes.db")})
    tools = {t["name"]: t for t in peer.ask(request(1, "tools/list"))["result"]["tools"]}
    assert {"add_note", "search_notes", "slow_report", "remind", "delete_all"} <= set(tools)
    assert "confirm" not in tools["delete_all"]["inputSchema"]["properties"]
    peer.send(call(2, "slow_report", {"seconds": 2}))  # sleeps in its worker thread
    peer.send(call(3, "add_note", {"title": "milk", "body": "buy oat milk", "tag": "shop"}))
    first, second = peer.recv(), peer.recv()
    assert (first["id"], text_of(first)) == (3, "saved note 1")  # not queued behind the sleeper
    assert (second["id"], text_of(second)) == (2, "report ready after 2 s")
    found = peer.ask(call(4, "search_notes", {"text": "oat"}))["result"]["structuredContent"]
    assert found == {"result": [{"id": 1, "title": "milk", "tag": "shop"}]}
    assert text_of(peer.ask(call(5, "add_note", {"title": " ", "body": ""}))) == "A note needs a title."
    asked = peer.ask(call(6, "remind", {"note_id": 1}, **ELICIT_META))["result"]
    schema = asked["inputRequests"]["input-1"]["params"]["requestedSchema"]
    assert schema["properties"]["channel"] == {"type": "string", "enum": ["email", "sms"], "default": "email"}
    retry = {"name": "remind", "arguments": {"note_id": 1}, "requestState": asked["requestState"],
             "inputResponses": {"input-1": _accept({"when": "9am", "channel": "sms"})}}
    assert text_of(peer.ask(request(7, "tools/call", retry, meta=ELICIT_META))) == "Reminder for note 1 by sms at 9am."
