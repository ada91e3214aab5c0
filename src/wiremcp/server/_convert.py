"""Tool arguments, from checked JSON to the Python types the function declared.

Built once per tool at registration (`arguments_converter`), run per call
after the input schema check passed, so a converter may assume the shape is
right. A parameter whose type JSON already gives (``str``, ``bool``,
``float``, ``Literal``, ``Any``, lists and dicts of those) costs nothing: no
converter is made for it, and a tool with none of the others gets ``None``
and skips this step entirely.

What converts:

=====================================  ===================================
hint                                   JSON value becomes
=====================================  ===================================
``int``                                an ``int`` (JSON ``1.0`` is an integer)
``Enum`` subclass                      the member with that value
``tuple[...]``, ``set``, ``frozenset``  that collection
``bytes``                              the decoded base64
``datetime``/``date``/``time``         ``fromisoformat``
``UUID``                               ``UUID(value)``
dataclass                              an instance (fields converted too)
TypedDict                              a dict with its fields converted
pydantic model                         ``Model.model_validate(value)``
``X | Y``                              as the first member whose schema matches
=====================================  ===================================

A converter that raises (a date that does not parse, a dataclass whose
``__post_init__`` refuses) becomes `ArgumentError`, which the tool answers
as an invalid-arguments tool execution error.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import enum
import types
import typing
import uuid
from typing import Any, Callable, Literal, Union

from ._schema import (
    _ABSTRACT_ARRAYS,
    _ARRAYS,
    _MAPPINGS,
    _REQUIRED_MARKERS,
    _SETS,
    Param,
    _type_hints,
    compile,
    is_typeddict,
    pydantic_model,
    schema_for,
)

__all__ = ["ArgumentError", "arguments_converter", "converter_for"]

Convert = Callable[[Any], Any]


class ArgumentError(Exception):
    """An argument passed the schema check but could not become the declared type."""

    def __init__(self, name: str, cause: BaseException) -> None:
        super().__init__(f"'{name}': {cause}")
        self.name = name
        self.cause = cause


def _to_int(v: Any) -> Any:
    return int(v) if type(v) is float else v


def _from_base64(v: str) -> bytes:
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("is not valid base64") from None


_SCALARS: dict[Any, Convert] = {
    int: _to_int,
    bytes: _from_base64,
    datetime.datetime: datetime.datetime.fromisoformat,
    datetime.date: datetime.date.fromisoformat,
    datetime.time: datetime.time.fromisoformat,
    uuid.UUID: uuid.UUID,
}


class _Converters:
    """Builds converters; recursive types share one converter through a cell."""

    __slots__ = ("_cells",)

    def __init__(self) -> None:
        self._cells: dict[Any, list[Convert | None]] = {}

    def of(self, hint: Any) -> Convert | None:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated or origin in _REQUIRED_MARKERS:
            return self.of(args[0])
        if isinstance(hint, typing.NewType):
            return self.of(hint.__supertype__)
        if type(hint).__name__ == "TypeAliasType":
            return self.of(hint.__value__)
        if origin is None:
            try:
                scalar = _SCALARS.get(hint)
            except TypeError:
                scalar = None
            if scalar is not None:
                return scalar
        if origin is Union or origin is types.UnionType:
            return self._union(args)
        if origin is Literal:
            return None
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return hint
        if origin in _ARRAYS or origin in _ABSTRACT_ARRAYS or hint in _ARRAYS or hint in _ABSTRACT_ARRAYS:
            item = self.of(args[0]) if args else None
            if origin in _SETS or hint in _SETS:
                kind: Callable[[Any], Any] = frozenset if (origin is frozenset or hint is frozenset) else set
                if item is None:
                    return kind
                return lambda v: kind(item(x) for x in v)
            if item is None:
                return None
            return lambda v: [item(x) for x in v]
        if origin is tuple or hint is tuple or hint is typing.Tuple:
            if not args or args == ((),):
                return tuple
            if len(args) == 2 and args[1] is Ellipsis:
                item = self.of(args[0])
                if item is None:
                    return tuple
                return lambda v: tuple(item(x) for x in v)
            parts = [self.of(a) for a in args]
            return lambda v: tuple(v[i] if c is None else c(v[i]) for i, c in enumerate(parts))
        if origin in _MAPPINGS or hint in _MAPPINGS:
            value = self.of(args[1]) if len(args) == 2 else None
            if value is None:
                return None
            return lambda v: {k: value(x) for k, x in v.items()}
        if is_typeddict(hint):
            return self._named(hint, self._typeddict)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._named(hint, self._dataclass)
        if pydantic_model(hint):
            return hint.model_validate  # type: ignore[attr-defined, no-any-return]
        return None

    def _named(self, cls: Any, build: Callable[[Any], Convert | None]) -> Convert | None:
        cell = self._cells.get(cls)
        if cell is not None:
            if cell[0] is None:  # still being built: a recursive type
                return lambda v: cell[0](v)  # type: ignore[misc]
            return None if cell[0] is _identity else cell[0]
        cell = self._cells[cls] = [None]
        made = build(cls)
        cell[0] = made if made is not None else _identity
        return made

    def _typeddict(self, cls: Any) -> Convert | None:
        fields = [(k, c) for k, h in _type_hints(cls).items() if (c := self.of(h)) is not None]
        if not fields:
            return None

        def convert(v: dict[str, Any]) -> dict[str, Any]:
            out = dict(v)
            for key, c in fields:
                if key in out:
                    out[key] = c(out[key])
            return out

        return convert

    def _dataclass(self, cls: Any) -> Convert:
        hints = _type_hints(cls)
        fields = {f.name: self.of(hints.get(f.name, Any)) for f in dataclasses.fields(cls) if f.init}

        def convert(v: dict[str, Any]) -> Any:
            return cls(**{k: (x if fields.get(k) is None else fields[k](x)) for k, x in v.items()})  # type: ignore[misc]

        return convert

    def _union(self, args: tuple[Any, ...]) -> Convert | None:
        members = [(a, self.of(a)) for a in args]
        if all(c is None for _, c in members):
            return None
        checked = [(compile(schema_for(a)), c) for a, c in members]

        def convert(v: Any) -> Any:
            for check, c in checked:
                if check(v) is None:
                    return v if c is None else c(v)
            return v

        return convert


def _identity(v: Any) -> Any:
    return v


def converter_for(hint: Any) -> Convert | None:
    """The converter for one type hint, or ``None`` when JSON already has the type."""
    return _Converters().of(hint)


def arguments_converter(params: list[Param]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """A function from checked arguments to the keyword arguments to call with; ``None`` if nothing converts."""
    builder = _Converters()
    converts = [(p.name, c) for p in params if (c := builder.of(p.hint)) is not None]
    fills = [(p.name, p.fill) for p in params if p.fill is not None]
    if not converts and not fills:
        return None

    def convert(arguments: dict[str, Any]) -> dict[str, Any]:
        out = None  # copied on the first change: the request's dict is never modified
        for name, c in converts:
            if name in arguments:
                value = arguments[name]
                try:
                    new = c(value)
                except Exception as exc:
                    raise ArgumentError(name, exc) from exc
                if new is not value:
                    if out is None:
                        out = dict(arguments)
                    out[name] = new
        for name, make in fills:
            if name not in arguments:
                if out is None:
                    out = dict(arguments)
                out[name] = make()  # type: ignore[misc]
        return arguments if out is None else out

    return convert
