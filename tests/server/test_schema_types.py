"""The type model (`wiremcp.server._schema._types`): one walk of a hint into typed nodes.

Both the JSON Schema and the argument converter are built from these nodes;
the walk finds every hint JSON cannot carry, at registration.

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

import dataclasses
import enum
from typing import Any, Optional, TypedDict

import pytest

from schema_hints import Node
from wiremcp.server._schema import SchemaError, output_schema_for, schema_for, type_node
from wiremcp.server._schema._types import ANY, ArrayType, ObjectType, Scalar, TupleType, UnionType


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
