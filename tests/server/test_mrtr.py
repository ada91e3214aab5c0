"""Multi round-trip requests, end to end over stdio (basic/patterns/mrtr.mdx).

Also the sealed requestState (protocol/state.py) in isolation.
"""

from __future__ import annotations

import pytest

from conftest import META, SERVERS, request, wiremcp_cmd
from wiremcp.jsonrpc import InvalidParams
from wiremcp.protocol.state import StateSealer, request_digest

ELICIT_CAPS = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
ALL_CAPS = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}}}


def tool_call(id_, name, arguments=None, meta=ALL_CAPS, **extra):
    params = {"name": name, "arguments": arguments or {}, **extra}
    return request(id_, "tools/call", params, meta=meta)


@pytest.fixture
def rounds(spawn):
    return spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")))


def first_round(peer, name="greet", meta=ALL_CAPS):
    reply = peer.ask(tool_call(1, name, meta=meta))
    result = reply["result"]
    assert result["resultType"] == "input_required", reply
    return result


@pytest.mark.slow
def test_elicitation_round_trip(rounds):
    """mrtr.mdx, Basic Workflow: input_required, then a retry with a new id completes."""
    result = first_round(rounds)
    assert result["inputRequests"] == {
        "user_name": {
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        }
    }
    assert isinstance(result["requestState"], str)
    assert "ttlMs" not in result  # caching.mdx: interim results carry no caching hints
    retry = tool_call(
        2, "greet", inputResponses={"user_name": {"action": "accept", "content": {"name": "Ada"}}}, requestState=result["requestState"]
    )
    final = rounds.ask(retry)
    assert final["id"] == 2
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]


@pytest.mark.slow
def test_retry_without_state_also_works_when_nothing_was_gathered(rounds):
    reply = rounds.ask(tool_call(2, "greet", inputResponses={"user_name": {"action": "decline"}}))
    assert reply["result"]["content"][0]["text"] == "No name given (decline)."


@pytest.mark.slow
def test_tampered_state_is_a_protocol_error(rounds):
    """mrtr.mdx, Server Requirements 4: reject state that fails verification."""
    state = first_round(rounds)["requestState"]
    answer = {"user_name": {"action": "accept", "content": {"name": "Ada"}}}
    for bad in (state + "-TAMPERED", "x" + state[1:], "not-a-state", ""):
        reply = rounds.ask(tool_call(3, "greet", inputResponses=answer, requestState=bad))
        assert reply["error"]["code"] == -32602, (bad, reply)
        assert "requestState" in reply["error"]["message"]


@pytest.mark.slow
def test_state_is_bound_to_its_request(rounds):
    """mrtr.mdx, Server Requirements 5: state presented on a different request is refused."""
    state = first_round(rounds, "two_step")["requestState"]
    reply = rounds.ask(tool_call(3, "greet", inputResponses={}, requestState=state))
    assert reply["error"]["code"] == -32602 and "different request" in reply["error"]["message"]


@pytest.mark.slow
def test_missing_capability_is_32021(rounds):
    """basic/index.mdx, _meta: a needed capability the client did not declare is -32021."""
    reply = rounds.ask(tool_call(1, "greet", meta=META))
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    reply = rounds.ask(tool_call(2, "capital", meta=ELICIT_CAPS))
    assert reply["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


@pytest.mark.slow
def test_only_declared_capabilities_are_asked(rounds):
    """mrtr.mdx, Server Requirements 7: no elicitation/create for a client without elicitation."""
    sampling_roots = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "roots": {}}}
    result = first_round(rounds, "everything_at_once", meta=sampling_roots)
    assert sorted(result["inputRequests"]) == ["client_roots", "greeting"]
    result = first_round(rounds, "everything_at_once")
    assert sorted(r["method"] for r in result["inputRequests"].values()) == [
        "elicitation/create",
        "roots/list",
        "sampling/createMessage",
    ]


@pytest.mark.slow
def test_missing_answer_is_asked_again_and_extra_keys_are_ignored(rounds):
    """mrtr.mdx, Error Handling."""
    state = first_round(rounds)["requestState"]
    reply = rounds.ask(tool_call(2, "greet", inputResponses={"wrong_key": {"action": "accept"}}, requestState=state))
    assert reply["result"]["resultType"] == "input_required"
    assert list(reply["result"]["inputRequests"]) == ["user_name"]
    answers = {"user_name": {"action": "accept", "content": {"name": "Bo"}}, "unrelated": 1}
    reply = rounds.ask(tool_call(3, "greet", inputResponses=answers, requestState=state))
    assert reply["result"]["content"][0]["text"] == "Hello, Bo!"


@pytest.mark.slow
@pytest.mark.parametrize(
    "responses",
    [
        {"user_name": 12345},
        {"user_name": {"action": "maybe"}},
        {"user_name": {"action": "accept", "content": {"name": 7}}},
        {"user_name": {"action": "accept", "content": {}}},
        [1, 2],
    ],
)
def test_malformed_answers_are_refused(rounds, responses):
    reply = rounds.ask(tool_call(2, "greet", inputResponses=responses))
    assert reply["error"]["code"] == -32602, reply


@pytest.mark.slow
def test_null_input_responses_are_no_answers(rounds):
    assert rounds.ask(tool_call(2, "greet", inputResponses=None))["result"]["resultType"] == "input_required"


@pytest.mark.slow
def test_multi_round_carries_earlier_answers_in_the_state(rounds):
    r1 = first_round(rounds, "two_step")
    assert list(r1["inputRequests"]) == ["step1"]
    reply = rounds.ask(
        tool_call(2, "two_step", inputResponses={"step1": {"action": "accept", "content": {"name": "Cy"}}}, requestState=r1["requestState"])
    )
    r2 = reply["result"]
    assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["step2"]
    assert r2["requestState"] != r1["requestState"]
    reply = rounds.ask(
        tool_call(3, "two_step", inputResponses={"step2": {"action": "accept", "content": {"color": "teal"}}}, requestState=r2["requestState"])
    )
    assert reply["result"]["content"][0]["text"] == "Cy likes teal"


@pytest.mark.slow
def test_sampling_and_roots(rounds):
    r = first_round(rounds, "capital")
    req = r["inputRequests"]["capital_question"]
    assert req["method"] == "sampling/createMessage" and req["params"]["maxTokens"] == 100
    answer = {"capital_question": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"}}
    done = rounds.ask(tool_call(2, "capital", inputResponses=answer, requestState=r["requestState"]))
    assert done["result"]["content"][0]["text"] == "The model said: Paris"
    r = first_round(rounds, "count_roots")
    assert r["inputRequests"]["client_roots"] == {"method": "roots/list", "params": {}}
    answer = {"client_roots": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}}
    done = rounds.ask(tool_call(3, "count_roots", inputResponses=answer, requestState=r["requestState"]))
    assert done["result"]["content"][0]["text"] == "Client exposed 2 root(s)."


@pytest.mark.slow
def test_a_shared_key_lets_another_instance_serve_the_retry(spawn):
    """docs/architecture.md, Scale-out: state sealed by one instance opens on another with the same key."""
    env = {"WIREMCP_STATE_KEY": "k" * 32}
    a = spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")), env=env)
    b = spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")), env=env)
    c = spawn(*wiremcp_cmd("run", str(SERVERS / "rounds.py")), env={"WIREMCP_STATE_KEY": "other" * 8})
    state = first_round(a)["requestState"]
    answer = {"user_name": {"action": "accept", "content": {"name": "Di"}}}
    assert b.ask(tool_call(2, "greet", inputResponses=answer, requestState=state))["result"]["content"][0]["text"] == "Hello, Di!"
    assert c.ask(tool_call(2, "greet", inputResponses=answer, requestState=state))["error"]["code"] == -32602


@pytest.mark.slow
def test_list_methods_never_answer_input_required(rounds):
    """mrtr.mdx, Supported Requests: only tools/call, prompts/get, resources/read."""
    reply = rounds.ask(request(1, "tools/list", {"inputResponses": {"x": {}}, "requestState": "junk"}, meta=ALL_CAPS))
    assert reply["result"]["resultType"] == "complete"


# -- the sealer in isolation ---------------------------------------------------


def test_sealer_round_trip_and_rejections():
    now = [1000.0]
    sealer = StateSealer(["a" * 32], ttl=60, clock=lambda: now[0])
    digest = request_digest("tools/call", ["greet", {}])
    state = sealer.seal(digest, {"k": 1})
    assert sealer.open(state, digest) == {"k": 1}
    with pytest.raises(InvalidParams, match="different request"):
        sealer.open(state, request_digest("tools/call", ["greet", {"x": 1}]))
    with pytest.raises(InvalidParams, match="principal"):
        sealer.open(state, digest, principal="mallory")
    with pytest.raises(InvalidParams, match="must be a string"):
        sealer.open(5, digest)
    now[0] += 61
    with pytest.raises(InvalidParams, match="expired"):
        sealer.open(state, digest)


def test_sealer_key_rotation():
    old = StateSealer(["old" * 8])
    both = StateSealer(["new" * 8, "old" * 8])
    digest = request_digest("prompts/get", ["p", {}])
    assert both.open(old.seal(digest, [1]), digest) == [1]
    with pytest.raises(InvalidParams, match="verification"):
        StateSealer(["new" * 8]).open(old.seal(digest, [1]), digest)


def test_sealer_refuses_short_keys():
    with pytest.raises(ValueError):
        StateSealer([b"short"])


def test_digest_ignores_key_order():
    assert request_digest("tools/call", ["t", {"a": 1, "b": 2}]) == request_digest("tools/call", ["t", {"b": 2, "a": 1}])
