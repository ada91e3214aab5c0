"""Typed elicitation: a Python type as the form, the answer converted back to it.

``await ctx.elicit("Who are you?", Person)`` asks the user to fill a form
whose ``requestedSchema`` is derived from ``Person`` and returns an
`Elicited`: ``.action`` is ``"accept"``, ``"decline"`` or ``"cancel"``
(three distinct outcomes, client/elicitation.mdx "Response Actions"), and
``.value`` is a ``Person`` when the user accepted, else ``None``.

What a type may be (client/elicitation.mdx, "Requested Schema": a flat
object of primitive properties):

* an object type: a dataclass, a TypedDict or a pydantic model whose fields
  are ``str`` (optionally a date, datetime or a ``Field(format=...)`` of
  ``email``/``uri``/``date``/``date-time``), ``int``, ``float``, ``bool``,
  a ``Literal`` or ``Enum`` of strings (single select), or a ``list`` of
  those (multi select), each optionally ``| None``; constraints the spec
  lists (``minLength``, ``maxLength``, ``minimum``, ``maximum``,
  ``minItems``, ``maxItems``, a title, a description, a default) are kept;
* a primitive (``str``, ``int``, ``float``, ``bool``, a string ``Literal``
  or ``Enum``, a list of those): a one-field form whose field is ``value``.

Anything else (a nested object, a list of objects, a pattern, a union of two
types, an integer enum...) is a `SchemaError` naming the field, raised when
the form is first built: at registration for ``Elicit(...)`` parameters, at
the first call for ``ctx.elicit``. Forms are built once per type and cached.

The accepted ``content`` was checked against the schema already (`_mrtr.
check_answer`, -32602 otherwise); it is then converted with the type model's
converter, so a ``date`` field arrives as a `datetime.date`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Generic, Literal, TypeVar

from ..jsonrpc import InvalidParams
from ._schema import SchemaError, json_schema, node_converter, type_node

__all__ = ["Elicited", "ElicitForm", "form_for", "Action"]

T = TypeVar("T")
Action = Literal["accept", "decline", "cancel"]

#: The field of a one-field form made for a primitive type.
VALUE_FIELD = "value"

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_COMMON = frozenset({"type", "title", "description", "default"})
_ALLOWED = {
    "string": _COMMON | {"minLength", "maxLength", "format", "enum", "oneOf"},
    "number": _COMMON | {"minimum", "maximum"},
    "integer": _COMMON | {"minimum", "maximum"},
    "boolean": _COMMON,
    "array": _COMMON | {"minItems", "maxItems", "items", "uniqueItems"},
}


class Elicited(Generic[T]):
    """The user's answer to a typed form: ``action`` and, when accepted, ``value``."""

    __slots__ = ("action", "value", "content")

    def __init__(self, action: Action, value: T | None = None, content: dict[str, Any] | None = None) -> None:
        self.action: Action = action
        #: The answer converted to the requested type; ``None`` unless accepted.
        self.value = value
        #: The raw ``content`` the client sent (``None`` unless accepted).
        self.content = content

    @property
    def accepted(self) -> bool:
        """Whether the user accepted (``action`` is ``accept``)."""
        return self.action == "accept"

    def __repr__(self) -> str:
        return f"Elicited({self.action!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Elicited) and (self.action, self.value) == (other.action, other.value)

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by value, not hashable


class ElicitForm(Generic[T]):
    """The ``requestedSchema`` made from a type, and how to turn an answer back into it."""

    __slots__ = ("hint", "schema", "wrapped", "_convert")

    def __init__(self, hint: Any) -> None:
        self.hint = hint
        node = type_node(hint)
        schema = json_schema(node)
        if "$defs" in schema:
            raise SchemaError(
                f"{_name(hint)}: an elicitation form is a flat object of primitive fields; "
                "this type nests objects (client/elicitation.mdx, Requested Schema)"
            )
        self.wrapped = not (schema.get("type") == "object" and isinstance(schema.get("properties"), dict))
        if self.wrapped:
            schema = {"type": "object", "properties": {VALUE_FIELD: schema}, "required": [VALUE_FIELD]}
        self.schema = _restrict(schema, _name(hint))
        self._convert: Callable[[Any], Any] | None = node_converter(node)

    def result(self, answer: dict[str, Any]) -> Elicited[T]:
        """The `Elicited` for a checked ElicitResult."""
        action: Action = answer["action"]
        if action != "accept":
            return Elicited(action)
        content = answer.get("content")
        if type(content) is not dict:
            content = {}
        raw = content.get(VALUE_FIELD) if self.wrapped else content
        try:
            value = raw if self._convert is None else self._convert(raw)
        except Exception as exc:  # the client's answer, checked by the schema, still does not convert
            raise InvalidParams(f"Invalid params: the elicitation answer does not convert to {_name(self.hint)}: {exc}") from None
        return Elicited("accept", value, content)


@functools.lru_cache(maxsize=256)
def _cached_form(hint: Any) -> ElicitForm[Any]:
    return ElicitForm(hint)


def form_for(hint: Any) -> ElicitForm[Any]:
    """The form for ``hint`` (built once per hashable type); `SchemaError` if elicitation cannot ask for it."""
    try:
        return _cached_form(hint)
    except TypeError:  # an unhashable hint (rare): build it each time
        return ElicitForm(hint)


def _name(hint: Any) -> str:
    return getattr(hint, "__qualname__", None) or repr(hint)


def _restrict(schema: dict[str, Any], where: str) -> dict[str, Any]:
    """The schema as elicitation allows it, or `SchemaError` naming what it does not allow."""
    properties: dict[str, Any] = {}
    required = list(schema.get("required", []))
    for name, prop in schema["properties"].items():
        prop, optional = _unwrap_optional(prop)
        if optional and name in required:
            required.remove(name)
        properties[name] = _primitive(prop, f"{where}, field {name!r}")
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _unwrap_optional(prop: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """``X | None`` → ``(X, True)``; a ``None`` default is dropped (a form field left empty)."""
    prop = dict(prop)
    optional = False
    kinds = prop.get("type")
    if type(kinds) is list and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        if len(rest) == 1:
            prop["type"] = rest[0]
            optional = True
    options = prop.get("anyOf")
    if type(options) is list and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            del prop["anyOf"]
            prop = {**rest[0], **prop}
            optional = True
    if optional and prop.get("default", 0) is None:
        del prop["default"]
    return prop, optional


def _refuse(where: str, what: str) -> SchemaError:
    return SchemaError(
        f"{where}: {what}; an elicitation form allows strings (formats email, uri, date, date-time), "
        "numbers, integers, booleans, string enums and lists of string enums (client/elicitation.mdx, Requested Schema)"
    )


def _primitive(prop: dict[str, Any], where: str) -> dict[str, Any]:
    kind = prop.get("type")
    if type(kind) is not str or kind not in _ALLOWED:
        return _fail(prop, where)
    if kind != "string" and ("enum" in prop or "oneOf" in prop):
        raise _refuse(where, "an enum's values must be strings")
    extra = set(prop) - _ALLOWED[kind]
    if extra:
        raise _refuse(where, f"the keyword{'s' if len(extra) > 1 else ''} {', '.join(sorted(extra))} cannot be asked for")
    if kind == "string":
        fmt = prop.get("format")
        if fmt is not None and fmt not in _FORMATS:
            raise _refuse(where, f"the string format {fmt!r} is not one of email, uri, date, date-time")
        _string_choices(prop, where)
    elif kind == "array":
        items = prop.get("items")
        if type(items) is not dict:
            raise _refuse(where, "a list needs string enum items")
        if "anyOf" in items and set(items) == {"anyOf"}:
            _titled(items["anyOf"], where)
        elif not (items.get("type") == "string" and "enum" in items and set(items) <= {"type", "enum"}):
            raise _refuse(where, "a list may only hold a string Literal or Enum (a multi-select)")
        else:
            _string_choices(items, where)
        prop.pop("uniqueItems", None)  # a multi-select picks each option once anyway
    return prop


def _fail(prop: dict[str, Any], where: str) -> dict[str, Any]:
    if "enum" in prop or "const" in prop:
        raise _refuse(where, "an enum's values must be strings")
    if "anyOf" in prop or "oneOf" in prop or type(prop.get("type")) is list:
        raise _refuse(where, "a union of several types cannot be asked for")
    kind = prop.get("type")
    if kind == "object" or "$ref" in prop:
        raise _refuse(where, "a nested object cannot be asked for")
    raise _refuse(where, f"the type {kind!r} cannot be asked for" if kind else "a field without a type cannot be asked for")


def _string_choices(prop: dict[str, Any], where: str) -> None:
    values = prop.get("enum")
    if values is not None and not all(type(v) is str for v in values):
        raise _refuse(where, "an enum's values must be strings")
    if "oneOf" in prop:
        _titled(prop["oneOf"], where)


def _titled(options: Any, where: str) -> None:
    if type(options) is not list or not all(
        type(o) is dict and type(o.get("const")) is str and set(o) <= {"const", "title"} for o in options
    ):
        raise _refuse(where, "titled choices must be {const, title} pairs of strings")
