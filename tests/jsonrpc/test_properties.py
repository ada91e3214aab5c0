"""Property tests of the JSON-RPC codec: round trips, exact error codes, never crashing.

Spec: JSON-RPC 2.0 §4-§6 and MCP 2026-07-28 ``basic/index.mdx`` § Messages; the
decoding rules table in ``wiremcp/jsonrpc/_codec.py`` is the contract checked
by the reference model `expected` below.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wiremcp.jsonrpc import (
    INVALID_REQUEST,
    JSONRPC_2_0,
    MCP,
    PARSE_ERROR,
    Batch,
    Decoder,
    ErrorResponse,
    InvalidNotification,
    InvalidRequest,
    InvalidResponse,
    Notification,
    ParseError,
    Request,
    Response,
    decode,
    encode,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)

from .strategies import (
    INT_MAX,
    INT_MIN,
    assert_good_error,
    base_ids,
    base_messages,
    envelope_like,
    error_objects,
    json_arrays,
    json_floats,
    json_ints,
    json_objects,
    json_text,
    json_values,
    mcp_ids,
    mcp_messages,
    mostly_valid,
    same_json,
    same_message,
)

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BASE = Decoder(JSONRPC_2_0)
PROFILES = pytest.mark.parametrize("profile", [MCP, JSONRPC_2_0], ids=["mcp", "jsonrpc2"])

_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')


def assert_one_line(data: bytes) -> None:
    """MCP stdio: "Messages are delimited by newlines, and MUST NOT contain embedded
    newlines"; transports § Messages: "JSON-RPC messages MUST be UTF-8 encoded"."""
    assert type(data) is bytes
    assert b"\n" not in data and b"\r" not in data
    text = data.decode("utf-8")  # strict: raises on invalid UTF-8 or surrogates
    # orjson escapes every control character inside strings, and compact output
    # has no whitespace between tokens: no byte below 0x20 at all.
    assert all(b >= 0x20 for b in data), data
    assert " " not in _STRING_LITERAL.sub("", text), text  # compact separators


# -- round trip -------------------------------------------------------------------


@FAST
@given(mcp_messages)
def test_round_trip_mcp(msg: Any) -> None:
    """MCP § Messages: every request, notification, result and error response survives."""
    data = encode(msg)
    assert_one_line(data)
    out = decode(data)
    assert same_message(out, msg), (out, msg)
    # every input type the decoder takes gives the same message
    for form in (bytearray(data), memoryview(data), data.decode("utf-8")):
        assert same_message(decode(form), msg)
    # line=True frames the very same bytes with one newline (stdio transport)
    assert encode(msg, line=True) == data + b"\n"


@FAST
@given(base_messages)
def test_round_trip_jsonrpc2(msg: Any) -> None:
    """JSON-RPC 2.0 §4/§5: null and fractional ids, positional params, any result."""
    data = encode(msg, profile=JSONRPC_2_0)
    assert_one_line(data)
    assert same_message(BASE.decode(data), msg)


@FAST
@given(st.lists(base_messages, min_size=1, max_size=5))
def test_round_trip_batch(items: list[Any]) -> None:
    """JSON-RPC 2.0 §6: a batch is a non-empty array of messages, order kept."""
    batch = Batch(tuple(items))
    data = encode(batch, profile=JSONRPC_2_0)
    assert_one_line(data)
    assert encode(items, profile=JSONRPC_2_0) == data and encode(tuple(items), profile=JSONRPC_2_0) == data
    out = BASE.decode(data)
    assert type(out) is Batch and out == batch
    assert all(same_message(a, b) for a, b in zip(out.items, batch.items))


@FAST
@given(mcp_ids, json_text, st.none() | json_objects)
def test_encode_helpers_match_encode(id: Any, method: str, params: Any) -> None:
    """The one-shot helpers make exactly the bytes `encode` makes for the same message."""
    assert encode_request(id, method, params) == encode(Request(id, method, params))
    assert encode_notification(method, params) == encode(Notification(method, params))
    result = params if params is not None else {}
    assert encode_result(id, result) == encode(Response(id, result))
    error = {"code": -32601, "message": method}
    assert encode_error(id, error) == encode(ErrorResponse(id, error))
    for helper_bytes in (
        encode_request(id, method, params, line=True),
        encode_notification(method, params, line=True),
        encode_result(id, result, line=True),
        encode_error(id, error, line=True),
    ):
        assert helper_bytes.endswith(b"\n") and helper_bytes.count(b"\n") == 1
        assert_one_line(helper_bytes[:-1])


@FAST
@given(st.text(alphabet="\n\r\u2028\u2029\x00\x1b\x7f\x85\t é😀", min_size=1, max_size=30))
def test_newlines_and_controls_never_break_the_line(text: str) -> None:
    """stdio: no embedded newline, even when every string is made of line breaks."""
    msg = Request(text, text, {text: [text, {text: text}]})
    data = encode(msg)
    assert_one_line(data)
    assert same_message(decode(data), msg)


@settings(max_examples=60, deadline=None)
@given(st.integers(INT_MIN, INT_MAX))
def test_integer_ids_round_trip_over_the_whole_64_bit_range(n: int) -> None:
    """MCP § Requests: integer ids; orjson keeps integers exact from -2**63 to 2**64-1."""
    out = decode(encode_request(n, "m"))
    assert type(out.id) is int and out.id == n


# -- the reference model of the decoding rules table ---------------------------------


class Ok:
    def __init__(self, cls: type) -> None:
        self.cls = cls


class Err:
    def __init__(self, cls: type, id: Any = None, response_id: Any = None) -> None:
        self.cls = cls
        self.id = id
        self.response_id = response_id


def _valid_id(value: Any, profile: Any) -> bool:
    # MCP § Requests: "a string or integer ID", "MUST NOT be null";
    # JSON-RPC 2.0 §4: "String, Number, or NULL" (bool is not a Number).
    if type(value) in (str, int):
        return True
    return profile is JSONRPC_2_0 and (value is None or type(value) is float)


def expected(obj: Any, profile: Any) -> Any:
    """What the decoder must do with an already-parsed JSON value."""
    if type(obj) is list:
        if profile is MCP or not obj:  # MCP: no batches; JSON-RPC §6: non-empty
            return Err(InvalidRequest)
        return [expected(x, profile) if type(x) is dict else Err(InvalidRequest) for x in obj]
    if type(obj) is not dict:
        return Err(InvalidRequest)
    jsonrpc_ok = obj.get("jsonrpc") == "2.0" and type(obj.get("jsonrpc")) is str
    if "method" in obj:
        if "id" in obj and not _valid_id(obj["id"], profile):
            return Err(InvalidRequest)  # the id cannot be echoed: null
        reply_id = obj.get("id")
        params_ok = "params" not in obj or type(obj["params"]) is dict or (
            profile is JSONRPC_2_0 and type(obj["params"]) is list
        )
        if (
            not jsonrpc_ok
            or type(obj["method"]) is not str
            or not params_ok
            or "result" in obj
            or "error" in obj
        ):
            # JSON-RPC 2.0 §4.1: without an id it is a notification, never answered.
            return Err(InvalidRequest if "id" in obj else InvalidNotification, reply_id)
        return Ok(Request if "id" in obj else Notification)
    if "result" in obj or "error" in obj:
        is_error = "error" in obj
        if "id" in obj:
            id_ok = _valid_id(obj["id"], profile) or (is_error and obj["id"] is None)
        else:
            # MCP: JSONRPCErrorResponse.id is optional; JSON-RPC 2.0 §5: id REQUIRED.
            id_ok = is_error and profile is MCP
        response_id = obj.get("id") if id_ok else None
        if not jsonrpc_ok or (is_error and "result" in obj):
            return Err(InvalidResponse, None, response_id)
        if not id_ok:
            return Err(InvalidResponse)
        if is_error:
            error = obj["error"]
            if (
                type(error) is not dict
                or type(error.get("code")) is not int
                or type(error.get("message")) is not str
            ):
                return Err(InvalidResponse, None, response_id)
            return Ok(ErrorResponse)
        if profile is MCP and type(obj["result"]) is not dict:
            return Err(InvalidResponse, None, response_id)
        return Ok(Response)
    return Err(InvalidRequest)


def check_decoded(out: Any, obj: Any, profile: Any = None) -> None:
    """A message decoded from ``obj`` holds exactly ``obj``'s members."""
    t = type(out)
    if t is Request:
        assert same_json(out.id, obj["id"])
    if t in (Request, Notification):
        assert same_json(out.method, obj["method"])
        assert same_json(out.params, obj.get("params"))
    elif t is Response:
        assert same_json(out.id, obj["id"]) and same_json(out.result, obj["result"])
    elif t is ErrorResponse:
        assert same_json(out.id, obj.get("id")) and same_json(out.error, obj["error"])
    # re-encoding gives back the same JSON value, minus members JSON-RPC does not define
    members = {
        Request: {"jsonrpc", "id", "method", "params"},
        Notification: {"jsonrpc", "method", "params"},
        Response: {"jsonrpc", "id", "result"},
        ErrorResponse: {"jsonrpc", "id", "error"},
    }[t]
    null_ids = profile is JSONRPC_2_0
    again = orjson.loads(encode(out, profile=JSONRPC_2_0 if null_ids else MCP))
    want = {k: v for k, v in obj.items() if k in members}
    if t is ErrorResponse and out.id is None:
        # JSON-RPC 2.0 writes id null for an unreadable id; MCP leaves it out (see encode_error)
        if null_ids:
            want["id"] = None
        else:
            want.pop("id", None)
    assert same_json(again, want), (again, want)


def check_against_model(decoder: Decoder, data: bytes, obj: Any) -> None:
    want = expected(obj, decoder.profile)
    try:
        out = decoder.decode(data)
    except InvalidRequest as exc:
        assert isinstance(want, Err), (want, exc)
        assert type(exc) is want.cls, (exc, want.cls)
        assert exc.code == INVALID_REQUEST
        assert same_json(exc.id, want.id), (exc.id, want.id)
        if type(exc) is InvalidResponse:
            assert same_json(exc.response_id, want.response_id)
        assert_good_error(exc)
        return
    if type(want) is list:
        assert type(out) is Batch and len(out.items) == len(want)
        for item, w, o in zip(out.items, want, obj):
            if isinstance(w, Err):
                assert type(item) is w.cls and same_json(item.id, w.id), (item, w.cls)
                assert_good_error(item)
            else:
                assert type(item) is w.cls
                check_decoded(item, o, decoder.profile)
        return
    assert isinstance(want, Ok), (want.cls, want.id, out)
    assert type(out) is want.cls
    check_decoded(out, obj, decoder.profile)


top_level = st.one_of(
    mostly_valid,
    envelope_like,
    st.lists(st.one_of(mostly_valid, envelope_like, json_values), max_size=4),
    json_values,
)


@PROFILES
@MANY
@given(top_level)
def test_decoder_follows_the_rules_table(profile: Any, obj: Any) -> None:
    """The decoding rules table, member by member (JSON-RPC 2.0 §4-§6, MCP § Messages)."""
    check_against_model(Decoder(profile), orjson.dumps(obj), obj)


# -- each malformed variant gets its code ------------------------------------------------


def _request_obj(id: Any, params: Any = None, **extra: Any) -> dict[str, Any]:
    obj = {"jsonrpc": "2.0", "id": id, "method": "tools/call"}
    if params is not None:
        obj["params"] = params
    obj.update(extra)
    return obj


def _raises(decode_fn: Any, data: Any, cls: type, id: Any = None) -> Any:
    """``decode_fn(data)`` raises exactly ``cls`` with the right code, reply id and message."""
    with pytest.raises(cls) as info:
        decode_fn(data)
    exc = info.value
    assert type(exc) is cls
    assert exc.code == (PARSE_ERROR if cls is ParseError else INVALID_REQUEST)
    assert same_json(exc.id, id), (exc.id, id)
    assert_good_error(exc)
    return exc


not_jsonrpc_2_0 = st.one_of(
    st.sampled_from(["1.0", "2", "2.00", "", "2.0 ", 2.0, 2, 20, True, None, [], {}, ["2.0"], {"v": "2.0"}]),
    json_values.filter(lambda v: v != "2.0"),
)
MISSING = object()


@FAST
@given(mcp_ids, st.one_of(st.just(MISSING), not_jsonrpc_2_0))
def test_bad_jsonrpc_member_echoes_the_valid_id(id: Any, jsonrpc: Any) -> None:
    """JSON-RPC 2.0 §4: jsonrpc "MUST be exactly "2.0""; §5: the reply echoes the id
    when it could be read (rules table: ``jsonrpc`` not "2.0" -> -32600, the id)."""
    obj = _request_obj(id)
    if jsonrpc is MISSING:
        del obj["jsonrpc"]
    else:
        obj["jsonrpc"] = jsonrpc
    exc = _raises(decode, orjson.dumps(obj), InvalidRequest, id)
    assert "jsonrpc" in exc.message
    # a notification has no id to echo, and gets no reply at all (JSON-RPC 2.0 §4.1)
    del obj["id"]
    _raises(decode, orjson.dumps(obj), InvalidNotification, None)


@FAST
@given(mcp_ids, st.one_of(st.just(MISSING), not_jsonrpc_2_0))
def test_bad_jsonrpc_member_in_a_response(id: Any, jsonrpc: Any) -> None:
    """A response with a bad ``jsonrpc``: -32600, reply id null, and ``response_id``
    names the request it answered so a client can fail it (rules table)."""
    for obj in ({"id": id, "result": {}}, {"id": id, "error": {"code": 1, "message": "m"}}):
        if jsonrpc is not MISSING:
            obj["jsonrpc"] = jsonrpc
        exc = _raises(decode, orjson.dumps(obj), InvalidResponse, None)
        assert same_json(exc.response_id, id)


bad_mcp_ids = st.one_of(
    st.sampled_from([None, True, False, 1.0, -0.0, 1.5, {}, [], [1], {"id": 1}]),
    json_floats,
    json_arrays,
    json_objects,
)


@FAST
@given(bad_mcp_ids, st.booleans())
def test_bad_id_under_mcp_is_invalid_with_null_reply_id(id: Any, as_response: bool) -> None:
    """MCP § Requests: "a string or integer ID", "MUST NOT be null" -> -32600 with
    reply id null (the id cannot be echoed: JSON-RPC 2.0 §5)."""
    obj = {"jsonrpc": "2.0", "id": id, "result": {}} if as_response else _request_obj(id)
    if as_response:
        exc = _raises(decode, orjson.dumps(obj), InvalidResponse, None)
        assert exc.response_id is None
    else:
        exc = _raises(decode, orjson.dumps(obj), InvalidRequest, None)
        assert "'id'" in exc.message


@FAST
@given(st.one_of(st.sampled_from([True, False, {}, [], {"a": 1}, [1]]), json_arrays, json_objects))
def test_bad_id_under_jsonrpc2(id: Any) -> None:
    """JSON-RPC 2.0 §4: an id is a String, Number or Null; never bool, array or object."""
    _raises(BASE.decode, orjson.dumps(_request_obj(id)), InvalidRequest, None)


@FAST
@given(mcp_ids, st.one_of(json_arrays, st.none(), json_text, json_ints, json_floats, st.booleans()))
def test_params_must_be_an_object_under_mcp(id: Any, params: Any) -> None:
    """MCP § Requests/Notifications: ``params?: {[key: string]: unknown}`` -> -32600, id echoed."""
    obj = {"jsonrpc": "2.0", "id": id, "method": "m", "params": params}
    exc = _raises(decode, orjson.dumps(obj), InvalidRequest, id)
    assert "'params'" in exc.message
    del obj["id"]  # a notification: the same problem, and no reply at all (JSON-RPC 2.0 §4.1)
    assert _raises(decode, orjson.dumps(obj), InvalidNotification, None).method == "m"


@FAST
@given(base_ids, st.one_of(st.none(), json_text, json_ints, json_floats, st.booleans()))
def test_params_must_be_structured_under_jsonrpc2(id: Any, params: Any) -> None:
    """JSON-RPC 2.0 §4.2: "If present, parameters ... MUST be a Structured value"."""
    obj = {"jsonrpc": "2.0", "id": id, "method": "m", "params": params}
    _raises(BASE.decode, orjson.dumps(obj), InvalidRequest, id)
    for params_ok in ([], [params], {}):
        obj["params"] = params_ok
        assert same_json(BASE.decode(orjson.dumps(obj)).params, params_ok)


@FAST
@given(mcp_ids, st.sampled_from(["result", "error"]), json_values)
def test_request_carrying_result_or_error(id: Any, member: str, value: Any) -> None:
    """JSON-RPC 2.0 §4/§5: a request is not a response (rules table: -32600, the id)."""
    _raises(decode, orjson.dumps(_request_obj(id, **{member: value})), InvalidRequest, id)


@FAST
@given(mcp_ids, st.one_of(json_values.filter(lambda v: type(v) is not str)))
def test_method_must_be_a_string(id: Any, method: Any) -> None:
    """JSON-RPC 2.0 §4: method "A String containing the name of the method"."""
    obj = _request_obj(id)
    obj["method"] = method
    _raises(decode, orjson.dumps(obj), InvalidRequest, id)


@FAST
@given(st.lists(st.one_of(mcp_messages, json_values), max_size=4))
def test_no_batches_under_mcp(items: list[Any]) -> None:
    """MCP profile: no batches (one message per line) -> -32600, reply id null."""
    data = orjson.dumps([orjson.loads(encode(i)) if hasattr(i, "__slots__") else i for i in items])
    exc = _raises(decode, data, InvalidRequest, None)
    assert "batch" in exc.message


def test_empty_batch_is_invalid() -> None:
    """JSON-RPC 2.0 §6: ``[]`` -> a single -32600 error with id null."""
    _raises(BASE.decode, b"[]", InvalidRequest, None)
    _raises(BASE.decode, b" [ ] ", InvalidRequest, None)
    _raises(decode, b"[]", InvalidRequest, None)


@FAST
@given(st.one_of(st.none(), st.booleans(), st.integers(INT_MIN, INT_MAX), json_floats, json_text))
def test_non_object_top_level(value: Any) -> None:
    """JSON-RPC 2.0 §4: a Request is an object (e.g. ``1`` -> -32600, id null)."""
    for decoder in (decode, BASE.decode):
        _raises(decoder, orjson.dumps(value), InvalidRequest, None)


@FAST
@given(st.lists(st.one_of(st.none(), st.booleans(), json_ints, json_text, json_arrays), min_size=1, max_size=4))
def test_batch_of_non_objects(items: list[Any]) -> None:
    """JSON-RPC 2.0 §7 example ``[1,2,3]``: one -32600 per element, in place, id null."""
    out = BASE.decode(orjson.dumps(items))
    assert type(out) is Batch and len(out.items) == len(items)
    for item in out.items:
        assert type(item) is InvalidRequest and item.id is None
        assert_good_error(item)


@FAST
@given(mcp_ids, error_objects(), json_objects)
def test_response_with_both_result_and_error(id: Any, error: Any, result: Any) -> None:
    """JSON-RPC 2.0 §5: "Either the result member or error member MUST be included,
    but both members MUST NOT be included." -> InvalidResponse."""
    obj = {"jsonrpc": "2.0", "id": id, "result": result, "error": error}
    for decoder in (decode, BASE.decode):
        exc = _raises(decoder, orjson.dumps(obj), InvalidResponse, None)
        assert same_json(exc.response_id, id)


bad_error_objects = st.one_of(
    st.builds(lambda m: {"message": m}, json_text),  # no code
    st.builds(lambda c, m: {"code": c, "message": m}, st.one_of(json_floats, json_text, st.booleans(), st.none(), json_arrays), json_text),
    st.builds(lambda c: {"code": c}, st.integers(-40000, 40000)),  # no message
    st.builds(lambda c, m: {"code": c, "message": m}, st.integers(-40000, 40000), st.one_of(json_ints, st.none(), st.booleans(), json_objects)),
    st.one_of(st.none(), json_text, json_arrays, json_ints),  # not an object
)


@FAST
@given(mcp_ids, bad_error_objects)
def test_error_object_needs_int_code_and_str_message(id: Any, error: Any) -> None:
    """JSON-RPC 2.0 §5.1: code "MUST be an integer", message "SHOULD be limited to a
    concise single sentence" (a String); MCP § Error Responses: "Error codes MUST be integers"."""
    obj = {"jsonrpc": "2.0", "id": id, "error": error}
    for decoder in (decode, BASE.decode):
        exc = _raises(decoder, orjson.dumps(obj), InvalidResponse, None)
        assert same_json(exc.response_id, id)


@FAST
@given(mcp_ids, st.one_of(json_arrays, json_text, json_ints, st.none(), st.booleans()))
def test_mcp_result_must_be_an_object(id: Any, result: Any) -> None:
    """MCP § Result Responses: ``result: {resultType: string; [key: string]: unknown}``;
    plain JSON-RPC 2.0 §5 allows any value."""
    data = orjson.dumps({"jsonrpc": "2.0", "id": id, "result": result})
    exc = _raises(decode, data, InvalidResponse, None)
    assert same_json(exc.response_id, id)
    assert same_json(BASE.decode(data).result, result)


# -- limits -------------------------------------------------------------------------------


@FAST
@given(mcp_messages)
def test_size_limit(msg: Any) -> None:
    """Over ``max_size`` bytes -> -32600 with id null, checked before parsing; at the
    limit the message passes."""
    data = encode(msg)
    assert same_message(Decoder(MCP, max_size=len(data)).decode(data), msg)
    small = Decoder(MCP, max_size=len(data) - 1)
    exc = _raises(small.decode, data, InvalidRequest, None)
    assert str(len(data)) in exc.message
    # the size rule comes first: over-long garbage is -32600, not -32700
    _raises(small.decode, b"\xff" * len(data), InvalidRequest, None)
    _raises(small.decode, data.decode("utf-8"), InvalidRequest, None)  # str: counted in UTF-8 bytes


def _depth(value: Any) -> int:
    if type(value) is dict:
        return 1 + max(map(_depth, value.values()), default=0)
    if type(value) is list:
        return 1 + max(map(_depth, value), default=0)
    return 0


def _nested_bytes(depth: int) -> bytes:
    """``depth``-deep params (envelope = 1 level) built as bytes (orjson.dumps stops at 255)."""
    if depth == 1:
        return b'{"jsonrpc":"2.0","id":1,"method":"m"}'
    inner = depth - 1  # params: objects and arrays alternating, an object outermost
    opening = b"".join(b'{"a":' if level % 2 == 0 else b"[" for level in range(inner))
    closing = b"".join(b"}" if level % 2 == 0 else b"]" for level in reversed(range(inner)))
    nested = opening + b"1" + closing
    return b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + nested + b"}"


@FAST
@given(st.integers(1, 40), st.integers(1, 40))
def test_depth_limit(depth: int, limit: int) -> None:
    """Nesting deeper than ``max_depth`` -> -32600, id null (the envelope counts as 1)."""
    decoder = Decoder(MCP, max_depth=limit)
    data = _nested_bytes(depth)
    assert _depth(orjson.loads(data)) == depth
    if depth <= limit:
        assert type(decoder.decode(data)) is Request
    else:
        exc = _raises(decoder.decode, data, InvalidRequest, None)
        assert str(limit) in exc.message


@pytest.mark.parametrize("depth", [1023, 1024, 1025, 1100, 5000])
def test_depth_beyond_orjson_limit(depth: int) -> None:
    """orjson stops at 1024 levels: deeper is -32600 (a limit), never -32700 or a crash,
    whatever ``max_depth`` says."""
    data = _nested_bytes(depth)
    for limit in (128, 1024, 1025, 10_000):
        decoder = Decoder(MCP, max_depth=limit)
        if depth <= min(limit, 1024):
            assert type(decoder.decode(data)) is Request
        else:
            exc = _raises(decoder.decode, data, InvalidRequest, None)
            assert str(min(limit, 1024)) in exc.message
    _raises(decode, data, InvalidRequest, None)  # default limit: 128


def test_brackets_inside_strings_are_not_nesting() -> None:
    """Depth counts structure, not ``[`` / ``{`` characters inside strings."""
    data = encode_request(1, "m", {"s": "[{" * 500, "t": ["{"] * 10})
    assert type(Decoder(MCP, max_depth=3).decode(data)) is Request
    # a top-level string full of brackets: walked, found flat, then refused as a non-object
    exc = _raises(Decoder(MCP, max_depth=3).decode, orjson.dumps("[" * 10), InvalidRequest, None)
    assert "a string" in exc.message
    # bytearray / memoryview inputs go through the same depth check
    deep = _nested_bytes(5)
    for form in (bytearray(deep), memoryview(deep)):
        _raises(Decoder(MCP, max_depth=4).decode, form, InvalidRequest, None)
        assert type(Decoder(MCP, max_depth=5).decode(form)) is Request


# -- invalid JSON -> -32700 with id null ----------------------------------------------------


def _python_json(data: bytes) -> Any:
    """An independent strict JSON reader: the stdlib, with NaN/Infinity refused, integers
    outside orjson's exact range read as floats like orjson, and infinities refused."""

    def no_constants(name: str) -> Any:
        raise ValueError(name)

    def parse_int(text: str) -> Any:
        n = int(text)
        return n if INT_MIN <= n <= INT_MAX else float(text)

    def parse_float(text: str) -> float:
        x = float(text)
        if x in (float("inf"), float("-inf")):
            raise ValueError(text)
        return x

    value = json.loads(
        data.decode("utf-8"), parse_constant=no_constants, parse_int=parse_int, parse_float=parse_float
    )
    orjson.dumps(value)  # lone surrogates ("\ud800") are not Unicode text: refused
    return value


_NOT_JSON = object()


def python_reading(data: bytes) -> Any:
    try:
        return _python_json(data)
    except (ValueError, TypeError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return _NOT_JSON


def assert_parse_error(decode_fn: Any, data: Any) -> ParseError:
    exc = _raises(decode_fn, data, ParseError, None)
    assert exc.message.startswith("Parse error")
    return exc


@PROFILES
@MANY
@given(data=st.binary(max_size=64))
@example(data=b"")
@example(data=b" \t\r\n")
@example(data=b"\xff")
@example(data=b"{")
@example(data=b"\x00")
def test_arbitrary_bytes(profile: Any, data: bytes) -> None:
    """Never crash: any bytes give a message, a ParseError or an InvalidRequest; and
    exactly the bytes that are not one JSON text get -32700 (JSON-RPC 2.0 §5.1)."""
    decoder = Decoder(profile)
    value = python_reading(data)
    if value is _NOT_JSON:
        assert_parse_error(decoder.decode, data)
    else:
        check_against_model(decoder, data, value)


def _mutations(draw: Any, text: bytes) -> bytes:
    """Break a JSON text the way a broken peer would."""
    kind = draw(st.sampled_from(["truncate", "insert", "delete", "replace", "append", "prepend", "none"]))
    pos = draw(st.integers(0, len(text)))
    junk = draw(st.sampled_from([b"{", b"}", b"[", b"]", b",", b":", b'"', b"\\", b" ", b"\n", b"0", b"-", b"e",
                                 b"x", b"null", b"NaN", b"Infinity", b"\xff", b"\xef\xbb\xbf", b"\\u", b"\\ud800",
                                 b"{}", b'{"jsonrpc":"2.0","method":"m"}', b"\x00", b"\x1f", b"\xc3", b"\xed\xa0\x80"]))
    if kind == "truncate":
        return text[:pos]
    if kind == "insert":
        return text[:pos] + junk + text[pos:]
    if kind == "delete":
        return text[:pos] + text[pos + 1:]
    if kind == "replace":
        return text[:pos] + junk + text[pos + 1:]
    if kind == "append":
        return text + junk
    if kind == "prepend":
        return junk + text
    return text


@st.composite
def json_ish(draw: Any) -> bytes:
    obj = draw(top_level)
    text = orjson.dumps(obj)
    if draw(st.booleans()):  # Python's spelling: spaces, escapes, maybe NaN
        text = json.dumps(obj, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))).encode()
    for _ in range(draw(st.integers(0, 3))):
        text = _mutations(draw, text)
    return text


@PROFILES
@MANY
@given(json_ish())
def test_json_ish_text(profile: Any, data: bytes) -> None:
    """Never crash on near-JSON; -32700 exactly when the text is not JSON, else the
    rules table decides (checked against the model)."""
    decoder = Decoder(profile)
    value = python_reading(data)
    if value is _NOT_JSON:
        assert_parse_error(decoder.decode, data)
    else:
        check_against_model(decoder, data, value)


@PROFILES
@FAST
@given(st.text(st.characters(exclude_categories=()), max_size=40), st.sampled_from([8, 64, 10_000]), st.sampled_from([2, 128, 2000]))
def test_arbitrary_text_and_limits(profile: Any, text: str, max_size: int, max_depth: int) -> None:
    """Never crash: str input (any code points, lone surrogates included) and any limits."""
    decoder = Decoder(profile, max_size=max_size, max_depth=max_depth)
    try:
        decoder.decode(text)
    except (ParseError, InvalidRequest) as exc:
        assert_good_error(exc)
        assert exc.id is None or profile.valid_id(exc.id)


@FAST
@given(mcp_messages, st.integers(0, 10_000))
def test_truncated_message(msg: Any, cut: int) -> None:
    """Every proper prefix of a message is not JSON: -32700, id null."""
    data = encode(msg)
    assert_parse_error(decode, data[: cut % len(data)])


@FAST
@given(mcp_messages, st.sampled_from([b"x", b"}", b"]", b",", b"{}", b"\n{}", b" 1", b'"', b"\x00", b"\n" + b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}"]))
def test_trailing_garbage_and_two_messages(msg: Any, tail: bytes) -> None:
    """One JSON text per message: trailing data or a second object (even on a second
    line of the same chunk) -> -32700."""
    assert_parse_error(decode, encode(msg) + tail)
    # trailing JSON whitespace alone is fine
    assert same_message(decode(encode(msg) + b" \r\n\t"), msg)


@pytest.mark.parametrize(
    "data",
    [
        b"NaN",
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":-Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}}',
        b'{"jsonrpc":"2.0","id":1,"method":"m\\ud800"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\\udc00m"}',
        b'{"jsonrpc":"2.0","id":"\\ud83d","method":"m"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\xff"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\xc0\xaf"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\xed\xa0\x80"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3"}',
        b'{"jsonrpc":"2.0","id":1,"method":"a\nb"}',
        b'{"jsonrpc":"2.0","id":1,"method":"a\x00b"}',
        b"{'jsonrpc':'2.0','id':1,'method':'m'}",
        b'{"jsonrpc":"2.0","id":1,"method":"m",}',
        b'{"jsonrpc":"2.0","id":01,"method":"m"}',
        b'{"jsonrpc":"2.0","id":1,"method":"m"}{"jsonrpc":"2.0","id":2,"method":"m"}',
        b'{"jsonrpc":"2.0","id":1,"method":"m"}\n{"jsonrpc":"2.0","id":2,"method":"m"}',
        b"",
        b"   ",
        b"\n",
    ],
)
def test_invalid_json_examples(data: bytes) -> None:
    """JSON-RPC 2.0 §5.1 -32700 "Invalid JSON was received"; MCP transports § Messages:
    UTF-8 (no invalid sequences, no encoded or escaped lone surrogates)."""
    for decoder in (decode, BASE.decode):
        assert_parse_error(decoder, data)


def test_empty_input_says_so() -> None:
    assert "empty" in assert_parse_error(decode, b"").message
    assert "empty" in assert_parse_error(decode, b" \n ").message


@pytest.mark.parametrize("form", [bytes, bytearray, memoryview])
def test_bom_is_a_parse_error(form: Any) -> None:
    """RFC 8259 §8.1: implementations MUST NOT add a BOM; we refuse one: -32700."""
    data = form(b"\xef\xbb\xbf" + encode_request(1, "m"))
    exc = assert_parse_error(decode, data)
    assert "byte-order mark" in exc.message
    assert "byte-order mark" in assert_parse_error(decode, "\ufeff" + encode_request(1, "m").decode()).message


@pytest.mark.parametrize("text", ['{"jsonrpc":"2.0","id":1,"method":"\ud800"}', "\udfff", '"\ud83d"'])
def test_str_with_lone_surrogates(text: str) -> None:
    """A Python str holding a lone surrogate is not Unicode text: -32700."""
    assert "Unicode" in assert_parse_error(decode, text).message
