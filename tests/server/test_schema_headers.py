"""``x-mcp-header`` rules at registration (`wiremcp.server._schema._headers`).

Spec: server/tools.mdx, "x-mcp-header"; basic/transports/streamable-http.mdx,
"Custom Headers from Tool Parameters".

No ``from __future__ import annotations`` here: the types below are defined
inside test functions and must resolve without module globals.
"""

from typing import Annotated, Any, Optional

import pytest

from wiremcp import Header
from wiremcp.server._schema import check_headers, signature_schema


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
