"""Tool arguments, from checked JSON to the Python types the function declared.

Built once per tool at registration from the type model (`arguments_converter`
takes the `Param` s of `signature_info`, whose nodes also wrote the input
schema), run per call after the input schema check passed, so a converter
may assume the shape is right. A parameter whose type JSON already gives
(``str``, ``bool``, ``float``, ``Literal``, ``Any``, lists and dicts of those)
costs nothing: no converter is made for it, and a tool with none of the
others gets ``None`` and skips this step entirely.

What converts:

=====================================  ===================================
node (hint)                            JSON value becomes
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
``X | Y``                              as the member whose schema matches
=====================================  ===================================

A union is not checked again member by member: the value already passed the
union's schema, so it matches at least one member. Each member has a cheap
test built from its node that every value its schema accepts passes (its
JSON type; for a closed object, its keys; see `may_match`); when one member
passes, it is the one. Only when several could (``int | float`` given
``1.0``, two dataclasses with the same keys) are their schemas checked, in
order, and the first that accepts the value converts it, as before.

A converter that raises (a date that does not parse, a dataclass whose
``__post_init__`` refuses) becomes `ArgumentError`, which the tool answers
as an invalid-arguments tool execution error.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import uuid
from typing import Any, Callable, Sequence

from ._jsonschema import json_schema
from ._markers import Field
from ._pydantic import is_field_info
from ._signature import Param
from ._types import (
    ANY,
    AnnotatedType,
    ArrayType,
    EnumType,
    LiteralType,
    MappingType,
    ModelType,
    ObjectType,
    Scalar,
    TupleType,
    TypeNode,
    UnionType,
    type_node,
)
from ._validator import Check, compile_validator

__all__ = ["ArgumentError", "Convert", "arguments_converter", "converter_for", "may_match", "node_converter"]

#: A converter: from a checked JSON value to the declared Python value.
Convert = Callable[[Any], Any]
_Test = Callable[[Any], bool]


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


_SCALARS: dict[type, Convert] = {
    int: _to_int,
    bytes: _from_base64,
    datetime.datetime: datetime.datetime.fromisoformat,
    datetime.date: datetime.date.fromisoformat,
    datetime.time: datetime.time.fromisoformat,
    uuid.UUID: uuid.UUID,
}


def _identity(v: Any) -> Any:
    return v


class _Converters:
    """Builds converters; a recursive type shares one converter through a cell."""

    __slots__ = ("_cells",)

    def __init__(self) -> None:
        self._cells: dict[ObjectType, list[Convert | None]] = {}

    def of(self, node: TypeNode) -> Convert | None:
        if isinstance(node, Scalar):
            return _SCALARS.get(node.py)
        if node is ANY or isinstance(node, LiteralType):
            return None
        if isinstance(node, AnnotatedType):
            return self.of(node.inner)
        if isinstance(node, EnumType):
            return node.cls
        if isinstance(node, ArrayType):
            return _array_converter(self.of(node.item), node.collection)
        if isinstance(node, TupleType):
            return _tuple_converter([self.of(item) for item in node.items])
        if isinstance(node, MappingType):
            value = self.of(node.value)
            if value is None:
                return None
            return lambda v: {k: value(x) for k, x in v.items()}
        if isinstance(node, ObjectType):
            return self._named(node)
        if isinstance(node, ModelType):
            model: Any = node.cls  # a pydantic model, duck-typed
            validate: Convert = model.model_validate
            return validate
        if isinstance(node, UnionType):
            return self._union(node)
        raise TypeError(f"not a type node: {node!r}")  # every node kind is above

    def _named(self, node: ObjectType) -> Convert | None:
        found = self._cells.get(node)
        if found is not None:
            done = found[0]
            if done is not None:
                return None if done is _identity else done
            cell = found  # still being built: a recursive type

            def forward(v: Any) -> Any:
                target = cell[0]
                assert target is not None
                return target(v)

            return forward
        cell = self._cells[node] = [None]
        made = self._typeddict(node) if node.kind == "typeddict" else self._dataclass(node)
        cell[0] = made if made is not None else _identity
        return made

    def _typeddict(self, node: ObjectType) -> Convert | None:
        fields = [(f.name, c) for f in node.fields if f.node is not None and (c := self.of(f.node)) is not None]
        if not fields:
            return None

        def convert_typeddict(v: dict[str, Any]) -> dict[str, Any]:
            out = dict(v)
            for key, c in fields:
                if key in out:
                    out[key] = c(out[key])
            return out

        return convert_typeddict

    def _dataclass(self, node: ObjectType) -> Convert:
        cls = node.cls
        fields = [
            (f.name, c) for f in node.fields if f.init and f.node is not None and (c := self.of(f.node)) is not None
        ]
        if not fields:
            return lambda v: cls(**v)

        def convert_dataclass(v: dict[str, Any]) -> Any:
            kwargs = dict(v)
            for key, c in fields:
                if key in kwargs:
                    kwargs[key] = c(kwargs[key])
            return cls(**kwargs)

        return convert_dataclass

    def _union(self, node: UnionType) -> Convert | None:
        members = [(may_match(m), self.of(m)) for m in node.members]
        if all(c is None for _, c in members):
            return None
        return _union_converter(members, node.members)


def _array_converter(item: Convert | None, collection: type) -> Convert | None:
    if collection is list:
        if item is None:
            return None
        return lambda v: [item(x) for x in v]
    if item is None:
        return collection
    return lambda v: collection(item(x) for x in v)


def _tuple_converter(parts: list[Convert | None]) -> Convert:
    if all(c is None for c in parts):
        return tuple
    return lambda v: tuple(x if c is None else c(x) for x, c in zip(v, parts))


def _union_converter(members: list[tuple[_Test | None, Convert | None]], nodes: Sequence[TypeNode]) -> Convert:
    n = len(members)
    checks: list[Check | None] = [None] * n

    def accepts(i: int, v: Any) -> bool:
        check = checks[i]
        if check is None:  # compiled on the first value that needs it
            check = checks[i] = compile_validator(json_schema(nodes[i]))
        return check(v) is None

    def convert_union(v: Any) -> Any:
        first = -1
        for i, (may, c) in enumerate(members):
            if may is None or may(v):
                if first >= 0:
                    break  # a second candidate: ask the schemas
                first = i
        else:
            if first < 0:
                return v
            c = members[first][1]
            return v if c is None else c(v)
        for i in range(first, n):
            may, c = members[i]
            if (may is None or may(v)) and accepts(i, v):
                return v if c is None else c(v)
        return v

    return convert_union


# -- which member a union value can be ---------------------------------------------


def _is_str(v: Any) -> bool:
    return type(v) is str


def _is_integer(v: Any) -> bool:
    return type(v) is int or (type(v) is float and v.is_integer())


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _is_bool(v: Any) -> bool:
    return type(v) is bool


def _is_null(v: Any) -> bool:
    return v is None


def _is_list(v: Any) -> bool:
    return type(v) is list


def _is_dict(v: Any) -> bool:
    return type(v) is dict


_SCALAR_TESTS: dict[type, _Test] = {
    str: _is_str,
    int: _is_integer,
    float: _is_number,
    bool: _is_bool,
    type(None): _is_null,
}


def may_match(node: TypeNode) -> _Test | None:
    """A cheap test every JSON value ``node``'s input schema accepts passes; ``None``: anything may.

    A value that fails it certainly does not match; one that passes may.
    """
    if isinstance(node, Scalar):
        test: _Test = _SCALAR_TESTS.get(node.py, _is_str)  # bytes, dates, UUIDs travel as strings
        return test
    if isinstance(node, (LiteralType, EnumType)):
        return _scalar_values_test(node.values)
    if isinstance(node, ArrayType):
        return _is_list
    if isinstance(node, TupleType):
        size = len(node.items)
        return lambda v: type(v) is list and len(v) == size
    if isinstance(node, MappingType):
        return _is_dict
    if isinstance(node, ObjectType):
        # input schemas of TypedDicts and dataclasses are closed: the keys tell a lot
        fields = [f for f in node.fields if f.init]
        names = frozenset(f.name for f in fields)
        required = frozenset(f.name for f in fields if f.required)
        return lambda v: type(v) is dict and names.issuperset(v) and required.issubset(v)
    if isinstance(node, AnnotatedType):
        if any(_widens(extra) for extra in node.extras):
            return None
        return may_match(node.inner)
    if isinstance(node, UnionType):
        tests: list[_Test] = []
        for member in node.members:
            member_test = may_match(member)
            if member_test is None:
                return None
            tests.append(member_test)
        return lambda v: any(t(v) for t in tests)
    return None  # Any, a pydantic model (its own schema): anything may


def _scalar_values_test(values: list[Any]) -> _Test:
    kinds: set[_Test] = set()
    for value in values:
        if value is None:
            kinds.add(_is_null)
        elif isinstance(value, bool):
            kinds.add(_is_bool)
        elif isinstance(value, (int, float)):
            kinds.add(_is_number)  # an enum of 1 accepts 1.0, and of 1.0 accepts 1
        else:
            kinds.add(_is_str)
    if len(kinds) == 1:
        return kinds.pop()
    tests = tuple(kinds)
    return lambda v: any(t(v) for t in tests)


def _widens(extra: Any) -> bool:
    """Whether ``Annotated`` metadata may write keywords that accept more than the type does."""
    if isinstance(extra, dict):
        return True
    if isinstance(extra, Field):
        return bool(extra.json_schema)
    return is_field_info(extra)


def converter_for(hint: Any) -> Convert | None:
    """The converter for one type hint, or ``None`` when JSON already has the type."""
    return _Converters().of(type_node(hint))


def node_converter(node: TypeNode) -> Convert | None:
    """The converter for a walked type node (see `converter_for`), so a hint is walked once."""
    return _Converters().of(node)


def arguments_converter(params: list[Param]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """A function from checked arguments to the keyword arguments to call with; ``None`` if nothing converts."""
    builder = _Converters()
    converts = [(p.name, c) for p in params if (c := builder.of(p.node)) is not None]
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
                out[name] = make()
        return arguments if out is None else out

    return convert
