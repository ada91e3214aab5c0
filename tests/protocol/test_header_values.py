"""Header value encoding for parameters mirrored into ``Mcp-Param-*`` (and ``Mcp-Name``).

2026-07-28 basic/transports/streamable-http.mdx, "Value Encoding": a value
travels as itself when it is visible ASCII and spaces with no leading or
trailing whitespace and not shaped like the sentinel; otherwise as
``=?base64?{Base64 of its UTF-8}?=``. Integers are decimal, booleans
``true``/``false``. A receiver decodes the sentinel form, accepts a plain
value (tabs included: RFC 9110 allows them in field values) and refuses
anything else (``None``): invalid Base64, invalid UTF-8, bytes outside ASCII.
"""

from __future__ import annotations

import base64

import pytest

from wiremcp.protocol.headers import decode_header_value, encode_header_value


def sentinel(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


@pytest.mark.parametrize("value", ["us-west1", "a b", "Hello, world!", "x", "X-Ray X", "~!@#$%^&*()_+{}|:<>?", "=?base64?", "x?="])
def test_visible_ascii_travels_as_itself(value: str) -> None:
    assert encode_header_value(value) == value
    assert decode_header_value(value) == value


@pytest.mark.parametrize(
    "value",
    [
        " leading", "trailing ", " both ", "", " ",  # whitespace at an end (or nothing but it)
        "tab\there", "line\nbreak", "cr\rhere", "nul\x00", "del\x7f",  # controls
        "Hello, 世界", "café",  # outside ASCII
        "=?base64?SGk=?=", "=?base64??=",  # shaped like the sentinel: would be read as encoded
    ],
)
def test_anything_else_is_base64_encoded_and_round_trips(value: str) -> None:
    if value == "":
        # An empty string is plain (nothing to strip); it still round-trips.
        assert encode_header_value(value) == ""
        return
    encoded = encode_header_value(value)
    assert encoded == sentinel(value)
    assert decode_header_value(encoded) == value


def test_integers_are_decimal_and_booleans_are_words() -> None:
    assert encode_header_value(42) == "42"
    assert encode_header_value(-7) == "-7"
    assert encode_header_value(0) == "0"
    assert encode_header_value(2**53 - 1) == "9007199254740991"
    # bool is an int in Python: it must still be the word, never "1"/"0".
    assert encode_header_value(True) == "true"
    assert encode_header_value(False) == "false"


@pytest.mark.parametrize("value", [1.5, None, b"bytes", ["a"]])
def test_other_types_cannot_be_mirrored(value: object) -> None:
    with pytest.raises(TypeError, match=f"cannot mirror a {type(value).__name__} into a header"):
        encode_header_value(value)  # type: ignore[arg-type]


def test_the_sentinel_form_is_decoded() -> None:
    assert decode_header_value("=?base64?IHBhZGRlZCA=?=") == " padded "
    assert decode_header_value(sentinel("Hello, 世界")) == "Hello, 世界"
    # The shortest sentinel form holds the empty string.
    assert decode_header_value("=?base64??=") == ""


def test_a_value_too_short_to_hold_both_sentinel_ends_is_taken_as_is() -> None:
    # "=?base64?=" starts with the head and ends with the tail only by sharing its "=".
    assert decode_header_value("=?base64?=") == "=?base64?="


@pytest.mark.parametrize(
    "value",
    [
        "=?base64?not base64?=",  # not Base64
        "=?base64?SGk?=",  # missing padding: validate=True refuses it
        "=?base64?" + base64.b64encode(b"\xff\xfe").decode() + "?=",  # not UTF-8
        "=?base64?SGVsbG8=é?=",  # a non-ASCII character inside
    ],
)
def test_an_invalid_sentinel_form_is_refused(value: str) -> None:
    assert decode_header_value(value) is None


def test_a_plain_value_may_hold_tabs_but_no_other_control() -> None:
    assert decode_header_value("a\tb") == "a\tb"
    assert decode_header_value("\tx\t") == "\tx\t"
    for bad in ("a\nb", "a\rb", "a\x00b", "a\x7fb", "a\x1bb"):
        assert decode_header_value(bad) is None, repr(bad)


def test_bytes_outside_ascii_are_refused() -> None:
    # Received bytes are decoded as Latin-1: a UTF-8 "é" shows as two non-ASCII characters.
    assert decode_header_value("caf\xc3\xa9") is None
    assert decode_header_value("\xa0") is None
