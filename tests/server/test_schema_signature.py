"""A function's signature and docstring (`wiremcp.server._schema._signature`).

Spec: server/tools.mdx, "Tool" (inputSchema is an object; required parameters;
descriptions) and "x-mcp-header" (integers within ±(2**53 - 1)).

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

import dataclasses
from typing import Annotated, Any

import pytest

from schema_hints import Color
from wiremcp import Context, Field, Header
from wiremcp.server._schema import (
    SchemaError,
    arguments_converter,
    parse_docstring,
    signature_info,
    signature_schema,
)


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
