"""Inputs the fuzzers found (or that the review behind issue 13 found) that broke an invariant.

Each is replayed through the same checks as its fuzz target. A defect still
open is an ``xfail(strict=True)``: the day it is fixed the test passes, strict
turns that into a failure, and whoever fixed it removes the mark and sets the
matching tolerance in the fuzz target to False, so the fuzzer checks the rule
from then on.
"""

from __future__ import annotations

import asyncio

import orjson
import pytest

from . import strategies, test_asgi, test_stdio_lines

_INIT = orjson.dumps(
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
)
_HEADERS = [
    (b"host", b"localhost:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
]


def _strict_notifications(chunks: list[bytes]) -> None:
    saved = test_stdio_lines.NOTIFICATION_ERRORS_ANSWERED
    test_stdio_lines.NOTIFICATION_ERRORS_ANSWERED = False
    try:
        test_stdio_lines.check_stream(chunks)
    finally:
        test_stdio_lines.NOTIFICATION_ERRORS_ANSWERED = saved


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":5}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
        b'{"jsonrpc":"1.0","method":"notifications/initialized"}',
        b'{"method":7}',
    ],
)
def test_a_malformed_notification_gets_no_reply_on_stdio(line: bytes) -> None:
    """JSON-RPC 2.0 §4.1: a notification is never answered, whatever is wrong with it."""
    _strict_notifications([line + b'\n{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}\n'])


def test_well_formed_streams_pass_the_strict_notification_check() -> None:
    """The strict check above fails only on the defect: a valid notification and a ping pass it."""
    _strict_notifications([b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n',
                           b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}\n'])


def _get_with_last_event_id(value: bytes) -> None:
    init = {"method": "POST", "headers": _HEADERS, "chunks": [_INIT]}
    resume = {
        "method": "GET",
        "headers": [_HEADERS[0], (b"accept", b"text/event-stream"), (b"mcp-session-id", b"$session"),
                    (b"mcp-protocol-version", b"2025-11-25"), (b"last-event-id", value)],
        "chunks": [],
    }
    asyncio.run(test_asgi.run_scenario([init, resume]))


@pytest.mark.parametrize("value", [b"0-" + b"9" * 5000, b"9" * 5000 + b"-1"], ids=["event", "stream"])
def test_a_huge_last_event_id_is_an_unknown_one(value: bytes) -> None:
    """2025-11-25 transports.mdx, Resumability: an id the server did not give out opens the standalone stream."""
    _get_with_last_event_id(value)


def test_an_unknown_last_event_id_opens_the_standalone_stream() -> None:
    _get_with_last_event_id(b"1-" + b"9" * 40)


@pytest.mark.parametrize("level", [[], {}, ["debug"]], ids=["array", "object", "array-of-level"])
def test_a_log_level_that_is_not_a_string_is_invalid_params(level: object) -> None:
    """basic/index.mdx, _meta: logLevel is a LoggingLevel string; anything else is -32602, not a server failure."""
    assert not strategies.UNHASHABLE_LOG_LEVEL_FAILS  # the fuzzer no longer tolerates it
    line = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                         "params": {"_meta": {**strategies.META_MODERN, "io.modelcontextprotocol/logLevel": level}}})
    test_stdio_lines.check_stream([line + b"\n"])  # asserts: one reply, never -32603


def test_a_log_level_that_is_a_wrong_string_is_invalid_params() -> None:
    """The same check passes for a string that is not a level: -32602 (what the fix must give for the others)."""
    line = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "server/discover",
                         "params": {"_meta": {**strategies.META_MODERN, "io.modelcontextprotocol/logLevel": "loud"}}})
    test_stdio_lines.check_stream([line + b"\n"])


def test_a_notification_nested_too_deep_gets_no_reply() -> None:
    """Found by fuzzing: a notification over the depth limit got a -32600 reply (JSON-RPC 2.0 section 4.1)."""
    deep = b'{"jsonrpc":"2.0","method":"ping","params":{"who":' + b"[" * 200 + b"]" * 200 + b"}}"
    _strict_notifications([deep + b"\n"])


def test_a_notification_with_duplicate_keys_and_an_empty_method_gets_no_reply() -> None:
    """Found by fuzzing: ``{"":null,"method":"","":{"":""}}`` is a (malformed) notification."""
    _strict_notifications([b'{"":null,"method":"","":{"":""}}\n'])
