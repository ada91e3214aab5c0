"""subscriptions/listen over stdio (basic/patterns/subscriptions.mdx)."""

from __future__ import annotations

import pytest

from conftest import META, SERVERS, call, request, wiremcp_cmd

pytestmark = pytest.mark.slow

SUB_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture
def rounds(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")))


def listen(id_, **notifications):
    return request(id_, "subscriptions/listen", {"notifications": notifications})


def test_discover_advertises_list_changed(rounds):
    caps = rounds.ask(request(1, "server/discover"))["result"]["capabilities"]
    assert caps["tools"] == {"listChanged": True}


def test_acknowledgement_comes_first_with_the_subscription_id(rounds):
    """subscriptions.mdx, Acknowledgment."""
    ack = rounds.ask(listen("sub-1", toolsListChanged=True, unknownKind=True))
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB_ID: "sub-1"}, "notifications": {"toolsListChanged": True}},
    }


def test_tool_list_changes_reach_matching_streams_only(rounds):
    """subscriptions.mdx, Receiving Notifications; FIXTURES.md: a prompts-only stream gets no tool changes."""
    assert rounds.ask(listen(10, toolsListChanged=True))["params"]["_meta"][SUB_ID] == 10
    assert rounds.ask(listen(11, promptsListChanged=True))["params"]["_meta"][SUB_ID] == 11
    rounds.send(call(12, "change_tools"))
    messages = [rounds.recv() for _ in range(3)]  # two changes (add, remove) and the tool's result
    notes = [m for m in messages if m.get("method")]
    assert [n["method"] for n in notes] == ["notifications/tools/list_changed"] * 2
    assert all(n["params"]["_meta"] == {SUB_ID: 10} for n in notes)
    assert [m["id"] for m in messages if "id" in m] == [12]
    rounds.expect_nothing_more()


def test_resource_updates_for_subscribed_uris(rounds):
    rounds.ask(listen("r", resourceSubscriptions=["file:///a.txt"]))
    rounds.send(call(1, "touch", {"uri": "file:///other.txt"}))
    assert rounds.recv()["id"] == 1
    rounds.send(call(2, "touch", {"uri": "file:///a.txt"}))
    # The stream and the call's reply are independent: either may come first.
    first, second = rounds.recv(), rounds.recv()
    note, reply = (first, second) if "method" in first else (second, first)
    assert reply["id"] == 2
    assert note == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"_meta": {SUB_ID: "r"}, "uri": "file:///a.txt"},
    }


def test_cancelling_a_subscription_ends_it_without_a_reply(rounds):
    """subscriptions.mdx, Cancellation (stdio): notifications/cancelled with the listen id."""
    rounds.ask(listen(5, toolsListChanged=True))
    rounds.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
    rounds.send(call(6, "change_tools"))
    assert rounds.recv()["id"] == 6
    rounds.expect_nothing_more()


def test_end_of_input_closes_open_subscriptions(rounds):
    rounds.ask(listen(5, toolsListChanged=True))
    code, rest, _ = rounds.finish()
    assert code == 0 and rest == b""


@pytest.mark.parametrize(
    "params",
    [{}, {"notifications": []}, {"notifications": {"toolsListChanged": "yes"}}, {"notifications": {"resourceSubscriptions": "file:///a"}}],
)
def test_malformed_filter_is_invalid_params(rounds, params):
    reply = rounds.ask(request(1, "subscriptions/listen", params))
    assert reply["error"]["code"] == -32602


def test_listen_needs_meta_like_any_request(rounds):
    reply = rounds.ask({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"notifications": {}}})
    assert reply["error"]["code"] == -32602


def test_graceful_close_sends_the_complete_result():
    """subscriptions.mdx, Graceful Closure: a complete result carrying the subscription id."""
    import asyncio

    from wiremcp import Server
    from wiremcp.jsonrpc import Request

    async def scenario():
        server = Server("s")
        sent = []
        pending = server.handle(
            Request(7, "subscriptions/listen", {"_meta": META, "notifications": {"toolsListChanged": True}}),
            lambda method, params: sent.append((method, params)),
        )
        task = asyncio.ensure_future(pending)
        await asyncio.sleep(0)
        server.add_tool(lambda: "x", name="x")
        await asyncio.sleep(0)
        server.close_subscriptions()
        result = await asyncio.wait_for(task, 1)
        return sent, result

    sent, result = asyncio.run(scenario())
    assert [m for m, _ in sent] == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"]
    assert result == {"resultType": "complete", "_meta": {SUB_ID: 7}}
