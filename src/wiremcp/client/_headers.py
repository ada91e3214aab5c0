"""HTTP request metadata headers the client mirrors from the body (streamable-http.mdx, "Request Metadata").

Transport-agnostic and pure: the `Client` computes the headers when its
transport asks for them (``mirrors_headers``), and the HTTP transport just
sends them.

* ``MCP-Protocol-Version`` on every POST; ``Mcp-Method`` on every request;
  ``Mcp-Name`` (``params.name`` or ``params.uri``) on tools/call,
  resources/read and prompts/get, and ``params.taskId`` on tasks/get,
  tasks/update and tasks/cancel (the tasks extension's routing header).
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

from typing import Any

from ..protocol.headers import MAX_SAFE_INTEGER as _MAX_SAFE_INTEGER
from ..protocol.headers import InvalidHeaderAnnotation, encode_header_value
from ..protocol.headers import header_annotations as _annotations

__all__ = ["header_annotations", "encode_header_value", "request_headers", "InvalidToolHeaders"]

_NAME_TYPES = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # tasks.md, "Streamable HTTP: Routing Headers"
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

Annotation = tuple[tuple[str, ...], str]


class InvalidToolHeaders(ValueError):
    """A tool's ``x-mcp-header`` annotations break a rule; the message says which."""


def header_annotations(tool: dict[str, Any]) -> list[Annotation]:
    """The ``(property path, header name)`` pairs of a tool, or raise `InvalidToolHeaders`."""
    try:
        params = _annotations(tool.get("inputSchema"))
    except InvalidHeaderAnnotation as exc:
        raise InvalidToolHeaders(str(exc)) from None
    return [(p.path, p.name) for p in params]


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
