"""Tool parameters mirrored into HTTP headers: ``x-mcp-header`` and value encoding.

One implementation for the three places that need it: the server checks a
tool's annotations at registration, the HTTP server checks the mirrored
headers against the body, the client builds them (and drops tools whose
annotations are invalid). Rules (2026-07-28 basic/transports/streamable-http.mdx,
"Custom Headers from Tool Parameters"; server/tools.mdx, "x-mcp-header"):

* an annotation's value is a non-empty RFC 9110 token, unique among the
  schema's annotations ignoring case;
* it sits on a property reachable from the root through ``properties`` keys
  only (not under ``items``, ``anyOf``/``oneOf``/``allOf``/``not``,
  ``if``/``then``/``else``, ``$defs`` or ``$ref``), whose type is exactly
  ``string``, ``integer`` or ``boolean``;
* a value travels as itself when it is visible ASCII and spaces with no
  leading or trailing whitespace and not shaped like the sentinel; otherwise
  as ``=?base64?{Base64 of its UTF-8}?=`` ("Value Encoding"). Integers are
  decimal, booleans ``true``/``false``.
"""

from __future__ import annotations

import base64
import re
from typing import Any, NamedTuple

__all__ = [
    "SENTINEL_HEAD",
    "SENTINEL_TAIL",
    "MAX_SAFE_INTEGER",
    "HeaderParam",
    "InvalidHeaderAnnotation",
    "header_annotations",
    "encode_header_value",
    "decode_header_value",
]

SENTINEL_HEAD = "=?base64?"
SENTINEL_TAIL = "?="
#: Integers that survive a round trip through an IEEE 754 double.
MAX_SAFE_INTEGER = 2**53 - 1

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"  # compiled by `re` on first use: only tools with x-mcp-header need it
# Keywords whose value is one subschema / a list of them / a map of them.
_SUB_ONE = (
    "items", "additionalItems", "additionalProperties", "contains", "not", "if", "then", "else",
    "propertyNames", "unevaluatedItems", "unevaluatedProperties",
)
_SUB_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_SUB_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")
_PRIMITIVE = ("string", "integer", "boolean")


class InvalidHeaderAnnotation(ValueError):
    """An ``x-mcp-header`` annotation breaks a rule; the message says which and where."""


class HeaderParam(NamedTuple):
    """One annotation: the argument's path (``properties`` keys), the header name part, the type."""

    path: tuple[str, ...]
    name: str
    type: str

    @property
    def header(self) -> str:
        """The HTTP header that mirrors the parameter: ``Mcp-Param-NAME``."""
        return "Mcp-Param-" + self.name


def header_annotations(schema: Any) -> tuple[HeaderParam, ...]:
    """Every ``x-mcp-header`` of an input schema, checked; sorted by path."""
    found: list[HeaderParam] = []
    seen: dict[str, str] = {}

    def visit(node: Any, path: tuple[str, ...], static: bool, location: str) -> None:
        if type(node) is not dict:
            return
        if "x-mcp-header" in node:
            param = _check(node, path, static, location)
            other = seen.get(param.name.lower())
            if other is not None:
                raise InvalidHeaderAnnotation(
                    f"x-mcp-header {param.name!r} at {location} repeats {other!r} "
                    "(header names are case-insensitive and must be unique in the inputSchema)"
                )
            seen[param.name.lower()] = param.name
            found.append(param)
        for key in _SUB_ONE:
            if key in node:
                sub = node[key]
                for i, item in enumerate(sub) if type(sub) is list else ((None, sub),):
                    visit(item, path, False, f"{location}/{key}" + ("" if i is None else f"/{i}"))
        for key in _SUB_LIST:
            value = node.get(key)
            if type(value) is list:
                for i, sub in enumerate(value):
                    visit(sub, path, False, f"{location}/{key}/{i}")
        for key in _SUB_MAP:
            value = node.get(key)
            if type(value) is dict:
                for name, sub in value.items():
                    if key == "properties":
                        visit(sub, path + (name,), static, f"{location}/properties/{name}")
                    else:
                        visit(sub, path, False, f"{location}/{key}/{name}")

    if type(schema) is dict and "x-mcp-header" in schema:
        raise InvalidHeaderAnnotation("x-mcp-header belongs on a property's schema, not on the inputSchema root")
    visit(schema, (), True, "#")
    found.sort(key=lambda p: p.path)
    return tuple(found)


def _check(node: dict[str, Any], path: tuple[str, ...], static: bool, location: str) -> HeaderParam:
    name = node["x-mcp-header"]
    if type(name) is not str or not name:
        raise InvalidHeaderAnnotation(f"x-mcp-header at {location} must be a non-empty string, not {name!r}")
    if not re.fullmatch(_TOKEN, name):
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} at {location} is not an HTTP field-name token "
            "(RFC 9110 section 5.1: letters, digits and !#$%&'*+-.^_`|~; no spaces, CR, LF or other controls)"
        )
    if not static or not path or "$ref" in node:
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} at {location} is not statically reachable from the root: only a chain of "
            "'properties' keys may lead to it (no items, anyOf/oneOf/allOf/not, if/then/else, $ref or $defs)"
        )
    kind = node.get("type")
    if kind not in _PRIMITIVE:
        hint = " (an Optional parameter allows null: give it a default instead)" if type(kind) is list else ""
        raise InvalidHeaderAnnotation(
            f"x-mcp-header {name!r} is on {'.'.join(path)!r}, whose type is {kind!r}; it must be exactly "
            f"'integer', 'string' or 'boolean' (not 'number'){hint}"
        )
    return HeaderParam(path, name, kind)


def _sendable_as_is(text: str) -> bool:
    """Sendable as itself: visible ASCII and inner spaces, not sentinel-shaped."""
    return (
        text.isascii()
        and text.isprintable()
        and text == text.strip(" ")
        and not (text.startswith(SENTINEL_HEAD) and text.endswith(SENTINEL_TAIL))
    )


def encode_header_value(value: str | int | bool) -> str:
    """The header form of a parameter value (or of ``Mcp-Name``).

    >>> encode_header_value("us-west1"), encode_header_value(42), encode_header_value(True)
    ('us-west1', '42', 'true')
    >>> encode_header_value("Hello, 世界")
    '=?base64?SGVsbG8sIOS4lueVjA==?='
    """
    if value is True or value is False:
        text = "true" if value else "false"
    elif type(value) is int:
        text = str(value)
    elif type(value) is str:
        text = value
    else:
        raise TypeError(f"cannot mirror a {type(value).__name__} into a header")
    if _sendable_as_is(text):
        return text
    return SENTINEL_HEAD + base64.b64encode(text.encode("utf-8")).decode("ascii") + SENTINEL_TAIL


def decode_header_value(value: str) -> str | None:
    """The value a received header stands for, or ``None`` when it is not validly encoded.

    ``value`` is the field value as received, bytes decoded as Latin-1 (so a
    byte outside ASCII shows as a non-ASCII character and is refused). A
    plain value may hold horizontal tabs, which RFC 9110 allows in field values.

    >>> decode_header_value("=?base64?IHBhZGRlZCA=?=")
    ' padded '
    >>> decode_header_value("=?base64?not base64?=") is None
    True
    """
    if len(value) >= len(SENTINEL_HEAD) + len(SENTINEL_TAIL) and value.startswith(SENTINEL_HEAD) and value.endswith(SENTINEL_TAIL):
        try:
            return base64.b64decode(value[len(SENTINEL_HEAD) : -len(SENTINEL_TAIL)], validate=True).decode("utf-8")
        except ValueError:  # binascii.Error, UnicodeDecodeError, non-ASCII input
            return None
    if value.isascii() and (value.isprintable() or value.replace("\t", " ").isprintable()):
        return value
    return None
