"""Hypothesis strategies and helpers shared by the ``wiremcp.jsonrpc`` tests.

Spec references used throughout the suite:

* JSON-RPC 2.0 specification (https://www.jsonrpc.org/specification):
  §4 Request object, §4.1 Notification, §4.2 Parameter Structures,
  §5 Response object, §5.1 Error object, §6 Batch.
* MCP 2026-07-28, ``basic/index.mdx`` § Messages (Requests, Result Responses,
  Error Responses, Notifications) and ``schema.json`` (JSONRPCRequest,
  JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse,
  JSONRPCMessage, RequestId, Error).
* MCP 2026-07-28, ``basic/transports/stdio.mdx``: "Messages are delimited by
  newlines, and MUST NOT contain embedded newlines"; ``basic/transports/index.mdx``
  § Messages: "JSON-RPC messages MUST be UTF-8 encoded".
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from wiremcp.jsonrpc import JSONRPC_2_0, MCP, ErrorResponse, Notification, Request, Response

# -- JSON values ---------------------------------------------------------------

#: orjson reads and writes integers in [-2**63, 2**64 - 1] exactly.
INT_MIN = -(2**63)
INT_MAX = 2**64 - 1

#: Strings that stress the "one line of UTF-8" rule: newlines, the Unicode line
#: and paragraph separators, C0/C1 controls, DEL, non-ASCII, astral characters.
NASTY_CHARS = "\n\r\t\x00\x1f\x7f\x85\u2028\u2029\ufeff\"\\/é中😀\U0010ffff"

json_text = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(NASTY_CHARS)),
    max_size=20,
)
json_ints = st.integers(min_value=INT_MIN, max_value=INT_MAX)
#: NaN and the infinities are not JSON (orjson would write them as null).
json_floats = st.floats(allow_nan=False, allow_infinity=False)

json_scalars = st.one_of(st.none(), st.booleans(), json_ints, json_floats, json_text)

json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(json_text, children, max_size=4),
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(json_text, json_values, max_size=5)
json_arrays = st.lists(json_values, max_size=5)

# -- ids -----------------------------------------------------------------------

#: MCP § Messages > Requests: "Requests MUST include a string or integer ID."
mcp_ids = st.one_of(json_text, json_ints)
#: JSON-RPC 2.0 §4: "An identifier ... MUST contain a String, Number, or NULL value".
base_ids = st.one_of(json_text, json_ints, json_floats, st.none())

# -- error objects (JSON-RPC 2.0 §5.1) ------------------------------------------


@st.composite
def error_objects(draw: st.DrawFn) -> dict[str, Any]:
    error: dict[str, Any] = {"code": draw(st.integers(INT_MIN, 2**63 - 1)), "message": draw(json_text)}
    if draw(st.booleans()):
        error["data"] = draw(json_values)
    return error


# -- messages ------------------------------------------------------------------


def messages(profile: Any) -> st.SearchStrategy[Any]:
    """Every valid message of ``profile`` (not batches)."""
    if profile is MCP:
        ids, params, results, error_ids = mcp_ids, st.none() | json_objects, json_objects, mcp_ids
    else:
        ids = base_ids
        params = st.none() | json_objects | json_arrays
        results = json_values
        error_ids = base_ids
    return st.one_of(
        st.builds(Request, ids, json_text, params),
        st.builds(Notification, json_text, params),
        st.builds(Response, ids, results),
        st.builds(ErrorResponse, error_ids, error_objects()),
    )


mcp_messages = messages(MCP)
base_messages = messages(JSONRPC_2_0)


# -- envelope-shaped JSON objects, right and wrong ----------------------------------

# Values that sit on the rule boundaries, mixed with arbitrary JSON.
jsonrpc_values = st.one_of(
    st.just("2.0"), st.sampled_from(["1.0", "2", "2.00", " 2.0", "2.0\n", 2.0, 2, True]), json_values
)
any_ids = st.one_of(mcp_ids, base_ids, st.sampled_from([True, False, 1.0, -0.0, {}, []]), json_values)
method_values = st.one_of(json_text, json_values)
params_values = st.one_of(json_objects, json_arrays, json_values)
result_values = st.one_of(json_objects, json_values)
error_values = st.one_of(
    error_objects(),
    st.fixed_dictionaries(
        {},
        optional={
            "code": st.one_of(st.integers(-40000, 40000), json_values),
            "message": st.one_of(json_text, json_values),
            "data": json_values,
        },
    ),
    json_values,
)
envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": jsonrpc_values,
        "id": any_ids,
        "method": method_values,
        "params": params_values,
        "result": result_values,
        "error": error_values,
        "extra": json_values,
    },
)
#: An envelope that usually is (almost) right: the members a message has, each
#: valid most of the time, so that each rule is hit alone.
mostly_valid = st.one_of(
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0") | jsonrpc_values, "method": json_text | method_values},
        optional={"id": mcp_ids | any_ids, "params": json_objects | params_values},
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0") | jsonrpc_values, "result": json_objects | result_values},
        optional={"id": mcp_ids | any_ids, "error": error_values},
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0") | jsonrpc_values, "error": error_objects() | error_values},
        optional={"id": mcp_ids | any_ids},
    ),
)


# -- strict comparison -----------------------------------------------------------


def same_json(a: Any, b: Any) -> bool:
    """Equality that also tells 1 from 1.0 from True, and 0.0 from -0.0."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if type(a) is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def same_message(a: Any, b: Any) -> bool:
    """``a == b`` for message objects, plus `same_json` on every field."""
    if type(a) is not type(b) or a != b:
        return False
    return all(same_json(getattr(a, n), getattr(b, n)) for n in type(a).__slots__)


def assert_good_error(exc: BaseException) -> None:
    """Every wire error carries a non-empty, human-readable, one-line message."""
    message = exc.message  # type: ignore[attr-defined]
    assert type(message) is str and message.strip(), exc
    assert message == str(exc)
    assert "\n" not in message
    assert len(message) < 300, message
    assert message.isprintable(), message
