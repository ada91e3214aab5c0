"""Unit and property tests of `LineSplitter`.

Spec: MCP 2026-07-28 ``basic/transports/stdio.mdx``: "Messages are delimited by
newlines, and MUST NOT contain embedded newlines"; "one newline-delimited
JSON-RPC message per line over a reliable bidirectional byte stream".
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wiremcp.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, TooLong

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def split_all(chunks: list[bytes], max_line: int = DEFAULT_MAX_MESSAGE_SIZE) -> list[Any]:
    s = LineSplitter(max_line)
    out: list[Any] = []
    for chunk in chunks:
        out += s.feed(chunk)
        assert s.buffered <= max_line  # an oversized line is never held whole
    out += s.close()
    assert s.buffered == 0
    return [("too long", x.size) if type(x) is TooLong else x for x in out]


def reference(stream: bytes, max_line: int) -> list[Any]:
    """The lines of ``stream`` as the stdio binding defines them: split on b"\\n", the
    unterminated tail counts, lines over ``max_line`` become TooLong(size), blank lines
    (JSON whitespace only) carry no message."""
    out: list[Any] = []
    for line in stream.split(b"\n"):
        if len(line) > max_line:
            out.append(("too long", len(line)))
        elif line.strip(b" \t\r"):
            out.append(line)
    return out


def test_basic_lines() -> None:
    s = LineSplitter()
    assert s.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    assert s.feed(b'{"c"') == [] and s.buffered == 4
    assert s.feed(b":3}\n") == [b'{"c":3}'] and s.buffered == 0
    assert s.feed(b"") == []
    assert s.close() == []


def test_default_limit() -> None:
    assert LineSplitter().max_line == DEFAULT_MAX_MESSAGE_SIZE


def test_blank_lines_are_skipped() -> None:
    """A line of JSON whitespace only carries no message."""
    s = LineSplitter()
    assert s.feed(b"\n\n \n\t\r\n\r\na\n  \t \n") == [b"a"]
    # other bytes are not JSON whitespace: the decoder will answer them (-32700)
    assert s.feed(b"\x0b\n\x0c\n\xc2\xa0\n") == [b"\x0b", b"\x0c", b"\xc2\xa0"]


def test_crlf_keeps_the_carriage_return() -> None:
    """CR before LF is trailing JSON whitespace; the decoder accepts it."""
    assert LineSplitter().feed(b'{"a":1}\r\n') == [b'{"a":1}\r']


def test_close_with_an_unterminated_last_line() -> None:
    s = LineSplitter()
    assert s.feed(b"one\ntwo") == [b"one"]
    assert s.close() == [b"two"]
    assert s.close() == []
    s = LineSplitter()
    s.feed(b"  \r")
    assert s.close() == []  # a blank tail is still blank


def test_split_in_every_position() -> None:
    stream = b'{"jsonrpc":"2.0","id":1,"method":"a"}\n\n{"x":"\xe2\x80\xa8"}\r\nlast'
    want = reference(stream, 1000)
    for i in range(len(stream) + 1):
        for j in range(i, len(stream) + 1):
            assert split_all([stream[:i], stream[i:j], stream[j:]], 1000) == want, (i, j)


def test_byte_at_a_time() -> None:
    stream = b"ab\ncd\n\nef"
    assert split_all([bytes([b]) for b in stream]) == [b"ab", b"cd", b"ef"]


@pytest.mark.parametrize("max_line", [1, 3, 5, 8])
def test_too_long_sizes(max_line: int) -> None:
    """An oversized line becomes TooLong(size) in its place; its neighbours survive."""
    stream = b"ab\n" + b"x" * 9 + b"\ncd\n" + b"y" * 6
    want = reference(stream, max_line)
    for i in range(len(stream) + 1):
        assert split_all([stream[:i], stream[i:]], max_line) == want
    assert split_all([bytes([b]) for b in stream], max_line) == want


def test_too_long_is_not_buffered() -> None:
    """The splitter drops an oversized line's bytes as they arrive."""
    s = LineSplitter(10)
    assert s.feed(b"x" * 8) == [] and s.buffered == 8
    assert s.feed(b"x" * 8) == [] and s.buffered == 0  # over the limit: dropped
    for _ in range(100):
        assert s.feed(b"x" * 1000) == [] and s.buffered == 0
    out = s.feed(b"xx\nok\n")
    assert [type(x) for x in out] == [TooLong, bytes]
    assert out[0].size == 16 + 100_000 + 2 and out[1] == b"ok"
    assert repr(out[0]) == "TooLong(size=100018)"


def test_too_long_at_close() -> None:
    s = LineSplitter(4)
    s.feed(b"ok\n12345678")
    out = s.close()
    assert len(out) == 1 and type(out[0]) is TooLong and out[0].size == 8
    assert s.close() == []


def test_exactly_at_the_limit() -> None:
    assert split_all([b"12345\n"], 5) == [b"12345"]
    assert split_all([b"123", b"45\n"], 5) == [b"12345"]
    assert split_all([b"123", b"456\n"], 5) == [("too long", 6)]
    assert split_all([b"12345"], 5) == [b"12345"]
    assert split_all([b"123456"], 5) == [("too long", 6)]
    # a complete oversized line in one chunk is reported, not buffered
    assert split_all([b"1234567\nab\n"], 5) == [("too long", 7), b"ab"]


def test_long_blank_line_is_still_too_long() -> None:
    assert split_all([b" " * 20 + b"\n"], 5) == [("too long", 20)]


lines = st.lists(
    st.one_of(
        st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")),
        st.sampled_from([b"", b" ", b"\r", b"\t \r", b'{"jsonrpc":"2.0"}']),
    ),
    max_size=8,
)


@st.composite
def chunked(draw: Any) -> tuple[bytes, list[bytes]]:
    stream = b"\n".join(draw(lines)) + draw(st.sampled_from([b"", b"\n"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    bounds = [0, *cuts, len(stream)]
    return stream, [stream[a:b] for a, b in zip(bounds, bounds[1:])]


@FAST
@given(chunked(), st.sampled_from([1, 4, 8, 1000]))
def test_any_chunking_gives_the_same_lines(case: tuple[bytes, list[bytes]], max_line: int) -> None:
    """Arbitrary chunking of a byte stream yields the same lines (and TooLong sizes)."""
    stream, chunks = case
    assert split_all(chunks, max_line) == reference(stream, max_line) == split_all([stream], max_line)


def test_bytearray_input() -> None:
    s = LineSplitter()
    assert s.feed(bytearray(b"a\nb")) == [b"a"]
    assert s.close() == [b"b"]
