"""Fuzz the stdio line handler, `wiremcp.transports.stdio.LineServer`, with arbitrary byte streams.

The stream is fed in arbitrary chunks, then closed. Invariants
(transports/stdio/_lines.py; basic/transports/stdio.mdx; JSON-RPC 2.0 §4.1):

* `feed` and `feed_eof` never raise; every line written is one valid MCP
  JSON-RPC message;
* each line that is not a notification or a response gets exactly one reply
  with the id the decoder read from it (none when unreadable); a request
  cancelled by a later ``notifications/cancelled``, and a
  ``subscriptions/listen`` left open at end of input, get at most one;
  notifications and responses get none;
* no reply is an internal error (-32603): the fuzz server's tools cannot fail;
* after end of input everything finishes within a bounded time and nothing
  is left in flight (no unbounded growth).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from wiremcp.jsonrpc import (
    MCP,
    Decoder,
    ErrorResponse,
    InvalidRequest,
    LineSplitter,
    Notification,
    ParseError,
    Request,
    Response,
    TooLong,
)
from wiremcp.transports.stdio import LineServer

from ._budget import fuzz_settings, run_for
from ._server import build
from .strategies import line_streams

_NO_ID = b"<none>"
#: Small limits so the size and depth paths are reached.
MAX_SIZE = 400
MAX_DEPTH = 6
#: A stream that has not finished this long after its input ended is a hang.
SETTLE_SECONDS = 5.0
SERVER = build()


#: Issue 13, item 6: a malformed notification (``params`` not an object, a bad
#: ``jsonrpc``...) still gets a -32600 reply on stdio, where JSON-RPC 2.0 §4.1
#: says a notification never gets one. While this is True the fuzz target
#: tolerates that one reply; `test_regressions.py` holds the strict check (an
#: xfail that turns into a failure once the defect is fixed: then set this to False).
NOTIFICATION_ERRORS_ANSWERED = False


def _notification_shaped(line: bytes) -> bool:
    """A JSON object with a ``method`` and no ``id``: a notification, however malformed."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return type(obj) is dict and "method" in obj and "id" not in obj


def _key(id_: Any) -> bytes:
    return _NO_ID if id_ is None else orjson.dumps(id_)


def expected_replies(data: bytes) -> tuple[Counter[bytes], Counter[bytes]]:
    """(replies each id must get, replies each id may get at most), read with the same rules."""
    decoder = Decoder(MCP, max_size=MAX_SIZE, max_depth=MAX_DEPTH)
    splitter = LineSplitter(MAX_SIZE)
    exact: Counter[bytes] = Counter()
    optional: Counter[bytes] = Counter()
    cancelled: set[bytes] = set()
    requests: list[Request] = []
    for line in [*splitter.feed(data), *splitter.close()]:
        if type(line) is TooLong:
            exact[_NO_ID] += 1
            continue
        try:
            msg = decoder.decode(line)  # type: ignore[arg-type]
        except (ParseError, InvalidRequest) as exc:
            key = _key(getattr(exc, "id", None))
            if not _notification_shaped(line):  # type: ignore[arg-type]
                exact[key] += 1
            elif NOTIFICATION_ERRORS_ANSWERED:
                optional[key] += 1
            continue
        if type(msg) is Request:
            requests.append(msg)
        elif type(msg) is Notification and msg.method == "notifications/cancelled":
            target = (msg.params or {}).get("requestId")
            if type(target) in (str, int):
                cancelled.add(_key(target))
    for req in requests:
        key = _key(req.id)
        if key in cancelled or req.method == "subscriptions/listen":
            optional[key] += 1
        else:
            exact[key] += 1
    return exact, optional


async def drive(chunks: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    lines = LineServer(SERVER, out.append, max_message_size=MAX_SIZE, max_depth=MAX_DEPTH)
    for chunk in chunks:
        lines.feed(chunk)
        await asyncio.sleep(0)
    lines.feed_eof()
    await asyncio.wait_for(lines.wait_closed(), SETTLE_SECONDS)
    assert lines.in_flight == 0
    for _ in range(3):
        await asyncio.sleep(0)
    current = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    assert not left, f"tasks still running after the stream closed: {left}"
    return out


def check_stream(chunks: list[bytes]) -> None:
    data = b"".join(chunks)
    written = asyncio.run(drive(chunks))
    replies: Counter[bytes] = Counter()
    decoder = Decoder(MCP)
    for raw in written:
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1, raw
        msg = decoder.decode(raw[:-1])
        if type(msg) is ErrorResponse:
            assert msg.code != -32603, f"internal error for {data!r}: {raw!r}"
            replies[_key(msg.id)] += 1
        elif type(msg) is Response:
            replies[_key(msg.id)] += 1
    exact, optional = expected_replies(data)
    for key in set(exact) | set(optional) | set(replies):
        low, high = exact[key], exact[key] + optional[key]
        assert low <= replies[key] <= high, (
            f"id {key!r}: {replies[key]} replies, expected {low}..{high}\ninput: {data!r}\noutput: {written!r}"
        )


@st.composite
def chunked(draw: st.DrawFn) -> list[bytes]:
    data = draw(st.one_of(line_streams, st.binary(max_size=300)))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=4)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:])]


@fuzz_settings(200)
@given(chunks=chunked())
def fuzz_stdio_lines(chunks: list[bytes]) -> None:
    check_stream(chunks)


def test_stdio_lines() -> None:
    run_for(fuzz_stdio_lines)
