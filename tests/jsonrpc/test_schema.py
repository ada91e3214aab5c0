"""Cross-check the codec against the MCP 2026-07-28 ``schema.json`` and its examples.

Spec: MCP 2026-07-28 ``schema/2026-07-28/schema.json`` ($defs JSONRPCMessage,
JSONRPCRequest, JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse,
RequestId, Error, Result) and ``basic/index.mdx`` § Messages; the example
messages in ``schema/2026-07-28/examples/*/*.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")
from referencing.jsonschema import DRAFT202012  # noqa: E402

from wiremcp.jsonrpc import (  # noqa: E402
    ErrorResponse,
    InvalidRequest,
    Notification,
    Request,
    Response,
    decode,
    encode,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)

from .strategies import (  # noqa: E402
    INT_MIN,
    any_ids,
    envelope_like,
    error_objects,
    error_values,
    mostly_valid,
    json_objects,
    json_text,
    json_values,
    mcp_ids,
    mcp_messages,
    same_json,
)

SPEC = Path(__file__).resolve().parents[1] / "spec" / "schema" / "2026-07-28"
SCHEMA_FILE = SPEC / "schema.json"
EXAMPLES = SPEC / "examples"


FAST = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_BASE_URI = "urn:mcp:schema:2026-07-28"


def _validator(definition: str) -> Any:
    """A Draft 2020-12 validator for one ``$defs`` entry, resolving every ``#/$defs/...``
    reference inside the whole schema document through a `referencing` registry."""
    document = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    resource = DRAFT202012.create_resource(document)
    registry = referencing.Registry().with_resource(_BASE_URI, resource)
    schema = {"$schema": document["$schema"], "$ref": f"{_BASE_URI}#/$defs/{definition}"}
    jsonschema.Draft202012Validator.check_schema(document)
    return jsonschema.Draft202012Validator(schema, registry=registry)


_MESSAGE: Any = None


def _message_validator() -> Any:
    global _MESSAGE
    if _MESSAGE is None:
        _MESSAGE = _validator("JSONRPCMessage")
    return _MESSAGE


@pytest.fixture(scope="module")
def message_schema() -> Any:
    return _message_validator()


def assert_valid(data: bytes) -> None:
    value = orjson.loads(data)
    errors = sorted(_message_validator().iter_errors(value), key=lambda e: list(e.path))
    assert not errors, (value, [e.message for e in errors])


def test_the_validator_is_strict_enough(message_schema: Any) -> None:
    """Sanity: the resolved schema does reject broken envelopes (else the rest proves nothing)."""
    assert message_schema.is_valid({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    for bad in (
        {"jsonrpc": "2.0"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 1.5, "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": []},
        {"jsonrpc": "2.0", "id": 1, "result": {}},  # Result requires resultType
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
    ):
        assert not message_schema.is_valid(bad), bad


# -- everything the encoder makes under MCP validates ----------------------------------

#: MCP § Result Responses: "The result MUST include a resultType field"; that is the
#: protocol layer's job (the JSON-RPC layer carries any object), so the generated
#: results include it. ``_meta`` keys are left out: their shape is the protocol
#: layer's too (ResultMetaObject).
plain_objects = st.dictionaries(json_text.filter(lambda k: k != "_meta"), json_values, max_size=4)
results = st.builds(
    lambda extra, kind: {**extra, "resultType": kind},
    plain_objects,
    st.sampled_from(["complete", "input_required"]) | json_text,
)


@FAST
@given(mcp_ids, json_text, st.none() | json_objects)
def test_encoded_requests_and_notifications_validate(id: Any, method: str, params: Any) -> None:
    """MCP § Requests / § Notifications (schema JSONRPCRequest, JSONRPCNotification)."""
    assert_valid(encode_request(id, method, params))
    assert_valid(encode(Request(id, method, params)))
    assert_valid(encode_notification(method, params))
    assert_valid(encode(Notification(method, params)))


@FAST
@given(mcp_ids, results, error_objects())
def test_encoded_responses_validate(id: Any, result: Any, error: Any) -> None:
    """MCP § Result Responses / § Error Responses (schema JSONRPCResultResponse,
    JSONRPCErrorResponse, Error)."""
    assert_valid(encode_result(id, result))
    assert_valid(encode(Response(id, result)))
    assert_valid(encode_error(id, error))
    assert_valid(encode(ErrorResponse(id, error)))
    assert_valid(encode(ErrorResponse.build(id, error["code"], error["message"], *([error["data"]] if "data" in error else []))))


def test_error_replies_built_from_exceptions_validate() -> None:
    """The reply a server makes for a decoding failure whose id could be read."""
    try:
        decode(b'{"jsonrpc":"1.0","id":"a","method":"m"}')
    except InvalidRequest as exc:
        assert_valid(encode_error(exc.id, exc.to_error()))
    else:  # pragma: no cover
        pytest.fail("no InvalidRequest")


def test_error_reply_with_unreadable_id_validates() -> None:
    """MCP § Error Responses: `id?: string | number`; the MCP encoder omits an unreadable id."""
    try:
        decode(b"{not json")
    except Exception as exc:  # ParseError, id None
        assert_valid(encode_error(exc.id, exc.to_error()))  # type: ignore[attr-defined]


def test_error_reply_without_id_is_what_the_schema_wants(message_schema: Any) -> None:
    """The schema-valid form of that reply omits ``id``; the MCP decoder accepts both it
    and JSON-RPC's ``id: null`` (as id ``None``)."""
    error = {"code": -32700, "message": "Parse error"}
    without_id = {"jsonrpc": "2.0", "error": error}
    with_null = {"jsonrpc": "2.0", "id": None, "error": error}
    assert message_schema.is_valid(without_id)
    assert not message_schema.is_valid(with_null)
    assert decode(orjson.dumps(without_id)) == ErrorResponse(None, error)
    assert decode(orjson.dumps(with_null)) == ErrorResponse(None, error)


@pytest.mark.parametrize("id", [INT_MIN, -1, 0, 2**63 - 1, "", "0", "a\nb"])
def test_boundary_ids_validate(id: Any) -> None:
    """RequestId: ``type: [string, integer]``."""
    assert_valid(encode_request(id, "ping"))
    assert_valid(encode_result(id, {"resultType": "complete"}))


# -- every example message decodes, to the right class, and re-encodes the same ----------------


def _example_messages() -> list[Any]:
    if not EXAMPLES.is_dir():
        return []
    found = []
    for path in sorted(EXAMPLES.glob("*/*.json")):
        value = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(value, dict) and "jsonrpc" in value:
            found.append(pytest.param(path, id=f"{path.parent.name}/{path.name}"))
    return found


EXAMPLE_MESSAGES = _example_messages()


def test_examples_exist() -> None:
    """The examples folder holds requests, notifications, results and errors."""
    kinds = set()
    for param in EXAMPLE_MESSAGES:
        kinds.add(type(decode(param.values[0].read_bytes())))
    assert kinds == {Request, Notification, Response, ErrorResponse}
    assert len(EXAMPLE_MESSAGES) >= 20


def _expected_class(value: dict[str, Any]) -> type:
    if "method" in value:
        return Request if "id" in value else Notification
    return ErrorResponse if "error" in value else Response


@pytest.mark.parametrize("path", EXAMPLE_MESSAGES)
def test_example_decodes_and_re_encodes(path: Path, message_schema: Any) -> None:
    """MCP § Messages: every example decodes without error to the message class its
    members say, and encoding it again gives the same JSON value."""
    raw = path.read_bytes()  # pretty-printed over several lines: one JSON text all the same
    value = json.loads(raw)
    assert message_schema.is_valid(value), path  # the examples themselves are valid
    message = decode(raw)
    assert type(message) is _expected_class(value)
    again = encode(message)
    assert b"\n" not in again
    assert same_json(orjson.loads(again), value)
    assert decode(again) == message


# -- the decoder and the schema agree, but for a short list of known differences -------------


def _integral_float(value: Any) -> bool:
    return type(value) is float and value.is_integer()


def _schema_valid_but_refused(obj: dict[str, Any]) -> str | None:
    """Why a schema-valid object may still be refused by the MCP decoder; None if no reason.

    The schema's objects do not say ``additionalProperties: false`` and JSON Schema's
    ``integer`` also matches ``1.0``; JSON-RPC 2.0 and the MCP text are stricter."""
    if "method" in obj and ("result" in obj or "error" in obj):
        return "a request or notification carrying result/error (JSON-RPC 2.0 §4)"
    if "method" in obj and "id" in obj and type(obj["id"]) not in (str, int):
        return "a notification with an id (MCP § Notifications: MUST NOT include an ID)"
    if "result" in obj and "error" in obj:
        return "both result and error (JSON-RPC 2.0 §5)"
    if _integral_float(obj.get("id")):
        return "an integral float id such as 1.0 (MCP § Requests: a string or integer ID)"
    error = obj.get("error")
    if type(error) is dict and _integral_float(error.get("code")):
        return "an integral float error code (MCP § Error Responses: codes MUST be integers)"
    return None


def _accepted_but_schema_invalid(obj: dict[str, Any]) -> str | None:
    """Why an object the MCP decoder accepts may fail the schema; None if no reason."""
    if "result" in obj and type(obj["result"].get("resultType")) is not str:
        return "result without a string resultType (the protocol layer's rule, not JSON-RPC's)"
    if "result" in obj and "_meta" in obj["result"]:
        return "result _meta (ResultMetaObject is the protocol layer's rule)"
    if "error" in obj and "id" in obj and obj["id"] is None:
        return "error response with id null (JSON-RPC 2.0 §5; the MCP schema wants it omitted)"
    return None


schema_shaped = st.one_of(
    mcp_messages.map(lambda m: orjson.loads(encode(m))),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "error": error_objects()}, optional={"id": st.none()}),
    mostly_valid,
    envelope_like,
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "result": results},
        optional={"id": mcp_ids | any_ids, "error": error_values, "extra": json_values},
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "id": st.sampled_from([1.0, -3.0, 0.0, 1.5]) | mcp_ids},
        optional={"method": json_text, "result": results, "error": error_objects()},
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "error": st.builds(lambda c: {"code": c, "message": "m"}, st.sampled_from([-32600.0, 1.0, 2.5]))},
        optional={"id": mcp_ids},
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_shaped)
def test_decoder_and_schema_agree(obj: dict[str, Any]) -> None:
    """Differential check of the MCP profile against ``JSONRPCMessage``: any
    disagreement must be one of the known, spec-justified differences listed above."""
    schema_ok = _message_validator().is_valid(obj)
    try:
        decode(orjson.dumps(obj))
        accepted = True
    except InvalidRequest:
        accepted = False
    if schema_ok and not accepted:
        assert _schema_valid_but_refused(obj), f"schema-valid but refused: {obj!r}"
    if accepted and not schema_ok:
        assert _accepted_but_schema_invalid(obj), f"accepted but schema-invalid: {obj!r}"
