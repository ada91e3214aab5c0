"""Type hints to JSON Schema and back: the schema layer of tools, in small modules.

Everything here runs at registration except the compiled check and the
argument converter, which run on every tools/call. One walk of a type hint
(`_types`) gives a tree of typed nodes; both the JSON Schema and the argument
converter are built from that tree, never from the hint again.

==================  ===========================================================
module              holds
==================  ===========================================================
``_markers``        `Field`, `Header`, `MISSING`: what a user writes by a hint
``_exceptions``     `SchemaError`
``_pydantic``       pydantic v2 read by duck typing, never imported
``_types``          the type model: `TypeWalker`, `type_node` and the nodes
``_jsonschema``     JSON Schema from the nodes: `schema_for`, `output_schema_for`
``_signature``      a function's parameters and docstring: `signature_info`
``_convert``        checked JSON to declared types: `arguments_converter`
``_validator``      the compiled validator: `compile_validator`
``_output``         whether a return value is data; its JSON (`json_default`)
``_headers``        ``x-mcp-header`` rules at registration: `check_headers`
==================  ===========================================================

The rest of `wiremcp.server` imports the names below from this package and
nothing from its modules. Supported hints: ``str``, ``int``, ``float``,
``bool``, ``None``, ``Any``, ``bytes`` (base64 text), ``list[X]``,
``Sequence[X]``, ``set[X]`` and ``frozenset[X]`` (``uniqueItems``),
``tuple[X, ...]``, ``tuple[X, Y]``, ``dict[str, X]``,
``Optional``/``Union``/``X | Y``, ``Literal``, ``Enum`` subclasses,
``TypedDict`` (``Required``/``NotRequired``, ``total=False``), dataclasses,
pydantic v2 models (only when pydantic is already imported),
``datetime``/``date``/``time``/``UUID`` (strings with a ``format``),
``NewType`` and ``Annotated``.
"""

from ._convert import ArgumentError, arguments_converter, converter_for, node_converter
from ._exceptions import SchemaError
from ._headers import check_headers
from ._jsonschema import json_schema, output_schema_for, schema_for
from ._markers import MISSING, Field, Header
from ._output import is_structured, json_default
from ._signature import Param, SignatureInfo, parse_docstring, signature_info, signature_schema
from ._types import type_node
from ._validator import MAX_SCHEMA_DEPTH, MAX_SUBSCHEMAS, SUPPORTED_DIALECTS, Check, compile_validator, render

__all__ = [
    "ArgumentError",
    "Check",
    "Field",
    "Header",
    "MAX_SCHEMA_DEPTH",
    "MAX_SUBSCHEMAS",
    "MISSING",
    "Param",
    "SUPPORTED_DIALECTS",
    "SchemaError",
    "SignatureInfo",
    "arguments_converter",
    "check_headers",
    "compile_validator",
    "converter_for",
    "is_structured",
    "json_schema",
    "node_converter",
    "json_default",
    "output_schema_for",
    "parse_docstring",
    "render",
    "schema_for",
    "signature_info",
    "signature_schema",
    "type_node",
]
