"""Tests written to kill mutants of the client core that survived (``tests/mutation/run.py client``).

Each test pins a rule of src/wiremcp/client/_cache.py, _eras.py, _mrtr.py or
_protocol.py that no test of the in-process subset checked exactly: a
boundary, a refusal and its message, a default, the params of a legacy
request. docs/testing-hardening.md lists the survivors and which these kill.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

import wiremcp
from wiremcp.client import CallOptions, ClientProtocol, ConnectionClosed, EraCache, IncompatibleServer, ProtocolViolation, RemoteError, events
from wiremcp.client._cache import ResultCache
from wiremcp.client._eras import Initialize, Negotiation, Probe, Ready
from wiremcp.client._mrtr import InputRequest, MultiRoundCall, check_complete
from wiremcp.protocol import Era

ALL = "2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"


# -- _cache -----------------------------------------------------------------------------------


def test_cache_keys_drop_only_meta_and_accept_no_params() -> None:
    cache = ResultCache()  # enabled by default
    assert cache.put("tools/list", None, {"ttlMs": 1000, "tools": []}, now=0.0) is True
    assert cache.get("tools/list", None, now=0.5) == {"ttlMs": 1000, "tools": []}
    assert cache.get("tools/list", {}, now=0.5) == {"ttlMs": 1000, "tools": []}  # no params is {}
    a = {"ttlMs": 1000, "contents": ["a"]}
    assert cache.put("resources/read", {"uri": "file:///a", "_meta": {"x": 1}}, a, now=0.0)
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.5) is a
    assert cache.get("resources/read", {"uri": "file:///b", "_meta": {"x": 1}}, now=0.5) is None


def test_cache_ttl_boundaries() -> None:
    """caching.mdx: kept for exactly ttlMs milliseconds; 1 ms is a positive ttlMs; 0 is not kept."""
    cache = ResultCache()
    assert cache.put("prompts/list", {"n": 1}, {"ttlMs": 1}, now=10.0) is True
    assert cache.get("prompts/list", {"n": 1}, now=10.0009) == {"ttlMs": 1}
    assert cache.get("prompts/list", {"n": 1}, now=10.001) is None
    assert cache.put("prompts/list", {"n": 2}, {"ttlMs": 1000}, now=0.0) is True
    assert cache.get("prompts/list", {"n": 2}, now=0.9999) == {"ttlMs": 1000}
    assert cache.get("prompts/list", {"n": 2}, now=1.0) is None
    assert cache.put("prompts/list", {"n": 3}, {"ttlMs": 0}, now=0.0) is False
    assert ResultCache(False).put("prompts/list", None, {"ttlMs": 1000}, now=0.0) is False


def test_cache_resources_updated_drops_only_its_uri() -> None:
    cache = ResultCache()
    cache.put("resources/read", {"uri": "file:///a"}, {"ttlMs": 1000}, now=0.0)
    cache.notified("notifications/message", {"uri": "file:///a"})  # not resources/updated: nothing stale
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.1) == {"ttlMs": 1000}
    cache.notified("notifications/resources/updated", {"uri": "file:///never-read"})  # nothing cached: no error
    cache.notified("notifications/resources/updated", {"uri": "file:///a"})
    assert cache.get("resources/read", {"uri": "file:///a"}, now=0.1) is None


# -- _eras ------------------------------------------------------------------------------------


def test_era_cache_forgets_one_server_or_all() -> None:
    eras = EraCache()
    eras.remember("a", Era.MODERN, "2026-07-28")
    eras.remember("b", Era.LEGACY, "2025-11-25")
    assert list(eras) == ["a", "b"]
    eras.forget("a")
    assert eras.get("a") is None and eras.get("b") == (Era.LEGACY, "2025-11-25") and len(eras) == 1
    eras.forget("not known")
    assert len(eras) == 1
    eras.forget()
    assert len(eras) == 0 and list(eras) == []


def test_negotiation_first_steps() -> None:
    assert Negotiation("modern").first() == Ready(Era.MODERN, "2026-07-28")
    assert Negotiation("legacy").first() == Initialize("2025-11-25")
    assert Negotiation("auto").first() == Probe("2026-07-28")
    assert Negotiation("auto", cached=(Era.LEGACY, "2025-06-18")).first() == Initialize()
    assert Negotiation("auto", cached=(Era.MODERN, "2026-07-28")).first() == Ready(Era.MODERN, "2026-07-28")
    assert Negotiation("auto").silent() == Initialize()  # stdio's binding is the default
    assert Negotiation("auto", silence_means_legacy=False).silent() is None
    with pytest.raises(ValueError, match="^era must be 'auto', 'modern' or 'legacy'$"):
        Negotiation("AUTO")  # type: ignore[arg-type]  # the refusal is the point
    with pytest.raises(ValueError, match="^protocol_version must be one of 2026-07-28$"):
        Negotiation("auto", "2025-11-25")


def test_negotiation_reads_supported_versions_strictly() -> None:
    """A supportedVersions that is not a list names no version (a string is not searched for substrings)."""
    with pytest.raises(IncompatibleServer, match=f"^the server supports no versions; this client speaks {ALL}$"):
        Negotiation("auto").discovered({"supportedVersions": "2026-07-28"})
    with pytest.raises(IncompatibleServer, match=f"^the server supports 1999-01-01, 7; this client speaks {ALL}$"):
        Negotiation("auto").discovered({"supportedVersions": ["1999-01-01", 7]})
    assert Negotiation("auto").discovered({"supportedVersions": ["2025-11-25"]}) == Initialize()


def test_negotiation_after_a_version_retry_keeps_the_version() -> None:
    n = Negotiation("auto")
    assert n.refused(-32022, "unsupported", {"supported": ["2026-07-28"]}) == Probe("2026-07-28")
    assert n.refused(-32020, "missing header", None) == Ready(Era.MODERN, "2026-07-28")
    # -32022 whose data is not an object names nothing: incompatible, not a crash
    with pytest.raises(IncompatibleServer):
        Negotiation("auto").refused(-32022, "unsupported", ["2026-07-28"])


@pytest.mark.parametrize("status, step", [(399, None), (400, Initialize()), (499, Initialize()), (500, None), (501, None)])
def test_negotiation_http_statuses(status: int, step: Any) -> None:
    """streamable-http.mdx, Backward Compatibility: a 4xx means legacy; a 5xx is no answer."""
    assert Negotiation("auto").http_refused(status) == step


# -- _mrtr ------------------------------------------------------------------------------------


def _call(params: dict[str, Any] | None = None, declared: frozenset[str] = frozenset({"elicitation"})) -> MultiRoundCall:
    return MultiRoundCall("tools/call", params, max_rounds=3, modern=True, declared=declared)


def test_mrtr_refusals_say_what_is_wrong() -> None:
    with pytest.raises(ProtocolViolation, match="^tools/list returned resultType 'input_required', which is not valid for this request$"):
        check_complete("tools/list", {"resultType": "input_required"})
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "an InputRequiredResult must carry inputRequests or requestState"),
        ({"inputRequests": []}, "inputRequests must be an object"),
        ({"requestState": 5}, "requestState must be a string"),
        ({"inputRequests": {"a": {"method": "sampling/createMessage"}}},
         "the server asked for 'sampling/createMessage', which this client did not declare (configure sampling on the Client)"),
        ({"inputRequests": {"a": {"method": "tools/list"}}},
         "the server asked for 'tools/list', which this client did not declare (configure a callback on the Client)"),
    ]
    for extra, message in cases:
        with pytest.raises(ProtocolViolation) as caught:
            _call().receive({"resultType": "input_required", **extra})
        assert str(caught.value) == message


def test_mrtr_rounds_and_responses() -> None:
    call = _call(None)
    with pytest.raises(RuntimeError, match=r"^respond\(\) before receive\(\) asked for input$"):
        call.respond({})
    round_ = call.receive({"resultType": "input_required", "requestState": "s1",
                           "inputRequests": {"b": {"method": "elicitation/create", "params": "junk"},
                                             "a": {"method": "elicitation/create", "params": {"message": "?"}}}})
    assert round_ is not None
    assert round_.requests == (InputRequest("b", "elicitation/create", "elicitation", {}),
                               InputRequest("a", "elicitation/create", "elicitation", {"message": "?"}))
    with pytest.raises(ValueError, match="^no response for input request\\(s\\) b, a$"):
        call.respond({})
    # the failed respond() used the round up: it cannot be answered twice
    with pytest.raises(RuntimeError):
        call.respond({"a": 1, "b": 2})
    round_ = call.receive({"resultType": "input_required", "requestState": "s2"})
    assert call.respond({}) == {"requestState": "s2"}  # no original params: only what the round adds
    with pytest.raises(RuntimeError):
        call.respond({})


# -- _protocol --------------------------------------------------------------------------------


def test_protocol_options_are_checked() -> None:
    assert ClientProtocol(max_input_rounds=0).max_input_rounds == 0
    with pytest.raises(ValueError, match="^max_input_rounds must not be negative$"):
        ClientProtocol(max_input_rounds=-1)
    with pytest.raises(ValueError, match="^protocol_version must be one of"):
        ClientProtocol(protocol_version="2025-11-25")
    with pytest.raises(ValueError, match="^era must be"):
        ClientProtocol(era="AUTO")  # type: ignore[arg-type]  # the refusal is the point
    proto: ClientProtocol[str] = ClientProtocol()
    assert proto.client_info == {"name": "wiremcp", "version": wiremcp.__version__}
    assert proto.start() == Probe("2026-07-28")  # era "auto" by default


def _sent(data: bytes) -> dict[str, Any]:
    message: dict[str, Any] = orjson.loads(data)
    return message


def test_a_legacy_request_carries_its_params_unchanged() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="legacy")
    assert proto.start() == Initialize()
    proto.initialized({"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})
    assert proto.era is Era.LEGACY and proto.protocol_version == "2025-06-18"
    out = proto.request("tools/call", {"name": "echo", "arguments": {"text": "x"}}, "T")
    assert out.method == "tools/call"
    assert _sent(out.data) == {"jsonrpc": "2.0", "id": out.id, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"text": "x"}}}
    assert _sent(proto.notification("notifications/roots/list_changed", {"a": 1})) == {
        "jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {"a": 1}}


def test_a_version_retry_switches_the_meta() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="modern", server_key="k")
    proto.start()
    assert proto.version_refused(RemoteError({"code": -32022, "message": "unsupported", "data": {"supported": ["2026-07-28"]}})) is True
    assert proto.protocol_version == "2026-07-28"
    out = proto.request("tools/list", None, "T")
    assert _sent(out.data)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_tool_headers_are_mirrored_only_for_tools_call() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="modern", mirrors_headers=True)
    proto.start()
    schema = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}
    proto.accept_tools({"tools": [{"name": "p", "inputSchema": schema}]}, first_page=True)
    out = proto.request("prompts/get", {"name": "p", "arguments": {"r": "eu"}}, "T")
    assert out.headers is not None and "Mcp-Param-Region" not in out.headers


def test_accept_tools_skips_junk_and_keeps_going() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="modern", mirrors_headers=True)
    proto.start()
    good = {"name": "good", "inputSchema": {"type": "object"}}
    bad = {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}}
    raw = {"tools": ["junk", {"name": 5}, bad, good]}
    kept = proto.accept_tools(raw, first_page=True)
    assert kept["tools"] == [good] and proto.tool_definitions == {"good": good}
    plain: ClientProtocol[str] = ClientProtocol(era="modern")
    plain.start()
    raw = {"tools": ["junk", good]}
    assert plain.accept_tools(raw, first_page=True) is raw  # nothing dropped: the page as it came
    assert plain.tool_definitions == {"good": good}
    assert plain.accept_tools({"tools": 5}, first_page=True) == {"tools": 5}
    assert plain.tool_definitions == {}


def test_connection_lost_says_why() -> None:
    proto: ClientProtocol[str] = ClientProtocol(era="modern")
    proto.start()
    proto.request("tools/list", None, "T")
    (failed,) = proto.connection_lost()
    assert type(failed) is events.Failed and type(failed.error) is ConnectionClosed
    assert str(failed.error) == "the server closed the connection"
    other: ClientProtocol[str] = ClientProtocol(era="modern")
    other.start()
    other.request("tools/list", None, "T")
    (failed,) = other.connection_lost(OSError("pipe broke"))
    assert type(failed) is events.Failed and type(failed.error) is ConnectionClosed and str(failed.error) == "pipe broke"
    with pytest.raises(ConnectionClosed, match=re.escape("pipe broke")):
        other.request("tools/list", None, "T")


def _left_behind(proto: ClientProtocol[str]) -> tuple[int, int, int]:
    """What the protocol still keeps per request: pending entries, log routes, subscriptions."""
    return proto.in_flight, len(proto._log_calls), len(proto._subscriptions)


@pytest.mark.parametrize("end", ["forget", "cancel", "expire", "failed", "malformed reply"])
def test_every_way_a_request_ends_drops_its_bookkeeping(end: str) -> None:
    """A request with a log route and a listen: however each ends, nothing of either stays behind."""
    proto: ClientProtocol[str] = ClientProtocol(era="modern")
    proto.start()
    logged = proto.request("tools/call", {"name": "x"}, "L", CallOptions(on_log=lambda _: None), deadline=5.0)
    listen = proto.listen({"toolsListChanged": True}, "S")
    proto.request("tools/list", None, "keep")  # another request, left alone
    assert _left_behind(proto) == (3, 1, 1)
    for out in (logged, listen):
        if end == "forget":
            proto.forget(out.id)
        elif end == "cancel":
            proto.cancel(out.id, "user")
        elif end == "failed":
            assert len(proto.request_failed(out.id, OSError("write failed"))) == 1
        elif end == "malformed reply":
            (failed,) = proto.receive(orjson.dumps({"jsonrpc": "2.0", "id": out.id, "result": 5}))
            assert type(failed) is events.Failed and type(failed.error) is ProtocolViolation
            assert str(failed.error).startswith(f"the reply to {out.method} is malformed: ")
    if end == "expire":
        timed_out = [e for e in proto.expire(6.0) if type(e) is events.Failed]
        assert [str(e.error) for e in timed_out] == [f"no reply to tools/call (id {logged.id}) in time; the request was cancelled"]
        proto.cancel(listen.id, "user")
    assert _left_behind(proto) == (1, 0, 0)


# -- _protocol: which error answers a request over HTTP --------------------------------------------


def make() -> ClientProtocol[str]:
    """A protocol object of the modern era, past its era decision."""
    proto: ClientProtocol[str] = ClientProtocol(era="modern", client_info={"name": "t", "version": "1"})
    proto.start()
    return proto


def _reply(id: Any, value: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": value or {}})


def _error(id: Any, code: int = -32600, message: str = "no") -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "error": {"code": code, "message": message}}
    if id is not None:
        msg["id"] = id
    return orjson.dumps(msg)


def test_an_error_for_no_request_that_came_with_an_http_error_status_answers_the_request_of_that_post() -> None:
    """official mcp 1.x answers a POST it refuses with 400 and id "server-error": that POST's request fails."""
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "X")
    failed = proto.receive(_error("server-error", -32600, "no session"), origin=out.id, status=400)
    assert len(failed) == 1 and type(failed[0]) is events.Failed and failed[0].tag == "X"
    assert failed[0].error.http_status == 400 and proto.in_flight == 0


def test_an_error_for_no_request_without_an_http_error_status_answers_nothing() -> None:
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "X")
    assert proto.receive(_error("someone-else"), origin=out.id) == []
    assert proto.in_flight == 1


def test_an_error_without_an_id_on_a_requests_own_event_stream_answers_it() -> None:
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "X")
    failed = proto.receive(_error(None, -32603, "broken"), origin=out.id)  # an SSE event: no HTTP error status
    assert len(failed) == 1 and type(failed[0]) is events.Failed and failed[0].tag == "X"
    assert failed[0].error.code == -32603 and proto.in_flight == 0


def test_a_result_that_came_with_an_http_status_settles_its_request() -> None:
    proto = make()
    out = proto.request("tools/list", None, "T")
    settled = proto.receive(_reply(out.id, {"tools": []}), origin=out.id, status=200)
    assert len(settled) == 1 and type(settled[0]) is events.Settled and settled[0].tag == "T"


# -- _protocol: routing notifications to subscriptions -------------------------------------------------

_SUB_ID = "io.modelcontextprotocol/subscriptionId"


def _note(method: str, params: dict[str, Any]) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})


def _acknowledged(proto: ClientProtocol[str], id: Any) -> None:
    ack = {"notifications": {"toolsListChanged": True}, "_meta": {_SUB_ID: id}}
    assert len(proto.receive(_note("notifications/subscriptions/acknowledged", ack))) == 1


def test_a_notification_naming_its_subscription_goes_to_it_whatever_stream_carried_it() -> None:
    proto = make()
    a = proto.listen({"toolsListChanged": True}, "A")
    b = proto.listen({"toolsListChanged": True}, "B")
    _acknowledged(proto, a.id)
    _acknowledged(proto, b.id)
    for_b = {"_meta": {_SUB_ID: b.id}}
    assert proto.receive(_note("notifications/tools/list_changed", for_b), origin=a.id) == [
        events.SubscriptionNote("B", "notifications/tools/list_changed", for_b)]
    # no subscription named, and a stream that is no subscription's: nobody's
    out = proto.request("tools/call", {"name": "x"}, "CALL")
    unclaimed = proto.receive(_note("notifications/tools/list_changed", {}), origin=out.id)
    assert len(unclaimed) == 1 and type(unclaimed[0]) is events.Notified


def test_a_cancellation_of_a_request_that_is_no_subscription_ends_no_subscription() -> None:
    proto = make()
    proto.listen({"toolsListChanged": True}, "SUB")
    out = proto.request("tools/call", {"name": "x"}, "CALL")
    got = proto.receive(_note("notifications/cancelled", {"requestId": out.id}))
    assert len(got) == 1 and type(got[0]) is events.Notified
    assert proto.in_flight == 2
