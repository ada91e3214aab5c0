"""Tool arguments converted to the declared Python types (`wiremcp.server._schema._convert`).

The converter runs after the schema check passed (server/tools.mdx, "Error
Handling": what does not convert is an invalid-arguments tool error).

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

import dataclasses
import datetime
import typing
import uuid
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schema_hints import Color, IntX, Level, Node, StrX, XY
from wiremcp import Field
from wiremcp.server._schema import (
    ArgumentError,
    arguments_converter,
    compile_validator,
    converter_for,
    schema_for,
    signature_info,
)


# -- conversion --------------------------------------------------------------------------------------


def test_conversions():
    """Arguments become the declared Python types after the schema check."""

    @dataclasses.dataclass
    class Box:
        w: int
        color: Color = Color.RED

    class Spec(TypedDict):
        box: Box
        when: datetime.datetime

    def f(
        a: int,
        c: Color,
        t: tuple[int, str],
        v: tuple[Color, ...],
        s: set[int],
        fs: frozenset[str],
        b: bytes,
        box: Box,
        spec: Spec,
        u: uuid.UUID,
        d: datetime.date,
        tm: datetime.time,
        boxes: list[Box],
        by_name: dict[str, Color],
        maybe: Optional[Box] = None,
        either: Union[int, Box] = 0,
        text: str = "",
    ) -> None: ...

    info = signature_info(f)
    convert = arguments_converter(info.params)
    arguments = {
        "a": 3.0,
        "c": "green",
        "t": [1, "x"],
        "v": ["red"],
        "s": [1, 2],
        "fs": ["a"],
        "b": "aGk=",
        "box": {"w": 2, "color": "green"},
        "spec": {"box": {"w": 1}, "when": "2024-05-06T07:08:09Z"},
        "u": "12345678-1234-5678-1234-567812345678",
        "d": "2024-01-02",
        "tm": "10:11:12",
        "boxes": [{"w": 1}],
        "by_name": {"x": "red"},
        "maybe": {"w": 5},
        "either": {"w": 6},
        "text": "t",
    }
    out = convert(arguments)
    assert out["a"] == 3 and type(out["a"]) is int
    assert out["c"] is Color.GREEN
    assert out["t"] == (1, "x") and out["v"] == (Color.RED,)
    assert out["s"] == {1, 2} and out["fs"] == frozenset({"a"}) and type(out["fs"]) is frozenset
    assert out["b"] == b"hi"
    assert out["box"] == Box(2, Color.GREEN)
    assert out["spec"] == {"box": Box(1), "when": datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)}
    assert out["u"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert out["d"] == datetime.date(2024, 1, 2) and out["tm"] == datetime.time(10, 11, 12)
    assert out["boxes"] == [Box(1)] and out["by_name"] == {"x": Color.RED}
    assert out["maybe"] == Box(5) and out["either"] == Box(6)
    again = convert({**arguments, "maybe": None, "either": 4})
    assert again["maybe"] is None and again["either"] == 4
    assert arguments["box"] == {"w": 2, "color": "green"}  # the caller's dict is not changed


def test_unchanged_arguments_are_not_copied():
    def f(n: int, text: str = "") -> None: ...

    convert = arguments_converter(signature_info(f).params)
    arguments = {"n": 3, "text": "x"}
    assert convert(arguments) is arguments  # nothing to convert: no copy
    floated = {"n": 3.0}
    assert convert(floated) == {"n": 3} and floated == {"n": 3.0}


def test_no_converter_for_json_native_parameters():
    """The hot path: str/bool/float/Literal/lists of them need no conversion step."""

    def echo(text: str, flag: bool = False, ratio: float = 1.0, mode: Literal["a"] = "a", words: list[str] = [], meta: dict[str, Any] = {}) -> str: ...

    assert arguments_converter(signature_info(echo).params) is None


def test_conversion_failures_name_the_argument():
    @dataclasses.dataclass
    class Positive:
        n: int

        def __post_init__(self) -> None:
            if self.n <= 0:
                raise ValueError("n must be positive")

    def f(when: datetime.date, p: Optional[Positive] = None, raw: bytes = b"") -> None: ...

    convert = arguments_converter(signature_info(f).params)
    with pytest.raises(ArgumentError, match="'when': Invalid isoformat"):
        convert({"when": "soon"})
    with pytest.raises(ArgumentError, match="'p': n must be positive"):
        convert({"when": "2024-01-01", "p": {"n": 0}})
    with pytest.raises(ArgumentError, match="'raw': is not valid base64"):
        convert({"when": "2024-01-01", "raw": "***"})


def test_a_union_converts_by_the_member_its_schema_matches():
    """The first member whose schema accepts the value converts it (as the validator would pick)."""
    assert converter_for(Union[int, float])(1.0) == 1 and type(converter_for(Union[int, float])(1.0)) is int
    assert converter_for(Union[int, float])(1.5) == 1.5
    assert type(converter_for(Union[float, int])(1.0)) is float  # float accepts 1.0 first
    assert converter_for(Union[Color, str])("red") is Color.RED
    assert converter_for(Union[Color, str])("blue") == "blue"
    either = converter_for(Union[IntX, StrX])  # same keys: told apart by the field types
    assert either({"x": 1}) == IntX(1) and either({"x": "a"}) == StrX("a")
    keys = converter_for(Union[StrX, XY])  # different keys: told apart by the keys
    assert keys({"x": 1, "y": 2}) == XY(1, 2) and keys({"x": "a"}) == StrX("a")
    assert converter_for(Union[XY, dict[str, int]])({"x": 1}) == XY(1)  # a defaulted field may be left out
    assert converter_for(Union[XY, dict[str, int]])({"z": 1}) == {"z": 1}  # a key XY does not have
    assert converter_for(Optional[XY])(None) is None
    assert converter_for(Union[tuple[int, int], list[str]])([1, 2]) == (1, 2)
    assert converter_for(Union[tuple[int, int], list[str]])(["a"]) == ["a"]
    assert converter_for(Union[str, int]) is not None and converter_for(Union[str, bool]) is None


UNION_HINTS = [
    Union[int, float],
    Union[float, int],
    Union[Color, str],
    Union[Level, float, None],
    Union[IntX, StrX, XY],
    Union[XY, dict[str, int]],
    Union[tuple[int, int], list[Color], int],
    Union[Annotated[int, Field(ge=3)], float],
    Union[Annotated[dict[str, Any], Field(json_schema={"minProperties": 2})], XY],
    Optional[list[XY]],
    Union[Literal[1, "a"], int, str],
]
union_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 5) | st.sampled_from([1.0, 2.5, 3.0]) | st.sampled_from(["", "a", "red", "green"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
    max_leaves=6,
)


def _reference_union_convert(hint, value):
    """The rule before the type model: check every member's schema in order, convert by the first that accepts."""
    for member in typing.get_args(hint):
        if compile_validator(schema_for(member))(value) is None:
            convert = converter_for(member)
            return value if convert is None else convert(value)
    return value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hint=st.sampled_from(UNION_HINTS), value=union_values)
def test_union_conversion_agrees_with_checking_every_member(hint, value):
    if compile_validator(schema_for(hint))(value) is not None:
        return  # the converter only ever sees values the schema accepted
    convert = converter_for(hint)
    got = value if convert is None else convert(value)
    expected = _reference_union_convert(hint, value)
    assert got == expected and type(got) is type(expected), (hint, value)


def test_recursive_conversion():
    out = converter_for(Node)({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]})
    assert out == Node(1, [Node(2, [Node(3)])])
