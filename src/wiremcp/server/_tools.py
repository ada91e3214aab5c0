"""Tools: registration from Python functions, argument checks, calls and results.

A tool is a plain or async function. Its ``inputSchema`` comes from the type
hints (see `_schema`), its description from the docstring. Calling it:

1. the arguments are checked against the input schema; a problem becomes a
   tool execution error (``isError: true``) the model can read and fix
   (server/tools.mdx, "Error Handling");
2. the function runs on the event loop (an async one is awaited);
3. what it returns becomes content: a ``str`` is one text block, a content
   block dict (``{"type": "text", ...}``) or a list of them is sent as is, a
   `ToolResult` is taken whole, anything else is sent as its JSON text;
4. `ToolError` or any other exception becomes ``isError: true`` with the
   exception's message, except a `JSONRPCError` (a deliberate protocol
   error, such as -32021 from ``ctx.elicit``), which stays a protocol error,
   and `InputRequired` (a BaseException), which `Server.handle` answers.
"""

from __future__ import annotations

import inspect
import logging
import typing
from typing import Any, Awaitable, Callable

import orjson

from ..jsonrpc import JSONRPCError
from ._context import Context
from ._schema import compile, signature_schema

__all__ = ["Tool", "ToolError", "ToolResult", "text"]

log = logging.getLogger("wiremcp.server")

_CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})


class ToolError(Exception):
    """Raise it in a tool to report a tool execution error (``isError: true``) with this message."""


class ToolResult:
    """A full tools/call result when a plain return value is not enough."""

    __slots__ = ("content", "structured_content", "is_error", "meta")

    def __init__(
        self,
        content: list[dict[str, Any]] | None = None,
        *,
        structured_content: Any = None,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.content = content if content is not None else []
        self.structured_content = structured_content
        self.is_error = is_error
        self.meta = meta


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def error_result(message: str) -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": message}], "isError": True}


def to_result(value: Any) -> dict[str, Any]:
    """The tools/call result for what a tool returned."""
    t = type(value)
    if t is str:
        return {"resultType": "complete", "content": [{"type": "text", "text": value}]}
    if t is ToolResult:
        out: dict[str, Any] = {"resultType": "complete", "content": value.content}
        if value.structured_content is not None:
            out["structuredContent"] = value.structured_content
        if value.is_error:
            out["isError"] = True
        if value.meta:
            out["_meta"] = value.meta
        return out
    if value is None:
        return {"resultType": "complete", "content": []}
    if t is dict and value.get("type") in _CONTENT_TYPES:
        return {"resultType": "complete", "content": [value]}
    if t is list and value and all(type(v) is dict and v.get("type") in _CONTENT_TYPES for v in value):
        return {"resultType": "complete", "content": value}
    return {"resultType": "complete", "content": [{"type": "text", "text": orjson.dumps(value).decode()}]}


class Tool:
    """A registered tool: its wire definition and how to call it."""

    __slots__ = ("name", "fn", "definition", "is_async", "context_param", "_check")

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.is_async = inspect.iscoroutinefunction(fn)
        self.context_param = _context_param(fn)
        skip = frozenset({self.context_param}) if self.context_param else frozenset()
        if input_schema is None:
            input_schema, _ = signature_schema(fn, skip=skip)
        definition: dict[str, Any] = {"name": self.name}
        if title:
            definition["title"] = title
        doc = description if description is not None else inspect.getdoc(fn)
        if doc:
            definition["description"] = doc
        definition["inputSchema"] = input_schema
        if annotations:
            definition["annotations"] = annotations
        if icons:
            definition["icons"] = icons
        if meta:
            definition["_meta"] = meta
        self.definition = definition
        self._check = compile(input_schema)

    def call(self, arguments: dict[str, Any], ctx: Context | None) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """Run the tool: a result dict now, or an awaitable of one for an async tool."""
        problem = self._check(arguments)
        if problem is not None:
            return error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        if self.context_param is not None:
            arguments = {**arguments, self.context_param: ctx}
        try:
            out = self.fn(**arguments)
        except ToolError as exc:
            return error_result(str(exc))
        except JSONRPCError:
            raise  # a deliberate protocol error (e.g. -32021 from ctx.ask) stays one
        except Exception as exc:
            return self._failed(exc)
        if self.is_async:
            return self._finish(out)
        return to_result(out)

    async def _finish(self, pending: Awaitable[Any]) -> dict[str, Any]:
        try:
            out = await pending
        except ToolError as exc:
            return error_result(str(exc))
        except JSONRPCError:
            raise  # a deliberate protocol error (e.g. -32021 from ctx.ask) stays one
        except Exception as exc:
            return self._failed(exc)
        return to_result(out)

    def _failed(self, exc: Exception) -> dict[str, Any]:
        log.warning("tool %r raised %s", self.name, type(exc).__name__, exc_info=exc)
        return error_result(f"Error in tool {self.name!r}: {type(exc).__name__}: {exc}")


def _context_param(fn: Callable[..., Any]) -> str | None:
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # unresolved forward references: no injection
        return None
    for name, hint in hints.items():
        if hint is Context:
            return name
    return None
