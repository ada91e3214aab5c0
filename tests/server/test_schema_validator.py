"""The compiled validator (`wiremcp.server._schema._validator`), against the jsonschema library.

Spec: basic/index.mdx, "JSON Schema Usage" (dialects handled or refused,
local ``$ref`` only, "Composition-Keyword Resource Use" bounds).

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

from typing import Annotated, Any, Literal, NotRequired, TypedDict

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schema_hints import valid_2020_12
from wiremcp import Field
from wiremcp.server._schema import MAX_SCHEMA_DEPTH, SchemaError, compile_validator, signature_schema


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


def test_multiple_of_tolerates_float_rounding():
    """0.3 is a multiple of 0.1 (jsonschema says no: 0.3 / 0.1 == 2.9999999999999996)."""
    assert compile_validator({"multipleOf": 0.1})(0.3) is None
    assert compile_validator({"multipleOf": 0.1})(0.35) is not None


def test_multiple_of_refuses_a_tiny_non_zero_value():
    """Hypothesis found 4.76e-197 accepted as a multiple of 0.5 (an absolute tolerance on the quotient)."""
    check = compile_validator({"multipleOf": 0.5})
    assert check(4.76e-197) is not None
    assert check(-1e-20) is not None
    assert check(0.0) is None
    assert check(1e20) is None
