"""Legacy (2025-11-25) clients over stdio, served by the same servers (issue: dual-era).

Spec: 2025-11-25 basic/lifecycle.mdx (initialize, version negotiation),
basic/utilities/ping.mdx, server/utilities/logging.mdx (logging/setLevel),
server/resources.mdx (subscribe), client/elicitation.mdx (server-initiated
requests); 2026-07-28 basic/versioning.mdx (dual-era servers).
"""

from __future__ import annotations

import pytest

from conftest import META, SERVERS, call, wiremcp_cmd

pytestmark = pytest.mark.slow


def legacy(id_, method, params=None):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(peer, version="2025-11-25", capabilities=None):
    reply = peer.ask(
        legacy(0, "initialize", {"protocolVersion": version, "capabilities": capabilities or {}, "clientInfo": {"name": "old", "version": "1"}})
    )
    peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return reply


@pytest.fixture
def sample(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "sample.py")))


@pytest.fixture
def rounds(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")))


def test_initialize_handshake(sample):
    reply = initialize(sample)
    result = reply["result"]
    assert reply["id"] == 0
    assert result["protocolVersion"] == "2025-11-25"
    assert result["serverInfo"] == {"name": "sample", "version": "9.9.9"}
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["capabilities"]["logging"] == {}
    sample.expect_nothing_more(legacy=True)  # notifications/initialized gets no reply


@pytest.mark.parametrize("asked, agreed", [("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"), ("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")])
def test_version_negotiation(sample, asked, agreed):
    """lifecycle.mdx, Version Negotiation: same version if supported, else our latest."""
    assert initialize(sample, asked)["result"]["protocolVersion"] == agreed


def test_requests_in_the_session_need_no_meta(sample):
    initialize(sample)
    tools = sample.ask(legacy(1, "tools/list"))["result"]["tools"]
    assert "echo" in [t["name"] for t in tools]
    reply = sample.ask(legacy(2, "tools/call", {"name": "echo", "arguments": {"text": "old times"}}))
    assert reply["result"]["content"] == [{"type": "text", "text": "old times"}]
    assert sample.ask(legacy(3, "ping"))["result"] == {}


def test_modern_methods_are_not_in_a_legacy_session(sample):
    initialize(sample)
    assert sample.ask(legacy(1, "server/discover"))["error"]["code"] == -32601
    assert sample.ask(legacy(2, "subscriptions/listen", {"notifications": {}}))["error"]["code"] == -32601


def test_initialize_twice_is_refused(sample):
    initialize(sample)
    reply = sample.ask(legacy(5, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    assert reply["id"] == 5 and reply["error"]["code"] == -32600


def test_malformed_initialize(sample):
    assert sample.ask(legacy(1, "initialize", {"capabilities": {}}))["error"]["code"] == -32602


def test_log_level_is_set_per_session(spawn):
    """logging.mdx: logging/setLevel, then notifications/message at or above that level (before it, the
    server's legacy_log_level: none here, with WIREMCP_LEGACY_LOG_LEVEL=off)."""
    sample = spawn(*wiremcp_cmd("run", str(SERVERS / "sample.py")), env={"WIREMCP_LEGACY_LOG_LEVEL": "off"})
    initialize(sample)
    assert sample.ask(legacy(1, "tools/call", {"name": "chatty", "arguments": {"level": "info"}}))["result"]["content"][0]["text"] == ""
    assert sample.ask(legacy(2, "logging/setLevel", {"level": "warning"}))["result"] == {}
    sample.send(legacy(3, "tools/call", {"name": "chatty", "arguments": {"level": "info"}}))
    notes = [sample.recv(), sample.recv()]
    assert [n["params"]["level"] for n in notes] == ["warning", "error"]
    assert sample.recv()["result"]["content"][0]["text"] == "warning,error"
    assert sample.ask(legacy(4, "logging/setLevel", {"level": "loud"}))["error"]["code"] == -32602


def test_legacy_session_logs_everything_before_set_level(sample):
    """Before logging/setLevel a session gets every level (legacy_log_level "debug", as official servers do)."""
    initialize(sample)
    sample.send(legacy(1, "tools/call", {"name": "chatty", "arguments": {"level": "info"}}))
    notes = [sample.recv() for _ in range(4)]
    assert [n["params"]["level"] for n in notes] == ["debug", "info", "warning", "error"]
    assert sample.recv()["result"]["content"][0]["text"] == "debug,info,warning,error"


def test_progress_in_a_legacy_session(sample):
    initialize(sample)
    sample.send(legacy(1, "tools/call", {"name": "steps", "arguments": {"count": 2}, "_meta": {"progressToken": 7}}))
    notes = [sample.recv(), sample.recv()]
    assert [n["params"]["progressToken"] for n in notes] == [7, 7]
    assert sample.recv()["id"] == 1


def test_subscribe_and_unsubscribe(rounds):
    initialize(rounds)
    assert rounds.ask(legacy(1, "resources/subscribe", {"uri": "file:///a"}))["result"] == {}
    rounds.send(legacy(2, "tools/call", {"name": "touch", "arguments": {"uri": "file:///a"}}))
    got = [rounds.recv(), rounds.recv()]
    assert {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}} in got
    assert rounds.ask(legacy(3, "resources/unsubscribe", {"uri": "file:///a"}))["result"] == {}
    assert rounds.ask(legacy(4, "tools/call", {"name": "touch", "arguments": {"uri": "file:///a"}}))["id"] == 4
    rounds.expect_nothing_more(legacy=True)  # no notifications/resources/updated after the unsubscribe


def test_list_changed_reaches_the_session(rounds):
    initialize(rounds)
    rounds.send(legacy(1, "tools/call", {"name": "change_tools", "arguments": {}}))
    got = [rounds.recv() for _ in range(3)]
    assert [m["method"] for m in got if "method" in m] == ["notifications/tools/list_changed"] * 2


def test_elicitation_is_a_real_request_to_the_client(rounds):
    """One handler, two eras: ctx.elicit sends elicitation/create and awaits the reply."""
    initialize(rounds, capabilities={"elicitation": {}})
    rounds.send(legacy(1, "tools/call", {"name": "greet", "arguments": {}}))
    asked = rounds.recv()
    assert asked["method"] == "elicitation/create" and "id" in asked
    assert asked["params"]["message"] == "What is your name?"
    rounds.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Eve"}}})
    assert rounds.recv()["result"]["content"][0]["text"] == "Hello, Eve!"


def test_sampling_and_roots_in_a_legacy_session(rounds):
    initialize(rounds, capabilities={"sampling": {}, "roots": {}})
    rounds.send(legacy(1, "tools/call", {"name": "capital", "arguments": {}}))
    asked = rounds.recv()
    assert asked["method"] == "sampling/createMessage" and asked["params"]["maxTokens"] == 100
    rounds.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}})
    assert rounds.recv()["result"]["content"][0]["text"] == "The model said: Paris"
    rounds.send(legacy(2, "tools/call", {"name": "count_roots", "arguments": {}}))
    asked = rounds.recv()
    assert asked["method"] == "roots/list"
    rounds.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [{"uri": "file:///x"}]}})
    assert rounds.recv()["result"]["content"][0]["text"] == "Client exposed 1 root(s)."


def test_client_error_reply_becomes_a_tool_error(rounds):
    initialize(rounds, capabilities={"elicitation": {}})
    rounds.send(legacy(1, "tools/call", {"name": "greet", "arguments": {}}))
    asked = rounds.recv()
    rounds.send({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "user closed the dialog"}})
    result = rounds.recv()["result"]
    assert result["isError"] is True and "user closed the dialog" in result["content"][0]["text"]


def test_missing_capability_in_a_legacy_session(rounds):
    initialize(rounds)
    reply = rounds.ask(legacy(1, "tools/call", {"name": "greet", "arguments": {}}))
    assert reply["error"]["code"] == -32021


def test_cancelling_the_call_cancels_the_servers_request(rounds):
    """2025-11-25 cancellation: the server tells the client its own request is no longer needed."""
    initialize(rounds, capabilities={"elicitation": {}})
    rounds.send(legacy(1, "tools/call", {"name": "greet", "arguments": {}}))
    asked = rounds.recv()
    rounds.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    note = rounds.recv()
    assert note["method"] == "notifications/cancelled" and note["params"]["requestId"] == asked["id"]
    rounds.expect_nothing_more(legacy=True)  # no reply to the cancelled call
    rounds.finish_quietly()  # not even once the input ends and what is in flight is drained


def test_a_modern_request_on_a_legacy_stream_is_served_statelessly(sample):
    """2026-07-28 versioning.mdx: a request carrying modern _meta is served per this revision."""
    initialize(sample)
    reply = sample.ask(call(1, "echo", {"text": "modern"}))
    assert reply["result"]["resultType"] == "complete"
    assert sample.ask({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": META}})["result"]["supportedVersions"] == ["2026-07-28"]


def test_legacy_support_can_be_turned_off(spawn):
    peer = spawn(*wiremcp_cmd("run", str(SERVERS / "modern_only.py")))
    reply = peer.ask(legacy(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    assert reply["error"]["code"] == -32601
    assert "2026-07-28" in reply["error"]["message"]
