"""JSON Schema from type hints, the compiled validator, argument conversion, x-mcp-header rules.

Spec: basic/index.mdx, "JSON Schema Usage" (2020-12 by default, other dialects
handled or refused, local ``$ref`` only, composition bounds);
server/tools.mdx, "Tool" (inputSchema, outputSchema) and "x-mcp-header";
basic/transports/streamable-http.mdx, "Custom Headers from Tool Parameters".

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

import dataclasses
import datetime
import enum
import typing
import uuid
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, Sequence, TypedDict, Union

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wiremcp import Context, Field, Header
from wiremcp.server._schema import (
    MAX_SCHEMA_DEPTH,
    ArgumentError,
    SchemaError,
    arguments_converter,
    check_headers,
    compile_validator,
    converter_for,
    is_structured,
    output_schema_for,
    parse_docstring,
    schema_for,
    signature_info,
    signature_schema,
    type_node,
)
from wiremcp.server._schema._types import ANY, ArrayType, ObjectType, Scalar, TupleType, UnionType


def valid_2020_12(schema):
    """Every generated schema must itself be a valid 2020-12 schema."""
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


# -- the type model ----------------------------------------------------------------


def test_the_type_model_is_one_small_tree():
    """One walk of the hint: the schema writer and the converter both read these nodes."""
    node = type_node(Optional[list[int]])
    assert isinstance(node, UnionType)
    array, null = node.members
    assert isinstance(array, ArrayType) and array.collection is list
    assert isinstance(array.item, Scalar) and array.item.py is int
    assert isinstance(null, Scalar) and null.py is type(None)
    assert type_node(Any) is ANY and type_node(list).item is ANY
    assert type_node(frozenset[str]).collection is frozenset and type_node(tuple[int, ...]).collection is tuple
    assert isinstance(type_node(tuple[int, str]), TupleType)


def test_a_recursive_type_is_one_node_pointing_at_itself():
    node = type_node(Node)
    assert isinstance(node, ObjectType) and [f.name for f in node.fields] == ["value", "children"]
    children = node.fields[1].node
    assert isinstance(children, ArrayType) and children.item is node
    assert node.fields[0].required and not node.fields[1].required and node.fields[1].has_factory


def test_walk_errors_name_the_type_and_field():
    class Bad(TypedDict):
        when: complex

    with pytest.raises(SchemaError, match="Bad.when: cannot express"):
        type_node(Bad)
    class Pair(enum.Enum):
        ONE = (1, 2)

    with pytest.raises(SchemaError, match="enum values must be JSON scalars"):
        type_node(Pair)


def test_an_init_false_field_is_only_needed_by_output_schemas():
    @dataclasses.dataclass
    class Cached:
        a: int
        cache: complex = dataclasses.field(init=False, default=0j)

    assert schema_for(Cached)["properties"] == {"a": {"type": "integer"}}
    with pytest.raises(SchemaError, match="Cached.cache"):
        output_schema_for(Cached)


# -- hints → schema -------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


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


@dataclasses.dataclass
class Node:
    value: int
    children: "list[Node]" = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Ping:
    pong: "Optional[Pong]" = None


@dataclasses.dataclass
class Pong:
    ping: Optional[Ping] = None


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


# -- signatures and docstrings -----------------------------------------------------------


def test_docstring_args_describe_parameters():
    """Google-style Args: describe parameters; the section leaves the tool description."""

    def search(query: str, limit: int = 10, exact: Annotated[bool, "explicit wins"] = False) -> str:
        """Search the index.

        Longer explanation.

        Args:
            query (str): What to look for,
                over two lines.
            limit: At most this many hits.
            exact: ignored, Annotated wins.

        Returns:
            The hits.
        """

    info = signature_info(search)
    props = info.schema["properties"]
    assert props["query"]["description"] == "What to look for, over two lines."
    assert props["limit"] == {"type": "integer", "description": "At most this many hits.", "default": 10}
    assert props["exact"]["description"] == "explicit wins"
    assert info.description == "Search the index.\n\nLonger explanation.\n\nReturns:\n    The hits."


def test_parse_docstring_edge_cases():
    assert parse_docstring(None) == (None, {})
    assert parse_docstring("Only text.") == ("Only text.", {})
    assert parse_docstring("Summary.\n\n    Args:\n        a: x\n    ") == ("Summary.", {"a": "x"})
    assert parse_docstring("Do it.\n\nArguments:\n  *args: many\n  **kw: more\n")[1] == {"args": "many", "kw": "more"}


def test_docstring_overrides_a_types_own_description():
    @dataclasses.dataclass
    class Box:
        """A box."""

        w: int

    def pack(box: Box) -> None:
        """Pack.

        Args:
            box: the box to pack
        """

    assert signature_schema(pack)[0]["properties"]["box"]["description"] == "the box to pack"


def test_signature_rules():
    """tools.mdx, Tool: inputSchema is an object; required = no default; kwargs opens it."""

    def f(a: int, b: Color = Color.RED, c: list[int] = [1], d: object = object(), *, e: str = "x") -> None: ...

    schema, names = signature_schema(f)
    assert names == ["a", "b", "c", "d", "e"]
    assert schema["required"] == ["a"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["b"]["default"] == "red"  # an Enum default is published as its value
    assert schema["properties"]["c"]["default"] == [1]
    assert "default" not in schema["properties"]["d"]  # not JSON: not published

    def g(a: int, **rest: Any) -> None: ...

    assert "additionalProperties" not in signature_schema(g)[0]

    def h(ctx: Context, a: int) -> None: ...

    assert list(signature_schema(h, skip=frozenset({"ctx"}))[0]["properties"]) == ["a"]


@pytest.mark.parametrize("source", ["def f(a, /): ...", "def f(*a): ..."])
def test_positional_only_and_var_positional_are_refused(source):
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(SchemaError, match="keyword"):
        signature_schema(namespace["f"])


def test_unresolvable_forward_reference_is_a_schema_error():
    def f(a: "Missing") -> None: ...  # noqa: F821

    with pytest.raises(SchemaError, match="Missing"):
        signature_schema(f)


def test_field_as_a_default():
    def f(limit: int = Field(5, ge=1, description="max"), name: str = Field(min_length=1)) -> None: ...

    info = signature_info(f)
    assert info.schema["properties"]["limit"] == {"type": "integer", "description": "max", "minimum": 1, "default": 5}
    assert info.schema["required"] == ["name"]
    convert = arguments_converter(info.params)
    assert convert({"name": "x"}) == {"name": "x", "limit": 5}  # the real default, not the Field
    assert convert({"name": "x", "limit": 2}) == {"name": "x", "limit": 2}


def test_header_integers_get_the_safe_range():
    """tools.mdx, x-mcp-header: integer values within ±(2**53 - 1)."""

    def f(shard: Annotated[int, Header("Shard")], other: Annotated[int, Header("Other"), Field(ge=0, le=9)]) -> None: ...

    props = signature_schema(f)[0]["properties"]
    assert props["shard"]["minimum"] == -(2**53 - 1) and props["shard"]["maximum"] == 2**53 - 1
    assert props["other"]["minimum"] == 0 and props["other"]["maximum"] == 9


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


def test_pydantic_field_info_on_parameters():
    pydantic = pytest.importorskip("pydantic")

    def f(
        n: Annotated[int, pydantic.Field(ge=1, le=5, description="count")],
        k: int = pydantic.Field(2, ge=0),
        tags: list[str] = pydantic.Field(default_factory=list),
    ) -> None: ...

    info = signature_info(f)
    props = info.schema["properties"]
    assert props["n"] == {"type": "integer", "description": "count", "minimum": 1, "maximum": 5}
    assert props["k"] == {"type": "integer", "minimum": 0, "default": 2}
    assert info.schema["required"] == ["n"]
    assert "default" not in props["tags"]
    convert = arguments_converter(info.params)
    out = convert({"n": 1})
    assert out == {"n": 1, "k": 2, "tags": []}
    assert convert({"n": 1})["tags"] is not out["tags"]  # a fresh list from the factory each call


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


# -- the validator ------------------------------------------------------------------------------

# (schema, instances that are valid, instances that are not): every verdict is
# also checked against the jsonschema library.
KEYWORD_CASES = [
    ({"type": "integer"}, [1, -3, 1.0, 2**70], [1.5, True, "1", None]),
    ({"type": "number"}, [1, 1.5], [True, "1"]),
    ({"type": ["string", "null"]}, ["", None], [0, []]),
    ({"enum": [1, "a", None, [1]]}, [1, 1.0, "a", None, [1]], [True, "b", [True]]),
    ({"const": {"a": [1]}}, [{"a": [1]}, {"a": [1.0]}], [{"a": [True]}, {"a": [1], "b": 1}]),
    ({"minimum": 1, "exclusiveMaximum": 3}, [1, 2.9, "x"], [0, 3]),
    ({"maximum": 1, "exclusiveMinimum": -1}, [1, 0], [-1, 2]),
    ({"multipleOf": 0.5}, [1.5, 1, 0], [0.25]),
    ({"multipleOf": 3}, [9, 0, -3], [10]),
    ({"minLength": 2, "maxLength": 3}, ["ab", "abc", "😀😀", 5], ["a", "abcd"]),
    ({"pattern": "^a+$"}, ["aa", 3], ["b", "ab"]),
    ({"items": {"type": "integer"}, "minItems": 1, "maxItems": 2}, [[1], [1, 2], "x"], [[], [1, 2, 3], ["a"]]),
    ({"prefixItems": [{"type": "string"}], "items": False}, [[], ["a"]], [["a", 1], [1]]),
    ({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}}, [["a", 1, 2]], [["a", "b"]]),
    ({"uniqueItems": True}, [[1, 2], [1, True], [[1], [2]], [{"a": 1}, {"a": 2}]], [[1, 1.0], [[1], [1]], [{"a": 1}, {"a": 1}]]),
    ({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}, [["a", "b", 1]], [["a", 1], ["a", "b", "c", "d"]]),
    (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"], "additionalProperties": False},
        [{"a": 1}],
        [{}, {"a": "x"}, {"a": 1, "b": 2}, [], "x"],
    ),
    (
        {"patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
        [{"x-a": "s", "b": 1}],
        [{"x-a": 1}, {"b": "s"}],
    ),
    ({"propertyNames": {"maxLength": 2}, "minProperties": 1, "maxProperties": 2}, [{"ab": 1}], [{}, {"abc": 1}, {"a": 1, "b": 2, "c": 3}]),
    ({"dependentRequired": {"a": ["b"]}}, [{"a": 1, "b": 2}, {"b": 1}], [{"a": 1}]),
    ({"dependentSchemas": {"a": {"required": ["c"]}}}, [{"a": 1, "c": 1}, {}], [{"a": 1}]),
    ({"allOf": [{"type": "integer"}, {"minimum": 2}]}, [2], [1, "x"]),
    ({"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 2}]}, [1, "ab"], ["a", None]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, [1, 2.5, "x"], [3]),
    ({"not": {"type": "string"}}, [1, None], ["a"]),
    ({"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}}, [0, "a"], [-1, None]),
    ({"$defs": {"pos": {"minimum": 0}}, "items": {"$ref": "#/$defs/pos"}}, [[0, 1]], [[-1]]),
    ({"$defs": {"a": {"$anchor": "thing", "type": "string"}}, "items": {"$ref": "#thing"}}, [["x"]], [[1]]),
    ({"properties": {"next": {"$ref": "#"}}, "type": "object"}, [{"next": {"next": {}}}], [{"next": 1}]),
    ({"$defs": {"a/b": {"type": "null"}}, "$ref": "#/$defs/a~1b"}, [None], [0]),
    (True, [1, None], []),
    (False, [], [1, None]),
    ({}, [1, None, {}], []),
]


@pytest.mark.parametrize("schema, good, bad", KEYWORD_CASES)
def test_validator_keywords_agree_with_jsonschema(schema, good, bad):
    check = compile_validator(schema)
    reference = jsonschema.Draft202012Validator(schema)
    for value in good:
        assert check(value) is None, (schema, value, check(value))
        assert reference.is_valid(value), value
    for value in bad:
        assert check(value) is not None, (schema, value)
        assert not reference.is_valid(value), value


@pytest.mark.parametrize(
    "schema, value, message",
    [
        ({"type": "integer"}, "1", "the value must be integer, not a string"),
        ({"enum": ["red", "green"]}, "blue", 'the value must be one of "red", "green"'),
        ({"properties": {"a": {"properties": {"b": {"type": "string"}}}}}, {"a": {"b": 1}}, "'a.b' must be string, not an integer"),
        ({"items": {"minimum": 3}}, [5, 1], "'[1]' must be at least 3"),
        ({"required": ["x"]}, {}, "'x' is required"),
        ({"additionalProperties": False}, {"y": 1}, "'y' is not an accepted property"),
        ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, 1, "the value must match exactly one of the allowed schemas, but matches 2"),
        ({"uniqueItems": True}, [1, 1], "the value must not repeat items (item 1 is a duplicate)"),
        ({"dependentRequired": {"a": ["b"]}}, {"a": 1}, "'b' is required when 'a' is present"),
        ({"not": {}}, 1, "the value must not match the excluded schema"),
        (
            {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"a": {"type": "integer"}}}]},
            {"a": "x"},
            "'a' must be integer, not a string",  # the branch that got furthest explains
        ),
    ],
)
def test_validator_messages(schema, value, message):
    assert compile_validator(schema)(value) == message


def test_path_prefix_and_noun():
    """compile_validator(schema, path) prefixes names (used for elicitation answers in _mrtr)."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}
    assert compile_validator(schema, "content")({}) == "'content.name' is required"
    assert compile_validator(schema, "content")(3) == "'content' must be object, not an integer"
    assert compile_validator(schema, noun="argument")({"name": "a", "x": 1}) == "'x' is not an accepted argument"


@pytest.mark.parametrize(
    "schema, fragment",
    [
        ({"$ref": "https://example.com/schema.json"}, "never fetched"),
        ({"$ref": "other.json#/x"}, "never fetched"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"$ref": "#nowhere"}, "no \\$anchor"),
        ({"$schema": "http://json-schema.org/draft-04/schema#"}, "unsupported JSON Schema dialect"),
        ({"type": "integr"}, "unknown JSON Schema type"),
        ({"pattern": "("}, "not a valid regular expression"),
        ({"minLength": -1}, "non-negative integer"),
        ({"anyOf": []}, "non-empty array"),
        ({"required": "a"}, "array of strings"),
        ({"multipleOf": 0}, "greater than 0"),
        ([1], "not a JSON Schema"),
    ],
)
def test_uncompilable_schemas_are_refused(schema, fragment):
    """basic/index.mdx: external $refs are not fetched; unsupported dialects are an error."""
    with pytest.raises(SchemaError, match=fragment):
        compile_validator(schema)


def test_dialects():
    """basic/index.mdx, Schema Dialect: 2020-12 by default; draft-07 and 2019-09 handled."""
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"n": {"type": "integer"}},
        "type": "object",
        "properties": {"pair": {"items": [{"$ref": "#/definitions/n"}, {"type": "string"}], "additionalItems": False}},
        "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
    }
    check = compile_validator(draft7)
    reference = jsonschema.Draft7Validator(draft7)
    for value in ({"pair": [1, "x"]}, {"pair": [1, "x", 3]}, {"pair": ["x"]}, {"a": 1}, {"a": 1, "b": 1}, {"c": 1}, {"c": 1, "d": 1}):
        assert (check(value) is None) == reference.is_valid(value), value
    assert compile_validator({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "string"})("x") is None
    assert compile_validator({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "string"})(1) is not None


def test_limits():
    """basic/index.mdx, Composition-Keyword Resource Use: bounded depth; deep values do not crash."""
    deep: Any = {"type": "integer"}
    for _ in range(MAX_SCHEMA_DEPTH + 5):
        deep = {"items": deep}
    with pytest.raises(SchemaError, match="deeper"):
        compile_validator(deep)
    recursive = compile_validator({"items": {"$ref": "#"}})
    value: Any = []
    for _ in range(5000):
        value = [value]
    assert "nested too deeply" in recursive(value)


def test_generated_schemas_validate_like_jsonschema():
    """The compiled check of a generated schema agrees with jsonschema on a set of values."""

    class Opts(TypedDict):
        mode: Literal["a", "b"]
        level: NotRequired[Annotated[int, Field(ge=0, le=5)]]

    def f(name: Annotated[str, Field(min_length=1)], opts: Opts, tags: set[str] = set(), pair: tuple[int, str] | None = None) -> None: ...

    schema = valid_2020_12(signature_schema(f)[0])
    check = compile_validator(schema, noun="argument")
    reference = jsonschema.Draft202012Validator(schema)
    samples = [
        {"name": "x", "opts": {"mode": "a"}},
        {"name": "", "opts": {"mode": "a"}},
        {"name": "x", "opts": {"mode": "c"}},
        {"name": "x", "opts": {"mode": "a", "level": 6}},
        {"name": "x", "opts": {"mode": "a", "extra": 1}},
        {"name": "x", "opts": {"mode": "a"}, "tags": ["a", "a"]},
        {"name": "x", "opts": {"mode": "a"}, "pair": [1, "a"]},
        {"name": "x", "opts": {"mode": "a"}, "pair": [1, "a", 2]},
        {"name": "x", "opts": {"mode": "a"}, "pair": None},
        {"opts": {"mode": "a"}},
    ]
    for value in samples:
        assert (check(value) is None) == reference.is_valid(value), value


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False) | st.sampled_from(["", "a", "ab", "x-1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "x-a"]), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(KEYWORD_CASES), value=json_values)
def test_validator_agrees_with_jsonschema_on_random_values(case, value):
    schema = case[0]
    assert (compile_validator(schema)(value) is None) == jsonschema.Draft202012Validator(schema).is_valid(value)


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


def test_multiple_of_tolerates_float_rounding():
    """0.3 is a multiple of 0.1 (jsonschema says no: 0.3 / 0.1 == 2.9999999999999996)."""
    assert compile_validator({"multipleOf": 0.1})(0.3) is None
    assert compile_validator({"multipleOf": 0.1})(0.35) is not None


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


@dataclasses.dataclass
class IntX:
    x: int


@dataclasses.dataclass
class StrX:
    x: str


@dataclasses.dataclass
class XY:
    x: int
    y: int = 0


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


# -- x-mcp-header -------------------------------------------------------------------------------------


def _tool_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def test_valid_headers():
    """streamable-http.mdx: properties reachable through `properties` alone, primitive types."""
    schema = _tool_schema(
        region={"type": "string", "x-mcp-header": "Region"},
        opts={"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant-Id"}}},
        dry={"type": "boolean", "x-mcp-header": "Dry_Run.v2!#$%&'*+^`|~"},
    )
    assert check_headers(schema) == {"Region": ("region",), "Tenant-Id": ("opts", "tenant"), "Dry_Run.v2!#$%&'*+^`|~": ("dry",)}


@pytest.mark.parametrize(
    "schema, fragment",
    [
        (_tool_schema(a={"type": "string", "x-mcp-header": ""}), "non-empty"),
        (_tool_schema(a={"type": "string", "x-mcp-header": 5}), "non-empty string"),
        (_tool_schema(a={"type": "string", "x-mcp-header": "Has Space"}), "token"),
        (_tool_schema(a={"type": "string", "x-mcp-header": "Bad\r\nX-Injected"}), "token"),
        (_tool_schema(a={"type": "string", "x-mcp-header": "Ünï"}), "token"),
        (_tool_schema(a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "string", "x-mcp-header": "dup"}), "case-insensitive"),
        (_tool_schema(a={"type": "number", "x-mcp-header": "A"}), "not 'number'"),
        (_tool_schema(a={"type": ["string", "null"], "x-mcp-header": "A"}), "Optional"),
        (_tool_schema(a={"x-mcp-header": "A"}), "whose type is None"),
        (_tool_schema(a={"type": "object", "x-mcp-header": "A"}), "'integer', 'string' or 'boolean'"),
        (_tool_schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}), "statically reachable"),
        ({"type": "object", "anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}, "statically reachable"),
        ({"type": "object", "$defs": {"d": {"type": "string", "x-mcp-header": "A"}}, "properties": {"a": {"$ref": "#/$defs/d"}}}, "statically reachable"),
        ({"type": "object", "if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}, "statically reachable"),
        ({"type": "object", "x-mcp-header": "A"}, "root"),
    ],
)
def test_invalid_headers_are_refused(schema, fragment):
    """tools.mdx, x-mcp-header: every constraint, a ValueError naming it."""
    with pytest.raises(ValueError, match=fragment):
        check_headers(schema)


def test_header_values_inside_data_keywords_are_not_annotations():
    schema = _tool_schema(a={"type": "string", "enum": [{"x-mcp-header": "no"}], "default": {"x-mcp-header": ""}})
    assert check_headers(schema) == {}


def test_optional_header_parameter_is_refused_with_advice():
    def f(region: Annotated[Optional[str], Header("Region")] = None) -> None: ...

    with pytest.raises(ValueError, match="default instead"):
        check_headers(signature_schema(f)[0])
