"""HTTP request metadata headers the client mirrors from the body (streamable-http.mdx, "Request Metadata").

Transport-agnostic and pure: the `Client` computes the headers when its
transport asks for them (``mirrors_headers``), and the HTTP transport just
sends them.

* ``MCP-Protocol-Version`` on every POST; ``Mcp-Method`` on every request;
  ``Mcp-Name`` (``params.name`` or ``params.uri``) on tools/call,
  resources/read and prompts/get.
* ``Mcp-Param-{Name}`` for each tool argument whose schema property carries
  ``x-mcp-header: Name``, read at the property's exact ``properties`` path;
  absent or ``null`` values send no header.
* Values: strings as they are, integers in decimal, booleans as
  ``true``/``false``; a value that is not plain visible ASCII (non-ASCII,
  control characters, leading or trailing whitespace) or that looks like the
  sentinel is sent as ``=?base64?{base64 of UTF-8}?=`` ("Value Encoding").
* `header_annotations` validates a tool's annotations ("Schema Extension"):
  the name is a non-empty RFC 9110 token, unique case-insensitively; the
  property is statically reachable through ``properties`` only, and typed
  string, integer or boolean (``number`` is not allowed). A tool that breaks
  any rule is invalid and must be left out of ``tools/list``.
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["header_annotations", "encode_header_value", "request_headers", "InvalidToolHeaders"]

_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_PRIMITIVE = frozenset({"string", "integer", "boolean"})
_SENTINEL_START = "=?base64?"
_SENTINEL_END = "?="
_MAX_SAFE_INTEGER = 2**53 - 1
#: Keywords under which an annotation is not statically reachable.
_DYNAMIC = (
    "items", "prefixItems", "additionalProperties", "patternProperties", "contains", "unevaluatedProperties",
    "unevaluatedItems", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "$defs", "definitions",
    "dependentSchemas",
)
_NAME_TYPES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

Annotation = tuple[tuple[str, ...], str]


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break a rule; the message says which."""


def _safe(value: str) -> bool:
    if not value:
        return True
    if value[0] in " \t" or value[-1] in " \t":
        return False
    if value.startswith(_SENTINEL_START) and value.endswith(_SENTINEL_END):
        return False
    return all(0x20 <= ord(ch) <= 0x7E or ch == "\t" for ch in value)


def encode_header_value(value: Any) -> str:
    """A parameter value as a header value ("Value Encoding")."""
    if value is True:
        text = "true"
    elif value is False:
        text = "false"
    elif type(value) is int:
        text = str(value)
    elif type(value) is str:
        text = value
    else:
        raise TypeError(f"cannot mirror a {type(value).__name__} into a header")
    if _safe(text):
        return text
    return _SENTINEL_START + base64.b64encode(text.encode("utf-8")).decode("ascii") + _SENTINEL_END


def _find_stray(node: Any, path: str) -> str | None:
    """The path of an ``x-mcp-header`` found under a keyword that is not ``properties``."""
    if type(node) is dict:
        if "x-mcp-header" in node:
            return path
        for key, child in node.items():
            found = _find_stray(child, f"{path}/{key}")
            if found:
                return found
    elif type(node) is list:
        for i, child in enumerate(node):
            found = _find_stray(child, f"{path}/{i}")
            if found:
                return found
    return None


def header_annotations(tool: dict[str, Any]) -> list[Annotation]:
    """The ``(property path, header name)`` pairs of a tool, or raise `InvalidToolHeaders`."""
    schema = tool.get("inputSchema")
    out: list[Annotation] = []
    seen: set[str] = set()
    if type(schema) is not dict:
        return out
    stack: list[tuple[dict[str, Any], tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, path = stack.pop()
        for keyword in _DYNAMIC:
            if keyword in node:
                stray = _find_stray(node[keyword], keyword)
                if stray:
                    raise InvalidToolHeaders(f"x-mcp-header at {'/'.join(path + (stray,))} is not statically reachable")
        props = node.get("properties")
        if type(props) is not dict:
            continue
        for key, sub in props.items():
            if type(sub) is not dict:
                continue
            here = path + (key,)
            if "x-mcp-header" in sub:
                name = sub["x-mcp-header"]
                where = "/".join(here)
                if type(name) is not str or not name:
                    raise InvalidToolHeaders(f"x-mcp-header on {where} is empty or not a string")
                if not all(ch in _TCHAR for ch in name):
                    raise InvalidToolHeaders(f"x-mcp-header {name!r} on {where} is not an HTTP token")
                if name.lower() in seen:
                    raise InvalidToolHeaders(f"x-mcp-header {name!r} is used twice (names are case-insensitive)")
                if "$ref" in sub:
                    raise InvalidToolHeaders(f"x-mcp-header on {where} sits beside a $ref")
                kind = sub.get("type")
                if type(kind) is not str or kind not in _PRIMITIVE:
                    raise InvalidToolHeaders(
                        f"x-mcp-header on {where} needs type string, integer or boolean, not {kind!r}"
                    )
                seen.add(name.lower())
                out.append((here, name))
            stack.append((sub, here))
    return out


def _lookup(arguments: Any, path: tuple[str, ...]) -> Any:
    value = arguments
    for key in path:
        if type(value) is not dict or key not in value:
            return None
        value = value[key]
    return value


def request_headers(
    method: str,
    params: dict[str, Any] | None,
    version: str | None,
    annotations: list[Annotation] | None = None,
) -> dict[str, str]:
    """The metadata headers for one request."""
    headers: dict[str, str] = {}
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    headers["Mcp-Method"] = method
    field = _NAME_TYPES.get(method)
    if field is not None and params is not None:
        name = params.get(field)
        if type(name) is str:
            headers["Mcp-Name"] = encode_header_value(name)
    if annotations and params is not None:
        arguments = params.get("arguments")
        for path, header in annotations:
            value = _lookup(arguments, path)
            if value is None:
                continue
            if type(value) is int and abs(value) > _MAX_SAFE_INTEGER:
                continue
            if type(value) in (str, int, bool):
                headers["Mcp-Param-" + header] = encode_header_value(value)
    return headers
