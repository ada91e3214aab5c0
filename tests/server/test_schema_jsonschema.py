"""JSON Schema from type hints (`wiremcp.server._schema._jsonschema`): inputs and outputs.

Spec: basic/index.mdx, "JSON Schema Usage" (2020-12 by default, no ``$schema``
written, local ``$ref`` only); server/tools.mdx, "Tool" (inputSchema,
outputSchema, "Output Schema").

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

import dataclasses
import datetime
import typing
import uuid
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, Sequence, TypedDict, Union

import pytest

from schema_hints import Color, Level, Node, Ping, valid_2020_12
from wiremcp import Field, Header
from wiremcp.server._schema import (
    SchemaError,
    compile_validator,
    converter_for,
    is_structured,
    output_schema_for,
    schema_for,
    signature_schema,
)


@pytest.mark.parametrize(
    "hint, expected",
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (type(None), {"type": "null"}),
        (Any, {}),
        (bytes, {"type": "string", "contentEncoding": "base64"}),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (datetime.date, {"type": "string", "format": "date"}),
        (datetime.time, {"type": "string", "format": "time"}),
        (uuid.UUID, {"type": "string", "format": "uuid"}),
        (list, {"type": "array"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (list[Any], {"type": "array"}),
        (Sequence[str], {"type": "array", "items": {"type": "string"}}),
        (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
        (frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (
            tuple[int, str],
            {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
                "maxItems": 2,
            },
        ),
        (dict, {"type": "object"}),
        (dict[str, Any], {"type": "object"}),
        (dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
        (Optional[int], {"type": ["integer", "null"]}),
        (Union[int, str], {"type": ["integer", "string"]}),
        (int | None, {"type": ["integer", "null"]}),
        (Optional[Any], {}),
        (Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Color, {"enum": ["red", "green"], "type": "string"}),
        (Level, {"enum": [1, 2], "type": "integer"}),
        (typing.NewType("UserId", int), {"type": "integer"}),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
        (Annotated[int, {"minimum": 0}], {"type": "integer", "minimum": 0}),
    ],
)
def test_hint_schemas(hint, expected):
    """basic/index.mdx, JSON Schema Usage: plain 2020-12, no $schema written."""
    assert valid_2020_12(schema_for(hint)) == expected


def test_optional_of_a_structure_is_any_of():
    class P(TypedDict):
        x: int

    assert schema_for(Optional[P]) == {
        "anyOf": [
            {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False},
            {"type": "null"},
        ]
    }


@pytest.mark.parametrize("hint", [dict[int, str], complex, object.__new__, "Nope"])
def test_unexpressible_hints_are_refused(hint):
    with pytest.raises(SchemaError):
        schema_for(hint)


def test_typeddict_required_and_not_required():
    """TypedDict: required keys, NotRequired, Required in total=False, Annotated descriptions."""

    class Point(TypedDict):
        """A point."""

        x: int
        y: Annotated[int, "the y"]
        label: NotRequired[str]

    class Partial(TypedDict, total=False):
        a: int
        b: Required[str]

    assert valid_2020_12(schema_for(Point)) == {
        "type": "object",
        "description": "A point.",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "description": "the y"}, "label": {"type": "string"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    assert schema_for(Partial)["required"] == ["b"]
    # output schemas of TypedDicts stay open (extra keys are not a type error)
    assert "additionalProperties" not in schema_for(Point, output=True)


def test_dataclass_fields_defaults_and_descriptions():
    @dataclasses.dataclass
    class Box:
        """A box."""

        w: Annotated[int, Field(ge=1)]
        h: int = 2
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", metadata={"description": "free text"})
        area: int = dataclasses.field(init=False, default=0)

    schema = valid_2020_12(schema_for(Box))
    assert schema == {
        "type": "object",
        "description": "A box.",
        "properties": {
            "w": {"type": "integer", "minimum": 1},
            "h": {"type": "integer", "default": 2},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string", "description": "free text", "default": ""},
        },
        "required": ["w"],
        "additionalProperties": False,
    }
    # once serialized every field is present, init=False ones too
    out = schema_for(Box, output=True)
    assert out["required"] == ["w", "h", "tags", "note", "area"]
    assert "default" not in out["properties"]["h"]


def test_dataclass_without_docstring_has_no_generated_description():
    @dataclasses.dataclass
    class Bare:
        a: int

    assert "description" not in schema_for(Bare)


def test_a_field_default_in_a_dataclass_is_refused():
    @dataclasses.dataclass
    class Bad:
        a: int = Field(3)  # type: ignore[assignment]

    with pytest.raises(SchemaError, match="Annotated"):
        schema_for(Bad)


def test_named_types_are_inlined_not_referenced():
    """Hosts that cannot follow $ref still work: no $defs unless a type is recursive."""

    @dataclasses.dataclass
    class Inner:
        v: int

    @dataclasses.dataclass
    class Outer:
        a: Inner
        b: list[Inner]

    schema = schema_for(Outer)
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["b"]["items"] == schema["properties"]["a"]


def test_recursive_types_use_local_defs():
    """A genuinely recursive type: $defs at the root, local #/$defs/ references."""
    schema = valid_2020_12(schema_for(list[Node]))
    assert schema == {
        "type": "array",
        "items": {"$ref": "#/$defs/Node"},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["value"],
                "additionalProperties": False,
            }
        },
    }
    check = compile_validator(schema)
    assert check([{"value": 1, "children": [{"value": 2, "children": []}]}]) is None
    assert check([{"value": 1, "children": [{"value": "x"}]}]) == "'[0].children[0].value' must be integer, not a string"
    # mutual recursion: only the type that closes the cycle goes to $defs
    mutual = valid_2020_12(schema_for(Ping))
    assert list(mutual["$defs"]) == ["Ping"]
    assert compile_validator(mutual)({"pong": {"ping": {"pong": None}}}) is None
    assert compile_validator(mutual)({"pong": {"ping": {"pong": 3}}}) is not None


def test_the_same_recursive_type_twice_shares_one_def():
    def fn(a: Node, b: list[Node]) -> None: ...

    schema, names = signature_schema(fn)
    assert names == ["a", "b"]
    assert list(schema["$defs"]) == ["Node"]
    assert schema["properties"]["a"] == {"$ref": "#/$defs/Node"}


# -- Annotated, Field, Header -------------------------------------------------------


def test_field_keywords():
    assert schema_for(Annotated[float, Field(gt=0, lt=1, multiple_of=0.25, description="d", title="T", examples=[0.5])]) == {
        "type": "number",
        "title": "T",
        "description": "d",
        "examples": [0.5],
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1,
        "multipleOf": 0.25,
    }
    assert schema_for(Annotated[str, Field(min_length=1, max_length=5, pattern="^[a-z]+$")]) == {
        "type": "string",
        "minLength": 1,
        "maxLength": 5,
        "pattern": "^[a-z]+$",
    }
    # on an array, lengths count items
    assert schema_for(Annotated[list[int], Field(min_length=1, max_length=3)]) == {
        "type": "array",
        "items": {"type": "integer"},
        "minItems": 1,
        "maxItems": 3,
    }
    assert schema_for(Annotated[str, Field(header="Region", json_schema={"format": "hostname"})]) == {
        "type": "string",
        "x-mcp-header": "Region",
        "format": "hostname",
    }


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"ge": "1"}, TypeError),
        ({"le": float("nan")}, TypeError),
        ({"ge": True}, TypeError),
        ({"min_length": -1}, TypeError),
        ({"multiple_of": 0}, ValueError),
        ({"pattern": "("}, ValueError),
        ({"description": 3}, TypeError),
        ({"json_schema": [1]}, TypeError),
    ],
)
def test_field_arguments_are_checked(kwargs, error):
    with pytest.raises(error):
        Field(**kwargs)


def test_header_marker():
    assert schema_for(Annotated[str, Header("Region"), "where"]) == {
        "type": "string",
        "x-mcp-header": "Region",
        "description": "where",
    }


def test_annotated_types_constraints():
    annotated_types = pytest.importorskip("annotated_types")
    assert schema_for(Annotated[int, annotated_types.Ge(1), annotated_types.Lt(10)]) == {
        "type": "integer",
        "minimum": 1,
        "exclusiveMaximum": 10,
    }
    assert schema_for(Annotated[list[str], annotated_types.Len(1, 2)])["maxItems"] == 2
    assert schema_for(Annotated[str, annotated_types.MinLen(3)]) == {"type": "string", "minLength": 3}


# -- pydantic (optional) --------------------------------------------------------------------


def test_pydantic_models_are_inlined_and_converted():
    pydantic = pytest.importorskip("pydantic")

    class Address(pydantic.BaseModel):
        zip: str = pydantic.Field(pattern=r"^[0-9]{5}$")

    class Person(pydantic.BaseModel):
        name: str = pydantic.Field(description="full name")
        home: Address
        work: Optional[Address] = None

    schema = valid_2020_12(schema_for(Person))
    assert "$defs" not in schema and "$ref" not in str(schema)
    assert schema["properties"]["home"]["properties"]["zip"]["pattern"] == "^[0-9]{5}$"
    check = compile_validator(schema)
    assert check({"name": "a", "home": {"zip": "12345"}}) is None
    assert check({"name": "a", "home": {"zip": "1"}}) == "'home.zip' must match the pattern '^[0-9]{5}$'"
    person = converter_for(Person)({"name": "a", "home": {"zip": "12345"}})
    assert isinstance(person, Person) and isinstance(person.home, Address)


def test_pydantic_recursive_model_keeps_local_refs():
    pydantic = pytest.importorskip("pydantic")

    class Tree(pydantic.BaseModel):
        v: int
        kids: list["Tree"] = []

    Tree.model_rebuild()
    schema = valid_2020_12(schema_for(Tree))
    assert schema["type"] == "object"  # the root shows the body, not a bare $ref
    assert schema["properties"]["kids"]["items"] == {"$ref": "#/$defs/Tree"}
    assert compile_validator(schema)({"v": 1, "kids": [{"v": 2, "kids": [{"v": "x"}]}]}) == "'kids[0].kids[0].v' must be integer, not a string"
    output, wrapped = output_schema_for(Tree)
    assert wrapped is False and output["type"] == "object"


# -- output schemas --------------------------------------------------------------------------


def test_is_structured():
    from wiremcp.server._content import CONTENT_HINTS, Content, ImageContent

    content = CONTENT_HINTS
    for hint in (str, None, Any, bytes, ImageContent, Content, list[Content], Optional[str], Union[str, int]):
        assert not is_structured(hint, content), hint
    for hint in (int, dict, dict[str, int], list[str], Optional[int], Color, Literal["a"], tuple[int, int]):
        assert is_structured(hint, content), hint


def test_output_schemas_wrap_non_objects():
    """tools.mdx, Output Schema; wrapped under "result" like the official SDKs (object root for 2025-11-25)."""

    class W(TypedDict):
        t: float

    assert output_schema_for(W) == ({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}, False)
    assert output_schema_for(list[int]) == (
        {"type": "object", "properties": {"result": {"type": "array", "items": {"type": "integer"}}}, "required": ["result"]},
        True,
    )
    assert output_schema_for(Optional[W])[1] is True
    schema, wrapped = output_schema_for(Node)  # a recursive root shows its body
    assert wrapped is False and schema["type"] == "object" and "$defs" in schema
    valid_2020_12(schema)
