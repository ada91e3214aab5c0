"""A function's signature and docstring, read once: its input schema and its parameters.

`signature_info(fn)` walks each parameter's hint into the type model once
(one `TypeWalker` for the whole signature, so a recursive type used twice
shares one ``$defs`` entry) and keeps the node on the `Param`: the input
schema is written from it here, and `arguments_converter` builds the
converter from the same node.

Rules (server/tools.mdx, "Tool"):

* ``inputSchema`` is an object; a parameter without a default is required;
  a default that is JSON is published as ``default``; ``**kwargs`` opens the
  object, otherwise it is closed (``additionalProperties: false``).
* A parameter must be passable by keyword (no ``*args``, no positional-only
  parameter); ``skip`` names injected parameters (the `Context`).
* A `Field` or a ``pydantic.Field(...)`` may be the default: its keywords go
  into the schema and its own default is passed when the argument is absent
  (`Param.fill`).
* A parameter's description comes from ``Annotated``/`Field` first, then
  from a Google-style ``Args:`` section of the docstring (which also leaves
  the tool's description), then from its type's docstring.
* An integer mirrored into a header (``x-mcp-header``) is bounded to
  ±(2**53 - 1) so it survives a double (server/tools.mdx, "x-mcp-header").
"""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any, Callable

from ...protocol.headers import MAX_SAFE_INTEGER
from ._exceptions import SchemaError
from ._jsonschema import SchemaWriter, as_json_value, is_json_value
from ._markers import MISSING, Field
from ._pydantic import field_info_default, is_field_info
from ._types import TypeNode, TypeWalker

__all__ = ["Param", "SignatureInfo", "signature_info", "signature_schema", "parse_docstring"]

# Patterns, compiled by `re` on first use (its cache): a docstring without an ``Args:`` section needs none.
_ARGS_HEADER = r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$"
_ARG_LINE = r"^\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$"


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """``(description without the Args section, {parameter: description})`` from a Google-style docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    if ":" not in doc:  # no line can be an Args header: the description is the whole text
        text = "\n".join(lines).strip()
        if "\n\n\n" in text:
            text = re.sub(r"\n{3,}", "\n\n", text)
        return (text or None), {}
    params: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(_ARGS_HEADER, lines[i])
        if m is None:
            kept.append(lines[i])
            i += 1
            continue
        indent = len(m.group(1))
        i += 1
        current: str | None = None
        item_indent: int | None = None
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            depth = len(line) - len(line.lstrip())
            if stripped and depth <= indent:
                break
            i += 1
            if not stripped:
                continue
            if item_indent is None:
                item_indent = depth
            arg = re.match(_ARG_LINE, stripped) if depth <= item_indent else None
            if arg is not None:
                current = arg.group(1)
                params[current] = arg.group(3).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(kept).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    return (text or None), params


class Param:
    """A tool parameter: name, type node and hint, default (`MISSING` if required) and ``fill``.

    ``fill`` makes the value to pass when the argument is absent, for defaults
    Python cannot apply itself (a `Field` or ``pydantic.Field`` used as the
    default); ``None`` otherwise.
    """

    __slots__ = ("name", "node", "hint", "default", "fill")

    def __init__(
        self, name: str, node: TypeNode, hint: Any, default: Any, fill: Callable[[], Any] | None = None
    ) -> None:
        self.name = name
        self.node = node
        self.hint = hint
        self.default = default
        self.fill = fill

    def __repr__(self) -> str:
        return f"Param({self.name!r}, {self.hint!r}, {self.default!r})"


class SignatureInfo:
    """What registration learns from a function: its input schema, parameters and description."""

    __slots__ = ("schema", "params", "description", "return_hint", "open_ended")

    def __init__(
        self, schema: dict[str, Any], params: list[Param], description: str | None, return_hint: Any, open_ended: bool
    ) -> None:
        self.schema = schema
        self.params = params
        self.description = description
        self.return_hint = return_hint
        self.open_ended = open_ended


def _resolved_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise SchemaError(f"{getattr(fn, '__qualname__', fn)}: cannot resolve the type hints: {exc}") from None


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def signature_info(fn: Callable[..., Any], *, skip: frozenset[str] = frozenset()) -> SignatureInfo:
    """Everything a tool needs from ``fn``'s signature; ``skip`` names injected parameters."""
    sig = inspect.signature(fn)
    hints = _resolved_hints(fn)
    description, arg_docs = parse_docstring(inspect.getdoc(fn))
    walker = TypeWalker()
    writer = SchemaWriter()
    properties: dict[str, Any] = {}
    required: list[str] = []
    params: list[Param] = []
    open_ended = False
    for param in sig.parameters.values():
        if param.name in skip:
            continue
        if param.kind is param.VAR_KEYWORD:
            open_ended = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.POSITIONAL_ONLY):
            raise SchemaError(
                f"{fn.__qualname__}: parameter {param.name!r} must be passable by keyword to be a tool argument"
            )
        hint = hints.get(param.name, Any)
        default = param.default
        marker: Field | None = None
        fill: Callable[[], Any] | None = None
        factory = False
        if isinstance(default, Field):
            marker, default = default, default.default
            if default is not MISSING:
                fill = _constant(default)
        elif is_field_info(default):
            info = default
            hint = typing.Annotated[hint, info]
            default = field_info_default(info)
            if default is not MISSING:
                fill = _constant(default)
            elif getattr(info, "default_factory", None) is not None:
                fill = info.default_factory
                default, factory = None, True  # not required; no published default
        elif default is param.empty:
            default = MISSING
        try:
            node = walker.walk(hint)
        except SchemaError as exc:
            raise SchemaError(f"{fn.__qualname__}, parameter {param.name!r}: {exc}") from None
        prop = writer.write(node)
        if marker is not None:
            marker.apply(prop)
        if param.name in arg_docs and not _described(hint, marker):
            prop["description"] = arg_docs[param.name]  # over a type's own docstring
        if default is MISSING:
            required.append(param.name)
        elif not factory and is_json_value(default):
            prop.setdefault("default", as_json_value(default))
        if "x-mcp-header" in prop and prop.get("type") == "integer":
            # header values must survive IEEE 754 doubles (tools.mdx, x-mcp-header)
            if prop.get("minimum", -MAX_SAFE_INTEGER) < -MAX_SAFE_INTEGER or "minimum" not in prop:
                prop["minimum"] = max(prop.get("minimum", -MAX_SAFE_INTEGER), -MAX_SAFE_INTEGER)
            if prop.get("maximum", MAX_SAFE_INTEGER) > MAX_SAFE_INTEGER or "maximum" not in prop:
                prop["maximum"] = min(prop.get("maximum", MAX_SAFE_INTEGER), MAX_SAFE_INTEGER)
        properties[param.name] = prop
        params.append(Param(param.name, node, hint, default, fill))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not open_ended:
        schema["additionalProperties"] = False
    schema = writer.finish(schema)
    return SignatureInfo(schema, params, description, hints.get("return", inspect.Parameter.empty), open_ended)


def _described(hint: Any, marker: Field | None) -> bool:
    """Whether a parameter's description is given explicitly (``Annotated``/`Field`), not by its type."""
    if marker is not None and marker.description is not None:
        return True
    while typing.get_origin(hint) is typing.Annotated:
        args = typing.get_args(hint)
        for extra in args[1:]:
            if isinstance(extra, str):
                return True
            if isinstance(extra, dict) and "description" in extra:
                return True
            if (isinstance(extra, Field) or is_field_info(extra)) and getattr(extra, "description", None):
                return True
        hint = args[0]
    return False


def signature_schema(
    fn: Callable[..., Any], *, skip: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[str]]:
    """``(inputSchema, parameter names)`` for a function; ``skip`` names injected parameters."""
    info = signature_info(fn, skip=skip)
    return info.schema, [p.name for p in info.params]
