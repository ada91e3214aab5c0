"""Inputs for the fuzz targets: raw bytes mixed with nearly valid MCP messages.

Random bytes alone almost never form JSON, so every strategy here draws from
three pools: arbitrary bytes, JSON texts of any shape, and valid messages with
one or more members changed (the inputs most likely to reach deep code).
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import strategies as st

__all__ = [
    "json_values",
    "ids",
    "meta",
    "message_objects",
    "message_lines",
    "line_streams",
    "METHODS",
]

META_MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
}

#: Methods a server knows (both eras), a few it does not, and near misses.
METHODS = [
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "tools/cal",
    "",
    "rpc.x",
]

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)

json_values: st.SearchStrategy[Any] = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

#: Valid ids (strings, integers) and invalid ones (null, floats, booleans, containers).
ids = st.one_of(
    st.integers(min_value=-3, max_value=40),
    st.sampled_from(["a", "b", "", "1"]),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    _scalars,
    json_values,
)

#: Found by the stdio fuzz target (reported in issue 13's hardening note): a
#: ``_meta`` ``io.modelcontextprotocol/logLevel`` that is an array or an object
#: is answered -32603 (protocol/meta.py tests ``level in`` a dict: TypeError),
#: not -32602. While True the strategies send only scalar log levels;
#: test_regressions.py holds the strict check (an xfail until protocol/meta.py
#: is fixed; then set this to False).
UNHASHABLE_LOG_LEVEL_FAILS = False

_META_KEYS = [
    "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/logLevel", "progressToken", "io.modelcontextprotocol/clientInfo",
]


def _meta_with(extra: dict[str, Any]) -> dict[str, Any]:
    level = extra.get("io.modelcontextprotocol/logLevel")
    if UNHASHABLE_LOG_LEVEL_FAILS and type(level) in (list, dict):
        extra = {**extra, "io.modelcontextprotocol/logLevel": "loud"}
    return {**META_MODERN, **extra}


meta = st.one_of(
    st.just(META_MODERN),
    st.builds(_meta_with, st.dictionaries(st.sampled_from(_META_KEYS), json_values, max_size=2)),
    json_values,
)

_TOOL_NAMES = ["echo", "add", "pick", "scale", "tags", "point", "slow", "steps", "nope", ""]

_tool_call_params = st.fixed_dictionaries(
    {"name": st.one_of(st.sampled_from(_TOOL_NAMES), json_values)},
    optional={
        "arguments": st.one_of(
            st.dictionaries(st.sampled_from(["text", "a", "b", "color", "size", "factor", "items", "x", "y",
                                             "seconds", "count", "label", "z"]), json_values, max_size=4),
            json_values,
        ),
    },
)

_params = st.one_of(
    _tool_call_params,
    st.fixed_dictionaries({"uri": st.one_of(st.sampled_from(
        ["note://a", "note://x/y", "file:///logs/a.txt", "note://%ff", "note://" + "a" * 50]), st.text(max_size=30))}),
    st.fixed_dictionaries({"name": st.sampled_from(["greet", "nope"]),
                           "arguments": st.dictionaries(st.sampled_from(["who", "x"]), json_values, max_size=2)}),
    st.fixed_dictionaries({"requestId": ids}, optional={"reason": json_values}),
    st.fixed_dictionaries({"protocolVersion": st.sampled_from(["2025-11-25", "2025-06-18", "1999-01-01"]),
                           "capabilities": st.just({}),
                           "clientInfo": st.just({"name": "fuzz", "version": "0"})}),
    st.dictionaries(st.text(max_size=8), json_values, max_size=3),
)


@st.composite
def message_objects(draw: st.DrawFn) -> Any:
    """A request, notification or response, valid or with members changed."""
    kind = draw(st.sampled_from(["request", "request", "request", "notification", "response", "junk"]))
    if kind == "junk":
        return draw(json_values)
    obj: dict[str, Any] = {"jsonrpc": "2.0"}
    if kind == "response":
        obj["id"] = draw(ids)
        if draw(st.booleans()):
            obj["result"] = draw(json_values)
        else:
            obj["error"] = draw(st.one_of(
                st.fixed_dictionaries({"code": st.integers(-32800, -32000), "message": st.text(max_size=10)}),
                json_values,
            ))
    else:
        obj["method"] = draw(st.sampled_from(METHODS))
        if kind == "request":
            obj["id"] = draw(ids)
        params = draw(_params)
        if type(params) is dict and draw(st.integers(0, 4)):
            params = {**params, "_meta": draw(meta)}
        if draw(st.integers(0, 6)):
            obj["params"] = params
        elif draw(st.booleans()):
            obj["params"] = draw(json_values)
    # Change, drop or add one member now and then.
    if not draw(st.integers(0, 5)):
        member = draw(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]))
        if draw(st.booleans()):
            obj.pop(member, None)
        else:
            obj[member] = draw(json_values)
    return obj


@st.composite
def message_lines(draw: st.DrawFn) -> bytes:
    """One line's bytes (no newline): a message, broken JSON, or anything."""
    how = draw(st.sampled_from(["message", "message", "message", "message", "bytes", "cut", "text"]))
    if how == "bytes":
        return draw(st.binary(max_size=40)).replace(b"\n", b"")
    if how == "text":
        return draw(st.text(max_size=40)).encode("utf-8", "surrogatepass").replace(b"\n", b"")
    data = orjson.dumps(draw(message_objects()))
    if how == "cut":
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(max_size=3)).replace(b"\n", b"")
    return data


#: A whole input stream: lines joined by newlines, maybe a last line without one.
line_streams = st.builds(
    lambda lines, tail: b"\n".join(lines) + (b"\n" if tail else b""),
    st.lists(message_lines(), max_size=12),
    st.booleans(),
)
