"""The sans-I/O client core, driven with plain messages only: no event loop, no transport, no clock.

Spec: basic/index.mdx (Requests, Responses, _meta, ResultType),
basic/patterns/cancellation.mdx, basic/versioning.mdx (Backward
Compatibility), basic/transports/stdio.mdx and streamable-http.mdx (Backward
Compatibility), 2025-11-25 basic/lifecycle.mdx (Initialization),
basic/patterns/mrtr.mdx, basic/patterns/progress.mdx,
server/utilities/logging.mdx, basic/patterns/subscriptions.mdx,
server/utilities/caching.mdx.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import orjson
import pytest

from wiremcp.client import CallOptions, ClientProtocol, EraCache, events
from wiremcp.client._eras import EraChoice, Initialize, Probe, Ready
from wiremcp.client import ConnectionClosed, IncompatibleServer, ProtocolViolation, RemoteError, RequestTimeout
from wiremcp.protocol import Era

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
KEY = ("test", "server")


def make(era: EraChoice = "modern", **options: Any) -> ClientProtocol[str]:
    """A protocol object already past the era decision (``era`` forced), unless told otherwise."""
    options.setdefault("client_info", {"name": "t", "version": "1"})
    options.setdefault("server_key", KEY)
    proto: ClientProtocol[str] = ClientProtocol(era=era, **options)
    if era != "auto":
        step = proto.start()
        if type(step) is Initialize:
            proto.initialized({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})
    return proto


E = TypeVar("E")


def one(out: list[Any], kind: type[E]) -> E:
    """The single event of ``out``, which must be a ``kind``."""
    assert len(out) == 1, out
    return the(out[0], kind)


def the(event: Any, kind: type[E]) -> E:
    assert type(event) is kind, event
    return event


def sent(data: bytes | None) -> dict[str, Any]:
    assert data is not None
    loaded: dict[str, Any] = orjson.loads(data)
    return loaded


def result(id: Any, value: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": value if value is not None else {}})


def error(id: Any, code: int, message: str = "no", data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    msg: dict[str, Any] = {"jsonrpc": "2.0", "error": err}
    if id is not None:
        msg["id"] = id
    return orjson.dumps(msg)


def note(method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return orjson.dumps(msg)


def server_request(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


# -- correlation -------------------------------------------------------------------------


def test_replies_in_any_order_settle_their_own_requests() -> None:
    """basic/index.mdx, Requests: many in flight, each reply matched by id."""
    proto = make()
    a = proto.request("tools/call", {"name": "a"}, "A")
    b = proto.request("tools/call", {"name": "b"}, "B")
    c = proto.request("tools/list", None, "C")
    assert len({a.id, b.id, c.id}) == 3 and proto.in_flight == 3
    assert proto.receive(result(c.id, {"tools": []})) == [events.Settled("C", {"tools": []})]
    assert proto.receive(result(a.id, {"x": 1})) == [events.Settled("A", {"x": 1})]
    failed = one(proto.receive(error(b.id, -32602, "bad")), events.Failed)
    assert type(failed) is events.Failed and failed.tag == "B"
    assert isinstance(failed.error, RemoteError) and failed.error.code == -32602 and failed.error.method == "tools/call"
    assert proto.in_flight == 0


def test_unknown_and_duplicate_replies_are_dropped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    proto = make()
    out = proto.request("tools/list", None, "T")
    with caplog.at_level(logging.WARNING, "wiremcp.client"):
        assert proto.receive(result(999)) == []
        assert proto.receive(result(out.id)) == [events.Settled("T", {})]
        assert proto.receive(result(out.id)) == []  # a second reply to the same id
    assert [r.message for r in caplog.records] == [
        "ignored a reply for id 999, which is not in flight",
        f"ignored a reply for id {out.id}, which is not in flight",
    ]


def test_ids_are_not_reused_while_in_flight() -> None:
    proto = make()
    first = proto.request("tools/list", None, "1")
    assert type(first.id) is int
    proto.request("tools/list", None, "2", id=first.id + 1)
    third = proto.request("tools/list", None, "3")
    assert third.id not in (first.id, first.id + 1)


def test_timeout_fails_cancels_and_drops_the_late_reply() -> None:
    """cancellation.mdx: a timed-out request is cancelled on the wire; its late reply is ignored."""
    proto = make()
    slow = proto.request("tools/call", {"name": "slow"}, "S", deadline=10.0)
    fast = proto.request("tools/call", {"name": "fast"}, "F", deadline=20.0)
    assert proto.next_deadline() == 10.0
    assert proto.expire(9.999) == []
    expired = proto.expire(10.0)
    failed, cancel = the(expired[0], events.Failed), the(expired[1], events.Send)
    assert type(failed) is events.Failed and failed.tag == "S" and isinstance(failed.error, RequestTimeout)
    assert type(cancel) is events.Send
    assert sent(cancel.data) == {
        "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow.id, "reason": "timed out"},
    }
    assert proto.next_deadline() == 20.0
    assert proto.receive(result(slow.id)) == []  # late: dropped, not an unknown id
    assert proto.receive(result(fast.id)) == [events.Settled("F", {})]
    assert proto.next_deadline() is None


def test_cancel_then_late_reply() -> None:
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "X")
    cancel = one(proto.cancel(out.id, "the caller cancelled the request"), events.Send)
    assert sent(cancel.data)["params"] == {"requestId": out.id, "reason": "the caller cancelled the request"}
    assert proto.cancel(out.id, "again") == []  # nothing left to cancel
    assert proto.receive(result(out.id)) == []


def test_http_cancellation_closes_the_stream_instead() -> None:
    """cancellation.mdx, Transport-Specific Cancellation: on HTTP nothing is sent; the stream is closed."""
    proto = make(cancel_by_notification=False)
    out = proto.request("tools/call", {"name": "x"}, "X", deadline=1.0)
    assert proto.cancel(out.id, "bye") == [events.Abandon(out.id)]
    other = proto.request("tools/call", {"name": "y"}, "Y", deadline=1.0)
    assert proto.expire(1.0)[1:] == [events.Abandon(other.id)]


def test_a_probe_that_times_out_is_not_cancelled() -> None:
    """A legacy server was never initialized: the probe's timeout sends no notifications/cancelled."""
    proto = make()
    proto.request("server/discover", {}, "P", deadline=1.0, cancel_on_timeout=False)
    failed = one(proto.expire(2.0), events.Failed)
    assert isinstance(failed.error, RequestTimeout)


def test_malformed_reply_fails_its_request() -> None:
    proto = make()
    out = proto.request("tools/list", None, "T")
    bad = orjson.dumps({"jsonrpc": "2.0", "id": out.id, "result": {}, "error": {"code": 1, "message": "x"}})
    failed = one(proto.receive(bad), events.Failed)
    assert failed.tag == "T" and isinstance(failed.error, ProtocolViolation)
    assert proto.in_flight == 0


def test_error_without_id_on_a_request_stream_answers_that_request() -> None:
    """HTTP: an error the server could not attach to an id, on a request's own stream, answers it."""
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "X")
    failed = one(proto.receive(error(None, -32700, "Parse error"), origin=out.id, status=400), events.Failed)
    assert failed.tag == "X" and isinstance(failed.error, RemoteError)
    assert failed.error.code == -32700 and failed.error.http_status == 400
    assert proto.receive(error(None, -32700, "Parse error")) == []  # on a shared stream: logged only


def test_request_failed_and_connection_lost() -> None:
    proto = make()
    a = proto.request("tools/call", {"name": "a"}, "A")
    proto.request("tools/call", {"name": "b"}, "B")
    boom = ConnectionClosed("HTTP stream ended")
    assert proto.request_failed(a.id, boom) == [events.Failed("A", boom)]
    assert proto.request_failed(a.id, boom) == []
    failed = one(proto.connection_lost(ConnectionClosed("the server exited")), events.Failed)
    assert failed.tag == "B" and str(failed.error) == "the server exited"
    with pytest.raises(ConnectionClosed, match="the server exited"):
        proto.request("tools/list", None, "C")
    with pytest.raises(ConnectionClosed):
        proto.notification("notifications/x")
    assert proto.connection_lost(None) == [] and str(proto.closed) == "the server exited"


def test_a_request_that_could_not_be_sent_is_forgotten() -> None:
    proto = make()
    out = proto.request("tools/list", None, "T", CallOptions(on_log=print))
    proto.forget(out.id)
    assert proto.in_flight == 0 and proto.receive(result(out.id)) == []


# -- _meta -------------------------------------------------------------------------------


def test_modern_requests_carry_meta() -> None:
    """basic/index.mdx, _meta: protocolVersion, clientCapabilities and clientInfo on every request."""
    proto = make(capabilities={"elicitation": {"form": {}}})
    out = proto.request("tools/call", {"name": "x", "arguments": {"a": 1}}, "X")
    msg = sent(out.data)
    assert msg["id"] == out.id and msg["method"] == "tools/call"
    assert msg["params"] == out.params == {
        "name": "x", "arguments": {"a": 1},
        "_meta": {PV: "2026-07-28", CAPS: {"elicitation": {"form": {}}}, INFO: {"name": "t", "version": "1"}},
    }
    assert sent(proto.request("tools/list", None, "L").data)["params"]["_meta"][PV] == "2026-07-28"


def test_call_options_add_progress_token_log_level_and_meta() -> None:
    proto = make()
    options = CallOptions(on_progress=lambda *a: None, on_log=print, meta={"traceparent": "00-x", PV: "1999-01-01"})
    out = proto.request("tools/call", {"name": "x"}, "X", options)
    meta = sent(out.data)["params"]["_meta"]
    assert meta["progressToken"] == out.id and meta[LOG_LEVEL] == "debug" and meta["traceparent"] == "00-x"
    assert meta[PV] == "2026-07-28"  # a caller's meta never replaces the protocol's own keys
    assert sent(proto.request("tools/call", {}, "Y", CallOptions(log_level="warning")).data)["params"]["_meta"][LOG_LEVEL] == "warning"
    with pytest.raises(ValueError):
        CallOptions(log_level="loud")


def test_call_options_build_and_deadline() -> None:
    base = CallOptions(timeout=5)
    assert CallOptions.build(base, {}) is base
    assert CallOptions.build(base, {"log_level": "info"}) == CallOptions(timeout=5, log_level="info")
    assert CallOptions.build(None, {"timeout": None}).deadline_after(100.0, 60.0) is None
    assert CallOptions().deadline_after(100.0, 60.0) == 160.0
    assert base.deadline_after(100.0, 60.0) == 105.0


def test_legacy_requests_carry_no_modern_meta() -> None:
    proto = make("legacy")
    assert proto.era is Era.LEGACY and proto.protocol_version == "2025-11-25"
    assert sent(proto.request("tools/list", None, "L").data)["params"] == {}
    out = proto.request("tools/call", {"name": "x"}, "X", CallOptions(on_progress=print, on_log=print))
    assert sent(out.data)["params"] == {"name": "x", "_meta": {"progressToken": out.id}}


def test_http_metadata_headers_and_invalid_tools_dropped() -> None:
    """streamable-http.mdx, Request Metadata and Custom Headers."""
    proto = make(mirrors_headers=True)
    tools = {"tools": [
        {"name": "ok", "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}}},
    ]}
    kept = proto.accept_tools(tools, first_page=True)
    assert [t["name"] for t in kept["tools"]] == ["ok"] and list(proto.tool_definitions) == ["ok"]
    out = proto.request("tools/call", {"name": "ok", "arguments": {"r": "eu"}}, "X")
    assert out.headers == {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ok", "Mcp-Param-Region": "eu"}
    assert make().request("tools/list", None, "L").headers is None


# -- the era decision ------------------------------------------------------------------------


DISCOVERED = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "ttlMs": 60000,
              "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}}


def test_probe_finds_a_modern_server() -> None:
    """versioning.mdx: a DiscoverResult means modern; the era is remembered and the result cached."""
    eras = EraCache()
    proto = make("auto", eras=eras)
    assert proto.start() == Probe("2026-07-28")
    assert proto.era is Era.MODERN  # the probe itself carries modern _meta
    step = proto.probe_answered(DISCOVERED, now=0.0)
    assert step == Ready(Era.MODERN, "2026-07-28", DISCOVERED)
    assert proto.server is not None and proto.server.server_info == {"name": "s", "version": "2"}
    assert eras.get(KEY) == (Era.MODERN, "2026-07-28")
    assert proto.cache.get("server/discover", {}, now=59.0) == DISCOVERED


@pytest.mark.parametrize("code", [-32601, -32600, -32602, -32603, -1])
def test_any_other_error_means_legacy(code: int) -> None:
    """stdio.mdx, Backward Compatibility: an error that is not a recognised modern one means legacy."""
    eras = EraCache()
    proto = make("auto", eras=eras)
    proto.start()
    assert proto.probe_refused(RemoteError({"code": code, "message": "nope"})) == Initialize("2025-11-25")
    assert proto.era is Era.LEGACY and eras.get(KEY) is None
    params = proto.initialize_params(Initialize())
    assert params == {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    done = proto.initialized({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}})
    assert sent(done) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert proto.server_key == KEY and eras.get(KEY) == (Era.LEGACY, "2025-11-25")
    assert proto.server is not None and proto.server.server_info == {"name": "old", "version": "1"}


@pytest.mark.parametrize("code", [-32020, -32021])
def test_modern_error_codes_do_not_fall_back(code: int) -> None:
    """versioning.mdx: a recognised modern error code proves a modern server."""
    proto = make("auto")
    proto.start()
    assert proto.probe_refused(RemoteError({"code": code, "message": "modern"})) == Ready(Era.MODERN, "2026-07-28")
    assert proto.era is Era.MODERN


def test_unsupported_version_retries_once_then_decides() -> None:
    proto = make("auto")
    proto.start()
    refused = RemoteError({"code": -32022, "message": "v", "data": {"supported": ["2026-07-28"], "requested": "x"}})
    assert proto.probe_refused(refused) == Probe("2026-07-28")
    with pytest.raises(IncompatibleServer):  # refused again, naming no legacy version: nothing to fall back to
        proto.probe_refused(refused)
    proto = make("auto")
    proto.start()
    proto.probe_refused(refused)
    both = RemoteError({"code": -32022, "message": "v", "data": {"supported": ["2026-07-28", "2025-11-25"]}})
    assert proto.probe_refused(both) == Initialize()


def test_unsupported_version_naming_only_legacy_or_nothing_known() -> None:
    proto = make("auto")
    proto.start()
    legacy = RemoteError({"code": -32022, "message": "v", "data": {"supported": ["2025-06-18"]}})
    assert proto.probe_refused(legacy) == Initialize()
    proto = make("auto")
    proto.start()
    with pytest.raises(IncompatibleServer, match="none of this client's protocol versions"):
        proto.probe_refused(RemoteError({"code": -32022, "message": "v", "data": {"supported": ["2099-01-01"]}}))


def test_discover_result_without_our_version() -> None:
    proto = make("auto")
    proto.start()
    assert proto.probe_answered({"supportedVersions": ["2025-11-25"]}, now=0.0) == Initialize()
    proto = make("auto")
    proto.start()
    with pytest.raises(IncompatibleServer):
        proto.probe_answered({"supportedVersions": ["2099-01-01"]}, now=0.0)
    proto = make("auto")
    proto.start()
    with pytest.raises(ProtocolViolation):  # a probe answered with input_required is not a DiscoverResult
        proto.probe_answered({"resultType": "input_required", "requestState": "x"}, now=0.0)


def test_silence_and_http_refusals() -> None:
    """stdio.mdx: silence means legacy; streamable-http.mdx: a 4xx without a modern error means legacy, a 5xx is no answer."""
    proto = make("auto")
    proto.start()
    assert proto.probe_silent() == Initialize()
    proto = make("auto")
    proto.start()
    assert proto.probe_http_error(405) == Initialize()
    proto = make("auto")
    proto.start()
    assert proto.probe_http_error(503) is None and proto.era is Era.MODERN


def test_initialize_answered_with_an_unknown_version() -> None:
    proto = make("auto")
    proto.start()
    proto.probe_silent()
    with pytest.raises(IncompatibleServer, match="2099"):
        proto.initialized({"protocolVersion": "2099-01-01"})


def test_cached_eras_skip_the_probe_and_forced_eras_are_not_remembered() -> None:
    eras = EraCache()
    eras.remember(KEY, Era.LEGACY, "2025-11-25")
    assert ClientProtocol(era="auto", eras=eras, server_key=KEY).start() == Initialize()
    eras.remember(KEY, Era.MODERN, "2026-07-28")
    proto: ClientProtocol[str] = ClientProtocol(era="auto", eras=eras, server_key=KEY)
    assert proto.start() == Ready(Era.MODERN, "2026-07-28") and proto.era is Era.MODERN
    other = EraCache()
    make("modern", eras=other)
    make("legacy", eras=other)
    assert len(other) == 0
    eras.forget(KEY)
    assert eras.get(KEY) is None
    with pytest.raises(ValueError):
        ClientProtocol(era="future")  # type: ignore[arg-type]  # the wrong value is the point


def test_unsupported_version_on_a_later_request_switches_once() -> None:
    """versioning.mdx: -32022 naming a version this client speaks: retry with it (the caller resends)."""
    eras = EraCache()
    proto = make(eras=eras)
    refused = RemoteError({"code": -32022, "message": "v", "data": {"supported": ["2026-07-28"]}})
    assert proto.version_refused(refused) is True
    assert eras.get(KEY) == (Era.MODERN, "2026-07-28")
    assert proto.version_refused(RemoteError({"code": -32022, "message": "v", "data": {"supported": ["1"]}})) is False
    assert proto.version_refused(RemoteError({"code": -32601, "message": "x"})) is False
    assert make("legacy").version_refused(refused) is False


# -- MRTR ----------------------------------------------------------------------------------


ELICIT = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object"}}}
ROOTS = {"method": "roots/list", "params": {}}


def test_mrtr_every_step() -> None:
    """mrtr.mdx, Client Requirements: answer in order, retry with this round's inputResponses and the state as received."""
    proto = make(answers=["elicitation", "roots"])
    original = {"name": "interview", "arguments": {"topic": "cats"}}
    call = proto.multi_round("tools/call", original)
    assert call.params is original and call.rounds == 0
    asked = call.receive({"resultType": "input_required", "inputRequests": {"b": ELICIT, "a": ROOTS}, "requestState": "s1"})
    assert asked is not None
    assert [(r.key, r.kind, r.method) for r in asked.requests] == [("b", "elicitation", "elicitation/create"), ("a", "roots", "roots/list")]
    assert asked.requests[0].params == ELICIT["params"] and asked.state == "s1" and call.rounds == 1
    retry = call.respond({"a": {"roots": []}, "b": {"action": "accept", "content": {"name": "Ada"}}})
    assert retry == {**original, "inputResponses": {"b": {"action": "accept", "content": {"name": "Ada"}}, "a": {"roots": []}}, "requestState": "s1"}
    assert call.params == retry and original == {"name": "interview", "arguments": {"topic": "cats"}}
    # The next round carries only its own responses, and no state when none came.
    asked = call.receive({"resultType": "input_required", "inputRequests": {"c": ROOTS}})
    assert call.respond({"c": {"roots": [{"uri": "file:///"}]}}) == {**original, "inputResponses": {"c": {"roots": [{"uri": "file:///"}]}}}
    # State only: echoed exactly, no inputResponses.
    call.receive({"resultType": "input_required", "requestState": "opaque é=+/"})
    assert call.respond({}) == {**original, "requestState": "opaque é=+/"}
    assert call.receive({"resultType": "complete", "content": []}) is None and call.rounds == 3
    # Each retry goes out as a new request under a new id.
    ids = {proto.request("tools/call", call.params, str(i)).id for i in range(2)}
    assert len(ids) == 2


def test_mrtr_is_bounded() -> None:
    proto = make(max_input_rounds=2)
    call = proto.multi_round("resources/read", {"uri": "x"})
    for _ in range(2):
        call.receive({"resultType": "input_required", "requestState": "again"})
        call.respond({})
    with pytest.raises(ProtocolViolation, match="2 rounds"):
        call.receive({"resultType": "input_required", "requestState": "again"})


@pytest.mark.parametrize("bad, match", [
    ({"resultType": "banana"}, "banana"),
    ({"resultType": "input_required"}, "inputRequests or requestState"),
    ({"resultType": "input_required", "inputRequests": []}, "must be an object"),
    ({"resultType": "input_required", "requestState": 7}, "must be a string"),
    ({"resultType": "input_required", "inputRequests": {"x": "no"}}, "not a request object"),
    ({"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage"}}}, "did not declare"),
    ({"resultType": "input_required", "inputRequests": {"s": {"method": "tasks/get"}}}, "did not declare"),
])
def test_mrtr_refuses_what_breaks_the_rules(bad: dict[str, Any], match: str) -> None:
    call = make(answers=["elicitation"]).multi_round("prompts/get", {"name": "p"})
    with pytest.raises(ProtocolViolation, match=match):
        call.receive(bad)


def test_input_required_only_where_allowed() -> None:
    """basic/index.mdx, ResultType: input_required only on tools/call, resources/read, prompts/get, in the modern era."""
    with pytest.raises(ProtocolViolation):
        make().multi_round("tools/list", None).receive({"resultType": "input_required", "requestState": "s"})
    with pytest.raises(ProtocolViolation):
        make("legacy", answers=["roots"]).multi_round("tools/call", {}).receive({"resultType": "input_required", "requestState": "s"})
    assert make().multi_round("tools/list", None).receive({"tools": []}) is None  # absent resultType = complete


# -- caching ---------------------------------------------------------------------------------


def test_cache_ttl_and_keys() -> None:
    """caching.mdx: kept for ttlMs; keyed by method and params without _meta; ttl 0, negative or absent: not kept."""
    proto = make()
    cache = proto.cache
    assert cache.put("tools/list", {}, {"tools": [1], "ttlMs": 1000}, now=10.0)
    assert cache.get("tools/list", {"_meta": {"x": 1}}, now=10.999) == {"tools": [1], "ttlMs": 1000}
    assert cache.get("tools/list", {}, now=11.0) is None and len(cache) == 0
    for ttl in (0, -5, None, "1000", 1.5):
        assert not cache.put("prompts/list", {}, {"prompts": [], "ttlMs": ttl}, now=0.0)
    cache.put("resources/read", {"uri": "a", "z": {"b": 1, "a": 2}}, {"contents": [], "ttlMs": 5000}, now=0.0)
    assert cache.get("resources/read", {"z": {"a": 2, "b": 1}, "uri": "a"}, now=1.0) is not None
    assert cache.get("resources/read", {"uri": "b"}, now=1.0) is None
    assert not make(cache=False).cache.put("tools/list", {}, {"ttlMs": 1000}, now=0.0)


def test_notifications_invalidate_the_cache() -> None:
    """caching.mdx, Interaction with Notifications: list_changed drops its lists; resources/updated its URI."""
    proto = make()
    cache = proto.cache
    for method, params in [("tools/list", {}), ("prompts/list", {}), ("resources/list", {}), ("resources/templates/list", {}),
                           ("resources/read", {"uri": "a"}), ("resources/read", {"uri": "b"})]:
        cache.put(method, params, {"ttlMs": 60000}, now=0.0)
    unclaimed = one(proto.receive(note("notifications/tools/list_changed")), events.Notified)
    assert type(unclaimed) is events.Notified  # invalidation does not claim it: on_notification still sees it
    assert cache.get("tools/list", {}, 1.0) is None and cache.get("prompts/list", {}, 1.0) is not None
    proto.receive(note("notifications/resources/list_changed"))
    assert cache.get("resources/list", {}, 1.0) is None and cache.get("resources/templates/list", {}, 1.0) is None
    proto.receive(note("notifications/resources/updated", {"uri": "a"}))
    assert cache.get("resources/read", {"uri": "a"}, 1.0) is None and cache.get("resources/read", {"uri": "b"}, 1.0) is not None
    cache.invalidate()
    assert len(cache) == 0


# -- notification routing ---------------------------------------------------------------------


def test_progress_goes_to_the_request_it_names() -> None:
    """progress.mdx: the progressToken (the request id) routes notifications/progress."""
    proto = make()
    a = proto.request("tools/call", {"name": "a"}, "A", CallOptions(on_progress=print))
    b = proto.request("tools/call", {"name": "b"}, "B")
    assert proto.receive(note("notifications/progress", {"progressToken": a.id, "progress": 1, "total": 2, "message": "half"})) == [
        events.Progress("A", 1, 2, "half")
    ]
    assert proto.receive(note("notifications/progress", {"progressToken": b.id, "progress": 1})) == []  # B did not ask
    assert proto.receive(note("notifications/progress", {"progressToken": 12345, "progress": 1})) == []
    assert proto.receive(note("notifications/progress", {"progressToken": True, "progress": 1})) == []  # a bool is no id


def test_log_messages_go_to_the_request_that_asked() -> None:
    """logging.mdx: on a request's stream, that request; on a shared stream, the only request that asked; else nobody."""
    proto = make()
    msg = {"level": "info", "data": "hi"}
    assert proto.receive(note("notifications/message", msg)) == [events.LogMessage(None, msg)]
    a = proto.request("tools/call", {"name": "a"}, "A", CallOptions(on_log=print))
    plain = proto.request("tools/call", {"name": "p"}, "P")
    assert proto.receive(note("notifications/message", msg)) == [events.LogMessage("A", msg)]
    assert proto.receive(note("notifications/message", msg), origin=plain.id) == [events.LogMessage(None, msg)]
    proto.request("tools/call", {"name": "b"}, "B", CallOptions(on_log=print))
    assert proto.receive(note("notifications/message", msg)) == [events.LogMessage(None, msg)]  # ambiguous
    assert proto.receive(note("notifications/message", msg), origin=a.id) == [events.LogMessage("A", msg)]
    proto.receive(result(a.id))
    assert proto.receive(note("notifications/message", msg)) == [events.LogMessage("B", msg)]


def test_subscription_notifications() -> None:
    """subscriptions.mdx: acknowledgment first, then notifications naming the subscription; cancelled or the reply end it."""
    proto = make()
    out = proto.listen({"toolsListChanged": True}, "SUB")
    assert sent(out.data)["method"] == "subscriptions/listen"
    assert sent(out.data)["params"]["notifications"] == {"toolsListChanged": True}
    changed = {"_meta": {SUB_ID: out.id}}
    assert proto.receive(note("notifications/tools/list_changed", changed)) == []  # before the acknowledgment: dropped
    ack = {"notifications": {"toolsListChanged": True}, "_meta": {SUB_ID: out.id}}
    assert proto.receive(note("notifications/subscriptions/acknowledged", ack)) == [events.Acknowledged("SUB", {"toolsListChanged": True})]
    assert proto.receive(note("notifications/tools/list_changed", changed)) == [
        events.SubscriptionNote("SUB", "notifications/tools/list_changed", changed)
    ]
    # Over HTTP the subscription's own stream names it.
    assert proto.receive(note("notifications/prompts/list_changed", {}), origin=out.id) == [
        events.SubscriptionNote("SUB", "notifications/prompts/list_changed", {})
    ]
    # Graceful closure: the reply to the listen request; later notifications are nobody's.
    assert proto.receive(result(out.id)) == [events.Settled("SUB", {})]
    unclaimed = one(proto.receive(note("notifications/tools/list_changed", changed)), events.Notified)
    assert type(unclaimed) is events.Notified and unclaimed.notification.method == "notifications/tools/list_changed"


def test_subscription_cancelled_by_the_server_or_the_client() -> None:
    proto = make()
    out = proto.listen({"toolsListChanged": True}, "SUB")
    assert proto.receive(note("notifications/cancelled", {"requestId": out.id, "reason": "shutdown"})) == [
        events.SubscriptionEnded("SUB", None)
    ]
    assert proto.in_flight == 0 and proto.receive(result(out.id)) == []
    mine = proto.listen({}, "MINE")
    cancel = one(proto.cancel(mine.id, "the client closed the subscription"), events.Send)
    assert sent(cancel.data)["params"]["requestId"] == mine.id
    other = one(proto.receive(note("notifications/cancelled", {"requestId": mine.id})), events.Notified)
    assert type(other) is events.Notified


def test_connection_lost_fails_subscriptions_too() -> None:
    proto = make()
    proto.listen({}, "SUB")
    failed = one(proto.connection_lost(ConnectionClosed("gone")), events.Failed)
    assert failed == events.Failed("SUB", failed.error) and isinstance(failed.error, ConnectionClosed)


# -- requests from the server ------------------------------------------------------------------


def test_server_requests_in_the_modern_era_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """stdio.mdx: a 2026-07-28 client must not write responses; the request is logged, not answered."""
    proto = make(answers=["elicitation"])
    with caplog.at_level(logging.WARNING, "wiremcp.client"):
        assert proto.receive(server_request(1, "elicitation/create", {"message": "x"})) == []
    assert "ignored a elicitation/create request" in caplog.text


def test_legacy_server_requests() -> None:
    """2025-11-25: ping gets {}; a declared input request is handed out; anything else gets -32601."""
    proto = make("legacy", answers=["elicitation"])
    pong = one(proto.receive(server_request("p", "ping")), events.Send)
    assert sent(pong.data) == {"jsonrpc": "2.0", "id": "p", "result": {}}
    assert proto.receive(server_request(7, "elicitation/create", {"message": "name?"})) == [
        events.ServerRequest(7, "elicitation/create", "elicitation", {"message": "name?"})
    ]
    for method in ("sampling/createMessage", "no/such"):
        refused = one(proto.receive(server_request(8, method)), events.Send)
        reply = sent(refused.data)
        assert reply["id"] == 8 and reply["error"]["code"] == -32601 and method in reply["error"]["message"]
    assert sent(proto.answer(7, {"action": "decline"})) == {"jsonrpc": "2.0", "id": 7, "result": {"action": "decline"}}
    internal = sent(proto.answer_error(7, KeyError("x")))
    assert internal["error"] == {"code": -32603, "message": "Internal error: KeyError"}
    proto.connection_lost(None)
    assert proto.answer(7, {}) is None and proto.answer_error(7, KeyError()) is None


def test_unreadable_messages_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    proto = make()
    with caplog.at_level(logging.WARNING, "wiremcp.client"):
        assert proto.receive(b"not json") == []
        assert proto.receive(b'{"jsonrpc": "1.0", "id": 1, "result": {}}') == []
    assert len(caplog.records) == 2


def test_a_silent_probe_is_legacy_only_where_the_binding_says_so() -> None:
    """stdio.mdx: no reply within a timeout means legacy. streamable-http.mdx falls back only on a 4xx
    without a recognized modern error body: over HTTP a silent probe is a timeout naming the probe,
    the era is not switched, nothing is remembered, and the probe's stream is closed."""
    eras = EraCache()
    stdio = make("auto", eras=eras)
    assert stdio.silence_means_legacy
    stdio.start()
    stdio.request("server/discover", {}, "P", deadline=1.0, cancel_on_timeout=False)
    assert one(stdio.expire(2.0), events.Failed).tag == "P"
    assert stdio.probe_silent(0.5) == Initialize() and stdio.era is Era.LEGACY

    http_eras = EraCache()
    http = make("auto", eras=http_eras, cancel_by_notification=False)
    assert not http.silence_means_legacy
    assert http.start() == Probe("2026-07-28")
    out = http.request("server/discover", {}, "P", deadline=1.0, cancel_on_timeout=not http.silence_means_legacy)
    failed, abandon = http.expire(2.0)
    assert the(failed, events.Failed).tag == "P" and isinstance(failed.error, RequestTimeout)
    assert abandon == events.Abandon(out.id)
    with pytest.raises(RequestTimeout, match=r"server/discover\) within 0.5 s") as info:
        http.probe_silent(0.5)
    assert isinstance(info.value, TimeoutError)
    assert http.era is Era.MODERN and http.protocol_version == "2026-07-28"
    assert len(http_eras) == 0
    # The rest of the HTTP rules are unchanged: a 4xx without a modern body is legacy, a 5xx no answer.
    assert http.probe_http_error(400) == Initialize()


def test_silence_means_legacy_can_be_set_apart_from_cancellation() -> None:
    """The binding's rule is its own setting; by default it follows the transport's cancellation style."""
    assert not make("auto", silence_means_legacy=False).silence_means_legacy
    assert make("auto", cancel_by_notification=False, silence_means_legacy=True).silence_means_legacy
    proto = make("auto", silence_means_legacy=False)
    proto.start()
    with pytest.raises(RequestTimeout, match="in time"):
        proto.probe_silent()


def test_a_malformed_notification_from_the_server_is_logged_never_answered(caplog: pytest.LogCaptureFixture) -> None:
    """JSON-RPC 2.0 §4.1: a notification is never answered, whatever is wrong with it; nothing else is touched."""
    proto = make()
    out = proto.request("tools/call", {"name": "x"}, "T", CallOptions(on_progress=print))
    bad = [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": [out.id, 1]},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
        {"jsonrpc": "1.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "method": 5},
    ]
    with caplog.at_level(logging.WARNING, "wiremcp.client"):
        for note in bad:
            assert proto.receive(orjson.dumps(note)) == []  # no Send, no event
    assert [r.message.split(":")[0] for r in caplog.records] == [
        "ignored a malformed notification from the server (notifications/progress)",
        "ignored a malformed notification from the server (notifications/cancelled)",
        "ignored a malformed notification from the server (notifications/tools/list_changed)",
        "ignored a malformed notification from the server (no method)",
    ]
    assert out.id in proto and proto.receive(result(out.id)) == [events.Settled("T", {})]


def test_a_minus_32022_to_the_fallback_initialize_settles_the_modern_era() -> None:
    """versioning.mdx: a recognized modern error identifies a modern server, whatever request it answers
    (issue 24: a modern server that served the probe late refuses the fallback initialize with -32022)."""
    eras = EraCache()
    proto = make("auto", eras=eras)
    proto.start()
    assert proto.probe_silent(0.5) == Initialize() and proto.era is Era.LEGACY
    refused = RemoteError({"code": -32022, "message": "serving 2026-07-28", "data": {"supported": ["2026-07-28"]}}, "initialize")
    assert proto.initialize_refused(refused) == Ready(Era.MODERN, "2026-07-28")
    assert proto.era is Era.MODERN and eras.get(KEY) == (Era.MODERN, "2026-07-28")
    # Without data.supported: the version the probe offered. Naming only legacy versions, or another
    # code, or a forced era: no answer about the era (the caller raises the error).
    bare = make("auto")
    bare.start()
    bare.probe_silent()
    assert bare.initialize_refused(RemoteError({"code": -32022, "message": "no"}, "initialize")) == Ready(Era.MODERN, "2026-07-28")
    for error in ({"code": -32022, "message": "old", "data": {"supported": ["2025-06-18"]}}, {"code": -32602, "message": "bad"}):
        other = make("auto")
        other.start()
        other.probe_silent()
        assert other.initialize_refused(RemoteError(error, "initialize")) is None and other.era is Era.LEGACY
    assert make("legacy").initialize_refused(refused) is None  # era="legacy" is an order: the error is raised
