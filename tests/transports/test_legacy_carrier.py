"""The one SSE carrier loop (transports/http/_carrier.py), fed a scripted stream.

Both stores feed this loop (`_sessions._Pump` in memory, `_shared_streams.RedisFeed`
from Redis); their end-to-end behaviour over real HTTP is in test_http_legacy.py
and tests/scale/. Here each wire rule is checked once, on the ASGI messages written.
"""

from __future__ import annotations

import asyncio
from typing import Any

from wiremcp.transports.http._asgi import KEEPALIVE_COMMENT
from wiremcp.transports.http._carrier import Signal, carry


class Script:
    """A feed that gives the signals it was told to, in order."""

    def __init__(
        self, *signals: Signal | None, chunks: list[tuple[bytes, bool]] | None = None, alone: bytes | None = None, primes: bytes = b""
    ) -> None:
        self.polls = list(signals)
        self.chunks = list(chunks or [])
        self.answer = alone
        self.primes = primes
        self.asked: list[str] = []
        self.closed = False

    async def open(self) -> None:
        self.asked.append("open")

    def poll(self) -> Signal | None:
        return self.polls.pop(0) if self.polls else None

    async def wait(self, keepalive: float | None) -> Signal | None:
        self.asked.append("wait")
        return self.polls.pop(0) if self.polls else Signal.GONE

    def alone(self) -> bytes | None:
        self.asked.append("alone")
        return self.answer

    def prime(self) -> bytes:
        self.asked.append("prime")
        return self.primes

    def take(self) -> tuple[bytes, bool]:
        self.asked.append("take")
        return self.chunks.pop(0)

    def ending(self) -> bytes:
        return b"retry: 5\n\n"

    async def close(self) -> None:
        self.closed = True


def run(feed: Script, *, json_ok: bool) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(carry(feed, send, json_ok=json_ok, keepalive=15.0))
    assert feed.closed
    return sent


def bodies(sent: list[dict[str, Any]]) -> list[tuple[bytes, bool]]:
    return [(m["body"], m.get("more_body", False)) for m in sent if m["type"] == "http.response.body"]


def status(sent: list[dict[str, Any]]) -> int:
    return next(m["status"] for m in sent if m["type"] == "http.response.start")


def content_type(sent: list[dict[str, Any]]) -> bytes:
    start = next(m for m in sent if m["type"] == "http.response.start")
    return dict(start["headers"])[b"content-type"]


def test_a_response_answered_before_anything_else_is_one_json_body():
    feed = Script(Signal.READY, alone=b'{"jsonrpc":"2.0","id":1,"result":{}}')
    sent = run(feed, json_ok=True)
    assert status(sent) == 200 and content_type(sent).startswith(b"application/json")
    assert bodies(sent) == [(b'{"jsonrpc":"2.0","id":1,"result":{}}', False)]
    assert "prime" not in feed.asked and "take" not in feed.asked  # no event id given out


def test_events_first_make_an_sse_stream_primed_before_the_events_are_numbered():
    feed = Script(Signal.READY, Signal.READY, chunks=[(b"id: 1-2\ndata: n\n\n", False), (b"id: 1-3\ndata: r\n\n", True)],
                  primes=b"id: 1-1\ndata: \n\n")  # fmt: skip
    sent = run(feed, json_ok=True)
    assert content_type(sent) == b"text/event-stream"
    assert bodies(sent) == [(b"id: 1-1\ndata: \n\nid: 1-2\ndata: n\n\n", True), (b"id: 1-3\ndata: r\n\n", False)]
    assert feed.asked.index("prime") < feed.asked.index("take")


def test_a_get_has_its_head_at_once_with_a_keepalive_when_there_is_no_priming_event():
    feed = Script(None, chunks=[(b"", False)])
    sent = run(feed, json_ok=False)
    assert bodies(sent)[0] == (KEEPALIVE_COMMENT, True)
    primed = Script(None, chunks=[(b"", False)], primes=b"id: 0-4\ndata: \n\n")
    assert bodies(run(primed, json_ok=False))[0] == (b"id: 0-4\ndata: \n\n", True)


def test_a_quiet_stream_gets_keepalives_after_its_priming_event():
    feed = Script(None, Signal.QUIET, None, Signal.QUIET, primes=b"id: 1-1\ndata: \n\n")
    sent = run(feed, json_ok=True)
    assert bodies(sent) == [(b"id: 1-1\ndata: \n\n" + KEEPALIVE_COMMENT, True), (KEEPALIVE_COMMENT, True)]
    assert feed.asked.count("prime") == 1


def test_a_lost_session_is_404_before_anything_was_written_else_the_end():
    sent = run(Script(Signal.LOST), json_ok=True)
    assert status(sent) == 404
    streaming = run(Script(None, Signal.QUIET, Signal.LOST), json_ok=True)
    assert status(streaming) == 200 and bodies(streaming)[-1] == (b"retry: 5\n\n", False)


def test_released_ends_with_the_streams_ending_and_gone_writes_nothing():
    assert bodies(run(Script(Signal.RELEASED), json_ok=True)) == [(b"retry: 5\n\n", False)]
    assert run(Script(Signal.GONE), json_ok=True) == []


def test_a_finished_stream_with_nothing_left_ends_the_response():
    assert bodies(run(Script(Signal.ENDED), json_ok=True)) == [(b"", False)]
