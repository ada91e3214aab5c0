"""The wire checker (wiremcp/cli/_wirecheck.py), sans I/O: each rule against a conversation that breaks it.

Conversations are lists of ``(direction, message)``; `codes` feeds them in
order and returns the problem codes per message. The 2026-07-28 messages
come from the spec's examples where one exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import META, SPEC, call, request
from wiremcp.protocol.methods import CACHEABLE
from wiremcp.cli._wirecheck import SCHEMA_REVISIONS, WireChecker, load_schema, sent_by_server

PACKAGE_SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "wiremcp" / "cli" / "_schemas"


def codes(*messages: tuple[str, Any], checker: WireChecker | None = None) -> list[list[str]]:
    checker = checker or WireChecker()
    return [[p["code"] for p in checker.check_message(d, m)] for d, m in messages]  # type: ignore[arg-type]


def ok(request_id: Any, result: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]} if result is None else result
    return {"jsonrpc": "2.0", "id": request_id, "result": body}


CALL = call(1, "echo", {"text": "hi"})


def test_the_package_ships_the_spec_schemas_unchanged() -> None:
    for revision in SCHEMA_REVISIONS:
        shipped = (PACKAGE_SCHEMAS / revision / "schema.json").read_bytes()
        assert shipped == (SPEC / "schema" / revision / "schema.json").read_bytes()
        assert load_schema(revision)["$defs"]
    assert (PACKAGE_SCHEMAS / "LICENSE").read_bytes() == (SPEC / "LICENSE").read_bytes()


def test_a_correct_modern_conversation_has_no_problem() -> None:
    checker = WireChecker()
    assert codes(("c2s", CALL), ("s2c", ok(1)), checker=checker) == [[], []]
    assert checker.era == "modern" and checker.revision == "2026-07-28"
    assert checker.finish() == []


def test_every_example_request_and_result_of_the_spec_passes() -> None:
    examples = SPEC / "schema" / "2026-07-28" / "examples"
    seen = 0
    for folder in sorted(examples.iterdir()):
        if not folder.name.endswith("Request") or not (examples / (folder.name[: -len("Request")] + "ResultResponse")).is_dir():
            continue
        for path in sorted(folder.glob("*.json")):
            message = json.loads(path.read_text())
            checker = WireChecker()
            assert checker.check_message("c2s", message) == [], path
            for reply_path in sorted((examples / (folder.name[: -len("Request")] + "ResultResponse")).glob("*.json")):
                reply = json.loads(reply_path.read_text())
                reply["id"] = message["id"]
                fresh = WireChecker()
                fresh.check_message("c2s", message)
                found = fresh.check_message("s2c", reply)
                if reply["result"].get("resultType") == "input_required":
                    found = [p for p in found if p["code"] != "mrtr-undeclared-capability"]  # the example request declares none
                if reply["result"].get("resultType") == "complete" and "ttlMs" not in reply["result"] and message["method"] in CACHEABLE:
                    # read-resource-result-response.json has no hints, which the schema's `required`
                    # (and caching.mdx) demand: the checker must say so
                    assert [p["code"] for p in found] == ["missing-cache-hints"], reply_path.name
                    continue
                assert found == [], (path.name, reply_path.name, found)
                seen += 1
    assert seen >= 8


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"Server starting...", "parse-error"),
        (b"[1, 2]", "batch"),
        (b'"hello"', "not-an-object"),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', "bad-jsonrpc"),
        (b'{"jsonrpc": "2.0", "id": 1}', "invalid-envelope"),
        (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', "null-id"),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', "bad-id"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', "bad-method"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "rpc.x"}', "reserved-method"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}', "bad-params"),
    ],
)
def test_json_rpc_framing_and_id_rules(line: bytes, code: str) -> None:
    found = WireChecker().check_line("c2s", line)["problems"]
    assert code in [p["code"] for p in found]
    assert all(p["message"] for p in found)


def test_replies_to_unknown_and_already_answered_ids() -> None:
    assert codes(("c2s", CALL), ("s2c", ok(1)), ("s2c", ok(1)), ("s2c", ok(99))) == [[], [], ["already-answered"], ["unknown-id"]]


def test_an_error_reply_with_null_id_is_allowed_and_a_result_with_null_id_is_not() -> None:
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert codes(("s2c", error), ("s2c", {"jsonrpc": "2.0", "id": None, "result": {}})) == [[], ["null-id"]]


def test_an_error_reply_may_omit_the_id_of_an_unreadable_request_and_a_result_may_not() -> None:
    # the schema's JSONRPCErrorResponse makes id optional (basic/index.mdx: "except in error cases where the ID could not be read")
    error = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}}
    assert codes(("s2c", error), ("s2c", {"jsonrpc": "2.0", "result": {}})) == [[], ["invalid-envelope"]]


def test_a_reply_whose_id_is_an_object_or_array_is_bad_id_not_a_crash() -> None:
    for bad in ({"a": 1}, [1], 1.5, True):
        assert codes(("s2c", {"jsonrpc": "2.0", "id": bad, "result": {}})) == [["bad-id"]]


def test_a_string_id_and_an_integer_id_are_different_requests() -> None:
    assert codes(("c2s", CALL), ("s2c", ok("1"))) == [[], ["unknown-id"]]


def test_duplicate_in_flight_ids_and_never_answered_requests() -> None:
    checker = WireChecker()
    assert codes(("c2s", CALL), ("c2s", call(1, "echo", {"text": "again"})), checker=checker) == [[], ["duplicate-id"]]
    (direction, found), = checker.finish()
    assert direction == "s2c" and found["code"] == "never-answered"
    assert "request 1 (tools/call)" in found["message"]


def test_a_cancelled_request_is_not_reported_as_never_answered() -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    checker = WireChecker()
    assert codes(("c2s", CALL), ("c2s", cancel), checker=checker) == [[], []]
    assert checker.finish() == []
    unknown = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42}}
    assert codes(("c2s", unknown)) == [["cancel-unknown"]]


def test_result_type_is_required_on_2026_results_only() -> None:
    assert codes(("c2s", CALL), ("s2c", ok(1, {"content": []}))) == [[], ["missing-result-type"]]
    assert codes(("c2s", CALL), ("s2c", ok(1, {"resultType": "done", "content": []}))) == [[], ["bad-result-type"]]
    legacy = WireChecker()
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    init_result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    legacy_call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
    found = codes(("c2s", initialize), ("s2c", ok(0, init_result)), ("c2s", legacy_call), ("s2c", ok(1, {"content": []})), checker=legacy)
    assert found == [[], [], [], []]
    assert legacy.era == "legacy" and legacy.revision == "2025-11-25"


def test_required_meta_on_modern_requests() -> None:
    bare = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    (found,) = WireChecker().check_message("c2s", bare)
    assert found["code"] == "missing-meta" and "initialize" in found["message"]
    no_caps = request(1, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
    assert codes(("c2s", no_caps)) == [["missing-meta"]]
    assert codes(("c2s", request(1, "tools/list", meta={**META, "bad key!": 1}))) == [["bad-meta-key"]]


def test_method_names_directions_and_removed_methods() -> None:
    assert codes(("c2s", request(1, "tools/frobnicate"))) == [["unknown-method"]]
    assert codes(("c2s", request(1, "ping"))) == [["removed-method"]]
    checker = WireChecker()
    codes(("c2s", CALL), checker=checker)
    server_request = {"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create", "params": {"message": "name?"}}
    assert codes(("s2c", server_request), checker=checker) == [["server-request"]]
    log_from_client = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    assert codes(("c2s", log_from_client), checker=checker) == [["wrong-direction"]]
    assert sent_by_server("notifications/message") and not sent_by_server("tools/call")


def test_caching_hints_on_cacheable_results() -> None:
    listing = request(1, "tools/list")
    assert codes(("c2s", listing), ("s2c", ok(1, {"resultType": "complete", "tools": []}))) == [[], ["missing-cache-hints"]]
    bad = {"resultType": "complete", "tools": [], "ttlMs": -1, "cacheScope": "everyone"}
    assert codes(("c2s", listing), ("s2c", ok(1, bad))) == [[], ["bad-cache-hints", "bad-cache-hints"]]
    good = {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "private"}
    assert codes(("c2s", listing), ("s2c", ok(1, good))) == [[], []]


def test_multi_round_trip_fields() -> None:
    elicit = {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}
    asking = request(1, "tools/call", {"name": "greet", "arguments": {}}, meta={**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    needs = {"resultType": "input_required", "inputRequests": {"name": elicit}, "requestState": "s-1"}
    checker = WireChecker()
    assert codes(("c2s", asking), ("s2c", ok(1, needs)), checker=checker) == [[], []]
    retry = request(2, "tools/call", {"name": "greet", "arguments": {}, "requestState": "s-1", "inputResponses": {"name": {"action": "accept", "content": {}}}})
    assert codes(("c2s", retry), checker=checker) == [[]]
    forged = request(3, "tools/call", {"name": "greet", "arguments": {}, "requestState": "forged", "inputResponses": {"other": {}}})
    assert codes(("c2s", forged), checker=checker) == [["unknown-request-state", "unexpected-input-response"]]
    # on a method that may not ask, empty, an unknown kind, an undeclared capability
    assert codes(("c2s", request(1, "tools/list")), ("s2c", ok(1, {"resultType": "input_required", "requestState": "x"}))) == [[], ["mrtr-not-allowed"]]
    assert codes(("c2s", CALL), ("s2c", ok(1, {"resultType": "input_required"}))) == [[], ["mrtr-empty"]]
    weird = {"resultType": "input_required", "inputRequests": {"a": {"method": "tools/call", "params": {}}}}
    assert codes(("c2s", CALL), ("s2c", ok(1, weird))) == [[], ["mrtr-bad-input-request"]]
    assert codes(("c2s", CALL), ("s2c", ok(1, needs))) == [[], ["mrtr-undeclared-capability"]]


def test_schema_validation_names_the_definition_and_the_problem() -> None:
    found = WireChecker().check_message("c2s", request(1, "tools/call", {"arguments": {}}))
    assert [p["code"] for p in found] == ["schema"]
    assert "CallToolRequest" in found[0]["message"] and "name" in found[0]["message"]
    bad_content = ok(1, {"resultType": "complete", "content": [{"type": "text"}]})
    (_, reply) = codes(("c2s", CALL), ("s2c", bad_content))
    assert reply == ["schema"]


def test_error_objects_and_retired_codes() -> None:
    assert codes(("c2s", CALL), ("s2c", {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": 1}})) == [[], ["bad-error", "bad-error"]]
    retired = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "Resource not found"}}
    assert codes(("c2s", CALL), ("s2c", retired)) == [[], ["retired-error-code"]]
    both = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}, "error": {"code": 1, "message": "x"}}
    assert "result-and-error" in codes(("c2s", CALL), ("s2c", both))[1]


def test_check_line_returns_the_parsed_message() -> None:
    checked = WireChecker().check_line("c2s", orjson.dumps(CALL) + b"\n")
    assert checked == {"msg": CALL, "problems": []}
