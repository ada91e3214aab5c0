"""Unit tests of the codec, the message classes and the error tree.

Spec: JSON-RPC 2.0 §4 (Request), §4.1 (Notification), §4.2 (params), §5 (Response),
§5.1 (Error object, reserved codes), §6 (Batch); MCP 2026-07-28 ``basic/index.mdx``
§ Messages.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

import wiremcp.jsonrpc as jsonrpc
from wiremcp.jsonrpc import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_MESSAGE_SIZE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSONRPC_2_0,
    MCP,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_ERROR_MAX,
    SERVER_ERROR_MIN,
    Batch,
    Decoder,
    ErrorResponse,
    InternalError,
    InvalidParams,
    InvalidRequest,
    InvalidResponse,
    JSONRPCError,
    LocalProtocolError,
    MethodNotFound,
    Notification,
    ParseError,
    Profile,
    ProtocolError,
    RemoteProtocolError,
    Request,
    Response,
    decode,
    encode,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)

BASE = Decoder(JSONRPC_2_0)


def test_public_api() -> None:
    """Everything in ``__all__`` is importable from the package."""
    for name in jsonrpc.__all__:
        assert hasattr(jsonrpc, name), name


def test_doc_example() -> None:
    req = decode(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert encode_result(req.id, {}) == b'{"jsonrpc":"2.0","id":1,"result":{}}'


# -- Profile ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, mcp, base",
    [
        ("", True, True),
        ("abc", True, True),
        (0, True, True),
        (-1, True, True),
        (2**64 - 1, True, True),
        (None, False, True),  # MCP § Requests: "the ID MUST NOT be null"
        (1.0, False, True),  # JSON-RPC 2.0 §4: a Number (fractional parts SHOULD NOT)
        (1.5, False, True),
        (True, False, False),  # a bool is not a Number, nor an integer
        (False, False, False),
        ([], False, False),
        ({}, False, False),
        (b"1", False, False),
    ],
)
def test_profile_valid_id(value: Any, mcp: bool, base: bool) -> None:
    """MCP § Requests: "a string or integer ID"; JSON-RPC 2.0 §4: "String, Number, or NULL"."""
    assert MCP.valid_id(value) is mcp
    assert JSONRPC_2_0.valid_id(value) is base


def test_profiles() -> None:
    assert (MCP.batches, MCP.null_id, MCP.float_id, MCP.positional_params) == (False, False, False, False)
    assert (JSONRPC_2_0.batches, JSONRPC_2_0.null_id, JSONRPC_2_0.float_id, JSONRPC_2_0.positional_params) == (
        True,
        True,
        True,
        True,
    )
    assert repr(MCP) == "<Profile MCP>" and repr(JSONRPC_2_0) == "<Profile JSON-RPC 2.0>"
    custom = Profile("x", batches=False, null_id=True, float_id=False, positional_params=False)
    assert custom.valid_id(None) and not custom.valid_id(1.0)


# -- Decoder --------------------------------------------------------------------------


def test_decoder_defaults() -> None:
    d = Decoder()
    assert d.profile is MCP
    assert d.max_size == DEFAULT_MAX_MESSAGE_SIZE == 16 * 1024 * 1024
    assert d.max_depth == DEFAULT_MAX_DEPTH == 128


@pytest.mark.parametrize("kwargs", [{"max_size": 0}, {"max_depth": 0}, {"max_size": -1}, {"max_depth": -5}])
def test_decoder_rejects_non_positive_limits(kwargs: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Decoder(MCP, **kwargs)


def test_decode_each_message_kind() -> None:
    """MCP § Messages: requests, result responses, error responses and notifications."""
    assert decode(b'{"jsonrpc":"2.0","id":"a","method":"m","params":{"x":1}}') == Request("a", "m", {"x": 1})
    assert decode(b'{"jsonrpc":"2.0","method":"m"}') == Notification("m")
    assert decode(b'{"jsonrpc":"2.0","method":"m","params":{}}') == Notification("m", {})
    assert decode(b'{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}') == Response(1, {"a": [1]})
    err = decode(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no","data":[1]}}')
    assert err == ErrorResponse.build(1, -32601, "no", [1])
    # members in any order, extra members ignored, whitespace around tokens allowed
    assert decode(b' {"method" : "m", "x": 1, "id": 2, "jsonrpc": "2.0"}\r\n') == Request(2, "m")


def test_params_absent_is_not_params_empty() -> None:
    """``params is None`` means the member was absent, which is not ``{}`` on the wire."""
    absent = decode(b'{"jsonrpc":"2.0","id":1,"method":"m"}')
    empty = decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}')
    assert absent.params is None and empty.params == {}
    assert absent != empty
    assert b"params" not in encode(absent) and b'"params":{}' in encode(empty)


def test_params_null_is_invalid() -> None:
    """JSON-RPC 2.0 §4.2: params, if present, MUST be Structured (null is not)."""
    for decoder in (decode, BASE.decode):
        with pytest.raises(InvalidRequest) as info:
            decoder(b'{"jsonrpc":"2.0","id":3,"method":"m","params":null}')
        assert info.value.id == 3 and "null" in info.value.message


def test_neither_method_nor_result() -> None:
    with pytest.raises(InvalidRequest) as info:
        decode(b'{"jsonrpc":"2.0","id":1}')
    assert type(info.value) is InvalidRequest and info.value.id is None
    assert "neither" in info.value.message


def test_decoder_message_validates_a_parsed_object() -> None:
    d = Decoder(MCP)
    assert d.message({"jsonrpc": "2.0", "method": "m"}) == Notification("m")
    with pytest.raises(InvalidRequest):
        d.message({"jsonrpc": "2.0"})


def test_jsonrpc_member_is_shown_briefly() -> None:
    """The error message quotes a wrong ``jsonrpc`` value briefly, whatever it is."""

    def message(value: Any, decoder: Decoder = Decoder(MCP)) -> str:
        with pytest.raises(InvalidRequest) as info:
            decoder.message({"jsonrpc": value, "id": 1, "method": "m"})
        return info.value.message

    assert message(2.0).endswith("not 2.0")
    assert message(2).endswith("not 2")
    assert message(None).endswith("not null")
    assert message(True).endswith("not true")
    assert message("1.0").endswith('not "1.0"')
    assert message("x" * 10_000).endswith('not "' + "x" * 32 + '..."')
    assert message(["2.0"]).endswith("not an array")
    assert message({"v": "2.0"}).endswith("not an object")
    assert message("\ud800\n").endswith('not "\\ud800\\n"')  # never fails, stays one line
    missing = Decoder(MCP).message
    with pytest.raises(InvalidRequest, match="missing"):
        missing({"id": 1, "method": "m"})


def test_deeply_nested_jsonrpc_member_does_not_crash() -> None:
    """Regression: with ``max_depth`` above orjson's 255-level encoding limit, a deeply
    nested ``jsonrpc`` value made the error message itself raise ``TypeError``."""
    inner = b"[" * 600 + b"1" + b"]" * 600
    for data in (
        b'{"jsonrpc":' + inner + b',"id":1,"method":"m"}',
        b'{"jsonrpc":' + inner + b',"id":1,"result":{}}',
    ):
        with pytest.raises(InvalidRequest) as info:
            Decoder(MCP, max_depth=1000).decode(data)
        assert "not an array" in info.value.message


def test_type_names_in_messages() -> None:
    """Error messages name JSON types in words (one per JSON type)."""
    for raw, word in [
        (b"null", "not null"),
        (b"true", "not a boolean"),
        (b"1", "not an integer"),
        (b"1.5", "not a number"),
        (b"[1]", "not an array"),
        (b"{}", "not an object"),
    ]:
        with pytest.raises(InvalidRequest) as info:
            decode(b'{"jsonrpc":"2.0","id":1,"method":' + raw + b"}")
        assert info.value.message == f"Invalid Request: 'method' must be a string, {word}"
    with pytest.raises(InvalidRequest, match="not a string"):
        decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":"s"}')
    with pytest.raises(InvalidRequest, match="not bytes"):  # a non-JSON type, by its name
        Decoder(MCP).message({"jsonrpc": "2.0", "id": 1, "method": b"m"})


# -- responses ------------------------------------------------------------------------


def test_error_response_id_null_or_absent() -> None:
    """JSON-RPC 2.0 §5: id null when the request's id could not be read; MCP § Error
    Responses: ``id?`` may be left out (schema: JSONRPCErrorResponse.id optional)."""
    error = b'"error":{"code":-32700,"message":"Parse error"}'
    assert decode(b'{"jsonrpc":"2.0","id":null,' + error + b"}") == ErrorResponse(None, {"code": -32700, "message": "Parse error"})
    assert decode(b'{"jsonrpc":"2.0",' + error + b"}").id is None
    assert BASE.decode(b'{"jsonrpc":"2.0","id":null,' + error + b"}").id is None
    with pytest.raises(InvalidResponse, match="must carry the 'id'"):  # JSON-RPC 2.0: REQUIRED
        BASE.decode(b'{"jsonrpc":"2.0",' + error + b"}")


@pytest.mark.parametrize("decoder", [decode, BASE.decode], ids=["mcp", "jsonrpc2"])
def test_result_response_needs_its_id(decoder: Any) -> None:
    """MCP § Result Responses: "MUST include the same ID as the request"."""
    with pytest.raises(InvalidResponse, match="must carry the 'id'") as info:
        decoder(b'{"jsonrpc":"2.0","result":{}}')
    assert info.value.id is None and info.value.response_id is None


def test_result_response_with_null_id() -> None:
    """Null is an id only in plain JSON-RPC 2.0."""
    data = b'{"jsonrpc":"2.0","id":null,"result":{}}'
    assert BASE.decode(data) == Response(None, {})
    with pytest.raises(InvalidResponse, match="not null"):
        decode(data)


@pytest.mark.parametrize(
    "error, words",
    [
        (b"[]", "'error' must be an object"),
        (b'{"message":"m"}', "'error.code' must be an integer"),
        (b'{"code":true,"message":"m"}', "'error.code' must be an integer"),
        (b'{"code":1.0,"message":"m"}', "'error.code' must be an integer"),
        (b'{"code":1}', "'error.message' must be a string"),
        (b'{"code":1,"message":null}', "'error.message' must be a string"),
    ],
)
def test_bad_error_objects(error: bytes, words: str) -> None:
    """JSON-RPC 2.0 §5.1: ``code`` an integer, ``message`` a string."""
    with pytest.raises(InvalidResponse) as info:
        decode(b'{"jsonrpc":"2.0","id":"q","error":' + error + b"}")
    assert words in info.value.message
    assert info.value.response_id == "q" and info.value.id is None


def test_error_data_may_be_anything() -> None:
    """JSON-RPC 2.0 §5.1: ``data`` "may be omitted", any value when present."""
    for data in (b"null", b"1", b'"s"', b"[1]", b'{"a":{}}'):
        msg = decode(b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":' + data + b"}}")
        assert msg.data == orjson.loads(data)


# -- batches (JSON-RPC 2.0 §6) -----------------------------------------------------------------


def test_batch_keeps_invalid_elements_in_place() -> None:
    """JSON-RPC 2.0 §6/§7: each invalid element becomes its own -32600 in the reply."""
    data = (
        b'[{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]},'
        b'{"jsonrpc":"2.0","method":"notify"},'
        b'{"foo":"boo"},'
        b'1,'
        b'{"jsonrpc":"1.0","id":"x","method":"m"},'
        b'{"jsonrpc":"2.0","id":9,"result":7},'
        b'{"jsonrpc":"2.0","id":[],"method":"m"}]'
    )
    batch = BASE.decode(data)
    assert type(batch) is Batch and len(batch.items) == 7
    req, note, foo, one, bad_version, result, bad_id = batch.items
    assert req == Request(1, "sum", [1, 2])
    assert note == Notification("notify")
    assert type(foo) is InvalidRequest and foo.id is None
    assert type(one) is InvalidRequest and one.id is None and "an integer" in one.message
    assert type(bad_version) is InvalidRequest and bad_version.id == "x"
    assert result == Response(9, 7)
    assert type(bad_id) is InvalidRequest and bad_id.id is None


def test_batch_element_responses_that_are_invalid() -> None:
    batch = BASE.decode(b'[{"jsonrpc":"2.0","result":1}]')
    assert type(batch.items[0]) is InvalidResponse


def test_nested_batch_is_an_invalid_element() -> None:
    batch = BASE.decode(b"[[]]")
    assert type(batch.items[0]) is InvalidRequest and "an array" in batch.items[0].message


def test_encode_batch_refuses_exceptions_and_junk() -> None:
    """A Batch holding InvalidRequest items is a decoding result, not something to send."""
    batch = BASE.decode(b'[{"jsonrpc":"2.0","method":"m"}, 1]')
    with pytest.raises(LocalProtocolError, match="not a JSON-RPC message"):
        encode(batch)
    for junk in ({"jsonrpc": "2.0"}, "x", None, 1):
        with pytest.raises(LocalProtocolError, match="not a JSON-RPC message"):
            encode(junk)  # type: ignore[arg-type]


# -- encoding ------------------------------------------------------------------------


def test_encode_exact_bytes() -> None:
    assert encode_request(1, "ping") == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert encode_request("a", "m", {}) == b'{"jsonrpc":"2.0","id":"a","method":"m","params":{}}'
    assert encode_notification("n") == b'{"jsonrpc":"2.0","method":"n"}'
    assert encode_notification("n", {"a": 1}) == b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}'
    assert encode_result(1, {}) == b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert encode_error(None, ParseError("Parse error").to_error()) == (
        b'{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}'
    )
    assert encode_error(None, ParseError("Parse error").to_error(), profile=JSONRPC_2_0) == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    )
    assert encode(Notification("n", [1])) == b'{"jsonrpc":"2.0","method":"n","params":[1]}'
    assert encode([Request(1, "a"), Notification("b")], line=True) == (
        b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]\n'
    )
    assert encode_request(1, "ping", line=True) == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'


def test_strings_are_escaped_onto_one_line() -> None:
    """MCP stdio: messages "MUST NOT contain embedded newlines"."""
    data = encode_request("a\nb", "m\r\n", {"\u2028": "\x00\x1f\t"})
    assert data == b'{"jsonrpc":"2.0","id":"a\\nb","method":"m\\r\\n","params":{"\xe2\x80\xa8":"\\u0000\\u001f\\t"}}'


@pytest.mark.parametrize("bad_id", [None, 1.0, 1.5, True, False, [], {}, b"1", object()])
def test_encode_request_refuses_bad_ids(bad_id: Any) -> None:
    """MCP § Requests: "Requests MUST include a string or integer ID", never null."""
    with pytest.raises(LocalProtocolError, match="a request id must be a string or an integer"):
        encode_request(bad_id, "m")


@pytest.mark.parametrize(
    "value, words",
    [
        ("\ud800", "surrogates"),  # lone surrogate: not UTF-8 encodable
        ({"k": "a\udfffb"}, "surrogates"),
        (2**64, "64-bit"),  # JSON numbers beyond what peers read exactly
        (-(2**63) - 1, "64-bit"),
        ({1: "x"}, "key"),  # JSON object keys are strings
        ({(1, 2): "x"}, "key"),
        ({"s": {1, 2}}, "not JSON serializable"),
        ({"b": b"bytes"}, "not JSON serializable"),
        ({"o": object()}, "not JSON serializable"),
    ],
)
def test_unencodable_values(value: Any, words: str) -> None:
    """Every encode path turns orjson's TypeError into LocalProtocolError."""
    calls = [
        lambda: encode_request(1, "m", {"v": value}),
        lambda: encode_notification("m", {"v": value}),
        lambda: encode_result(1, {"v": value}),
        lambda: encode_error(1, {"code": 1, "message": "m", "data": value}),
        lambda: encode(Request(1, "m", {"v": value})),
        lambda: encode(Response(1, value)),
        lambda: encode_result(1, {"v": value}, line=True),
    ]
    for call in calls:
        with pytest.raises(LocalProtocolError) as info:
            call()
        assert "cannot encode the message as JSON" in str(info.value) and words in str(info.value)
        assert isinstance(info.value, ProtocolError) and not isinstance(info.value, JSONRPCError)


def test_lone_surrogate_method_and_id() -> None:
    with pytest.raises(LocalProtocolError):
        encode_request("\ud800", "m")
    with pytest.raises(LocalProtocolError):
        encode_notification("\udc00")


def test_too_deep_to_encode() -> None:
    value: Any = 1
    for _ in range(300):
        value = [value]
    with pytest.raises(LocalProtocolError, match="Recursion"):
        encode_result(1, {"v": value})


def test_nan_and_infinity_are_written_as_null() -> None:
    """Documents orjson's behaviour: JSON has no NaN/Infinity, and orjson writes null
    rather than failing (so such values do not survive a round trip)."""
    assert encode_result(1, {"a": float("nan"), "b": float("inf")}) == b'{"jsonrpc":"2.0","id":1,"result":{"a":null,"b":null}}'


# -- message classes --------------------------------------------------------------------


def test_reprs() -> None:
    assert repr(Request(1, "m", {"a": 1})) == "Request(id=1, method='m', params={'a': 1})"
    assert repr(Notification("m")) == "Notification(method='m', params=None)"
    assert repr(Response("x", {})) == "Response(id='x', result={})"
    assert repr(ErrorResponse(None, {"code": 1, "message": "m"})) == "ErrorResponse(id=None, error={'code': 1, 'message': 'm'})"
    assert repr(Batch((Notification("m"),))) == "Batch(items=(Notification(method='m', params=None),))"


def test_equality() -> None:
    assert Request(1, "m", {}) == Request(1, "m", {})
    assert Request(1, "m", {}) != Request(2, "m", {})
    assert Request(1, "m", {}) != Request(1, "n", {})
    assert Request(1, "m", {}) != Request(1, "m", None)
    assert Request(1, "m") != Notification("m")  # different classes never equal
    assert Response(1, {}) != ErrorResponse(1, {})
    assert Response(1, {}) != (1, {})
    assert Request(1, "m").__eq__(object()) is NotImplemented
    assert Batch((Request(1, "m"),)) == Batch((Request(1, "m"),))
    assert Batch((Request(1, "m"),)) != Batch((Request(2, "m"),))


@pytest.mark.parametrize("msg", [Request(1, "m"), Notification("m"), Response(1, {}), ErrorResponse(1, {}), Batch(())])
def test_messages_are_unhashable(msg: Any) -> None:
    """Payloads are mutable dicts: equality only, no hashing."""
    with pytest.raises(TypeError, match="unhashable"):
        hash(msg)


def test_slots() -> None:
    with pytest.raises(AttributeError):
        Request(1, "m").extra = 1  # type: ignore[attr-defined]


def test_error_response_build_and_properties() -> None:
    """JSON-RPC 2.0 §5.1: ``{"code", "message"[, "data"]}``; data may be omitted."""
    plain = ErrorResponse.build(1, METHOD_NOT_FOUND, "Method not found")
    assert plain.error == {"code": -32601, "message": "Method not found"}
    assert "data" not in plain.error
    assert (plain.id, plain.code, plain.message, plain.data) == (1, -32601, "Method not found", None)
    with_data = ErrorResponse.build("a", INVALID_PARAMS, "bad", {"field": "x"})
    assert with_data.error == {"code": -32602, "message": "bad", "data": {"field": "x"}}
    assert with_data.data == {"field": "x"}
    null_data = ErrorResponse.build(1, 1, "m", None)  # data present and null
    assert null_data.error == {"code": 1, "message": "m", "data": None}
    with pytest.raises(ValueError):
        ErrorResponse.build(1, 1, "m", "one", "two")


# -- errors -------------------------------------------------------------------------------


def test_codes() -> None:
    """JSON-RPC 2.0 §5.1 reserved codes."""
    assert (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR) == (
        -32700,
        -32600,
        -32601,
        -32602,
        -32603,
    )
    assert (SERVER_ERROR_MIN, SERVER_ERROR_MAX) == (-32099, -32000)
    for cls, code in [
        (ParseError, -32700),
        (InvalidRequest, -32600),
        (InvalidResponse, -32600),
        (MethodNotFound, -32601),
        (InvalidParams, -32602),
        (InternalError, -32603),
        (JSONRPCError, -32603),
    ]:
        assert cls("m").code == code


def test_error_tree() -> None:
    for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError):
        assert issubclass(cls, JSONRPCError)
    assert issubclass(InvalidResponse, InvalidRequest)
    assert issubclass(LocalProtocolError, ProtocolError) and issubclass(RemoteProtocolError, ProtocolError)
    assert not issubclass(ProtocolError, JSONRPCError)


def test_to_error_with_and_without_data() -> None:
    exc = MethodNotFound("Method not found: x")
    assert exc.to_error() == {"code": -32601, "message": "Method not found: x"}
    assert not exc.has_data and exc.data is None
    assert str(exc) == exc.message == "Method not found: x"
    with_data = InvalidParams("bad", {"path": ["a"]})
    assert with_data.to_error() == {"code": -32602, "message": "bad", "data": {"path": ["a"]}}
    assert with_data.has_data and with_data.data == {"path": ["a"]}
    null_data = InvalidParams("bad", None)  # an explicit null data is still data
    assert null_data.has_data and null_data.to_error() == {"code": -32602, "message": "bad", "data": None}


def test_any_code_with_the_base_class() -> None:
    exc = JSONRPCError("Custom", code=-32050)
    assert exc.code == -32050 and exc.to_error() == {"code": -32050, "message": "Custom"}
    assert JSONRPCError("x").code == INTERNAL_ERROR
    assert MethodNotFound("x", code=-1).code == -1
    assert MethodNotFound("y").code == METHOD_NOT_FOUND  # the class default is untouched


def test_error_reprs() -> None:
    assert repr(MethodNotFound("nope")) == "MethodNotFound('nope', code=-32601)"
    assert repr(InvalidParams("bad", [1])) == "InvalidParams('bad', data=[1], code=-32602)"
    assert repr(JSONRPCError("c", code=5)) == "JSONRPCError('c', code=5)"


def test_ids_on_wire_errors() -> None:
    assert ParseError("p").id is None
    assert InvalidRequest("r").id is None
    assert InvalidRequest("r", id=7).id == 7
    assert InvalidRequest("r", {"d": 1}, id="x").to_error() == {"code": -32600, "message": "r", "data": {"d": 1}}
    resp = InvalidResponse("bad", response_id=3)
    assert resp.id is None and resp.response_id == 3 and resp.code == INVALID_REQUEST
    assert InvalidResponse("bad").response_id is None


def test_error_round_trips_through_error_response() -> None:
    """An exception's error object travels as an ErrorResponse and comes back intact."""
    exc = InvalidParams("Invalid params: 'x' is required", {"missing": ["x"]})
    back = decode(encode_error(5, exc.to_error()))
    assert back == ErrorResponse(5, exc.to_error())
    assert (back.code, back.message, back.data) == (exc.code, exc.message, exc.data)
