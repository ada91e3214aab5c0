"""The type model: one walk of a type hint into a small tree of typed nodes.

Both halves of registration read this tree and never the hint again: the
JSON Schema writer (`_jsonschema`) and the argument converter (`_convert`).
So a hint is interpreted once, by one dispatch, and the two cannot disagree
about what a hint means.

Nodes (all immutable after the walk; the tree is a graph when a type refers
to itself):

====================  =========================================================
node                  hints
====================  =========================================================
`ANY`                 ``Any``, ``object``, a missing annotation
`Scalar`              ``str``, ``int``, ``float``, ``bool``, ``None``, ``bytes``,
                      ``datetime``/``date``/``time``, ``UUID``
`ArrayType`           ``list[X]``, ``Sequence[X]`` (and the other abstract
                      sequences), ``set[X]``, ``frozenset[X]``, ``tuple[X, ...]``
`TupleType`           ``tuple[X, Y]``: fixed length
`MappingType`         ``dict[str, X]``, ``Mapping[str, X]``
`UnionType`           ``X | Y``, ``Optional[X]``, ``Union[...]``
`LiteralType`         ``Literal[...]`` of JSON scalars
`EnumType`            an ``Enum`` subclass whose values are JSON scalars
`ObjectType`          a ``TypedDict`` or a dataclass, with its `ObjectField` s
`ModelType`           a pydantic v2 model (only when pydantic is imported)
`AnnotatedType`       ``Annotated[X, ...]``: X's node and the metadata
====================  =========================================================

Wrappers that mean nothing on the wire are looked through: ``NewType``,
``Required``/``NotRequired`` (read for the TypedDict's required keys first),
``type X = ...`` aliases. Rules the walk keeps:

* Everything a hint can get wrong is found here, at registration: a forward
  reference that does not resolve, a ``dict`` whose keys are not strings, an
  enum or literal value that is not a JSON scalar, a `Field` used as a
  dataclass default. Each is a `SchemaError` naming the type and field.
* One `TypeWalker` makes one `ObjectType` per class. The node is registered
  before its fields are walked, so a recursive type points back at itself
  and the walk ends.
* A dataclass field with ``init=False`` is walked too (output schemas list
  it); a problem with it is kept on the field (`ObjectField.error`) and
  raised only by a reader that needs the field.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import inspect
import sys
import types
import typing
import uuid
from typing import Any, Literal, Union

from ._exceptions import SchemaError
from ._markers import MISSING, Field
from ._pydantic import is_model

__all__ = [
    "TypeNode",
    "AnyType",
    "ANY",
    "Scalar",
    "ArrayType",
    "TupleType",
    "MappingType",
    "UnionType",
    "LiteralType",
    "EnumType",
    "ObjectType",
    "ObjectField",
    "ModelType",
    "AnnotatedType",
    "TypeWalker",
    "type_node",
    "type_hints",
    "is_typeddict",
    "unwrap",
    "SEQUENCE_ORIGINS",
    "SCALAR_TYPES",
]


class TypeNode:
    """A node of the type model."""

    __slots__ = ()


class AnyType(TypeNode):
    """Any JSON value: ``Any``, ``object`` or no annotation."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ANY"


#: The one `AnyType`.
ANY = AnyType()

#: The Python types a `Scalar` can stand for.
SCALAR_TYPES: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), bytes, datetime.datetime, datetime.date, datetime.time, uuid.UUID}
)


class Scalar(TypeNode):
    """One of `SCALAR_TYPES` (``py``)."""

    __slots__ = ("py",)

    def __init__(self, py: type) -> None:
        self.py = py

    def __repr__(self) -> str:
        return f"Scalar({self.py.__name__})"


_SCALARS: dict[Any, Scalar] = {t: Scalar(t) for t in SCALAR_TYPES}
_SCALARS[None] = _SCALARS[type(None)]


class ArrayType(TypeNode):
    """A JSON array of ``item``, received as ``collection`` (list, set, frozenset or tuple)."""

    __slots__ = ("item", "collection")

    def __init__(self, item: TypeNode, collection: type) -> None:
        self.item = item
        self.collection = collection

    def __repr__(self) -> str:
        return f"ArrayType({self.item!r}, {self.collection.__name__})"


class TupleType(TypeNode):
    """A fixed-length JSON array: one node per position."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[TypeNode, ...]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return f"TupleType({self.items!r})"


class MappingType(TypeNode):
    """A JSON object with string keys and ``value`` values."""

    __slots__ = ("value",)

    def __init__(self, value: TypeNode) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"MappingType({self.value!r})"


class UnionType(TypeNode):
    """Any one of ``members``, in the order they were written."""

    __slots__ = ("members",)

    def __init__(self, members: tuple[TypeNode, ...]) -> None:
        self.members = members

    def __repr__(self) -> str:
        return f"UnionType({self.members!r})"


class LiteralType(TypeNode):
    """One of ``values`` (JSON scalars)."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"LiteralType({self.values!r})"


class EnumType(TypeNode):
    """A member of the enum ``cls``, sent as its value (``values`` are JSON scalars)."""

    __slots__ = ("cls", "values")

    def __init__(self, cls: type[enum.Enum]) -> None:
        self.cls = cls
        self.values = [m.value for m in cls]

    def __repr__(self) -> str:
        return f"EnumType({self.cls.__name__})"


class ObjectField:
    """A field of an `ObjectType`.

    ``required``: a TypedDict's required key, or a dataclass field without a
    default or factory. ``default`` is the dataclass default (`MISSING` if
    none); ``init`` is False for a dataclass field the constructor does not
    take; ``description`` comes from the dataclass field's metadata. ``node``
    is ``None`` only when the field's hint could not be walked; ``error``
    then says why.
    """

    __slots__ = ("name", "node", "required", "default", "has_factory", "init", "description", "error")

    def __init__(
        self,
        name: str,
        node: TypeNode | None,
        *,
        required: bool,
        default: Any = MISSING,
        has_factory: bool = False,
        init: bool = True,
        description: str | None = None,
        error: str | None = None,
    ) -> None:
        self.name = name
        self.node = node
        self.required = required
        self.default = default
        self.has_factory = has_factory
        self.init = init
        self.description = description
        self.error = error

    def __repr__(self) -> str:
        return f"ObjectField({self.name!r}, {self.node!r}, required={self.required})"


class ObjectType(TypeNode):
    """A TypedDict (``kind`` ``"typeddict"``) or a dataclass (``"dataclass"``); ``fields`` in order."""

    __slots__ = ("cls", "kind", "fields", "description")

    def __init__(self, cls: type, kind: Literal["typeddict", "dataclass"]) -> None:
        self.cls = cls
        self.kind = kind
        self.fields: list[ObjectField] = []
        self.description = _own_doc(cls)

    def __repr__(self) -> str:
        return f"ObjectType({self.cls.__qualname__})"


class ModelType(TypeNode):
    """A pydantic v2 model class."""

    __slots__ = ("cls",)

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __repr__(self) -> str:
        return f"ModelType({self.cls.__qualname__})"


class AnnotatedType(TypeNode):
    """``Annotated[inner, *extras]``: the metadata only describes, the value is ``inner``'s."""

    __slots__ = ("inner", "extras")

    def __init__(self, inner: TypeNode, extras: tuple[Any, ...]) -> None:
        self.inner = inner
        self.extras = extras

    def __repr__(self) -> str:
        return f"AnnotatedType({self.inner!r}, {self.extras!r})"


# -- the walk ------------------------------------------------------------------------

_LISTS = {
    list,
    typing.List,
    typing.Sequence,
    typing.Iterable,
    typing.Collection,
    typing.MutableSequence,
    collections.abc.Sequence,
    collections.abc.Iterable,
    collections.abc.Collection,
    collections.abc.MutableSequence,
}
_SETS = {
    set,
    typing.Set,
    typing.AbstractSet,
    typing.MutableSet,
    collections.abc.Set,
    collections.abc.MutableSet,
}
_FROZENSETS = {frozenset, typing.FrozenSet}
#: Hints and ``get_origin`` results that are JSON arrays of one item type
#: (lists, sets and the abstract sequences; not tuples).
SEQUENCE_ORIGINS: frozenset[Any] = frozenset(_LISTS | _SETS | _FROZENSETS)
_MAPPINGS = {
    dict,
    typing.Dict,
    typing.Mapping,
    typing.MutableMapping,
    collections.abc.Mapping,
    collections.abc.MutableMapping,
}
_REQUIRED_MARKERS = {typing.Required, typing.NotRequired}


def is_typeddict(hint: Any) -> bool:
    """Whether ``hint`` is a TypedDict class (from ``typing`` or ``typing_extensions``)."""
    if typing.is_typeddict(hint):
        return True
    te = sys.modules.get("typing_extensions")
    return te is not None and bool(te.is_typeddict(hint))


def unwrap(hint: Any) -> Any:
    """``hint`` without ``Annotated``, ``Required``/``NotRequired``, ``NewType`` and alias wrappers."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated or origin in _REQUIRED_MARKERS:
            hint = typing.get_args(hint)[0]
        elif isinstance(hint, typing.NewType):
            hint = hint.__supertype__
        elif type(hint).__name__ == "TypeAliasType":  # `type X = ...` (3.12)
            hint = hint.__value__
        else:
            return hint


def type_hints(obj: Any) -> dict[str, Any]:
    """``typing.get_type_hints(obj, include_extras=True)``; a failure is a `SchemaError`."""
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except Exception as exc:
        raise SchemaError(f"cannot resolve the type hints of {obj!r}: {exc}") from None


class TypeWalker:
    """Walks hints into nodes; one `ObjectType` per class, shared by every hint it walks."""

    __slots__ = ("_objects",)

    def __init__(self) -> None:
        self._objects: dict[type, ObjectType] = {}

    def walk(self, hint: Any) -> TypeNode:
        """The node of ``hint``; raises `SchemaError` for a hint JSON cannot carry."""
        if hint is Any or hint is inspect.Parameter.empty or hint is object:
            return ANY
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated:
            return AnnotatedType(self.walk(args[0]), tuple(args[1:]))
        if origin in _REQUIRED_MARKERS:
            return self.walk(args[0])
        if isinstance(hint, typing.NewType):
            return self.walk(hint.__supertype__)
        if type(hint).__name__ == "TypeAliasType":
            return self.walk(hint.__value__)
        if isinstance(hint, (str, typing.ForwardRef)):
            raise SchemaError(f"the forward reference {hint!r} could not be resolved; define the type at module level")
        if origin is None:
            try:
                scalar = _SCALARS.get(hint)
            except TypeError:  # unhashable
                scalar = None
            if scalar is not None:
                return scalar
        if origin is Union or origin is types.UnionType:
            return UnionType(tuple(self.walk(a) for a in args))
        if origin is Literal:
            values = list(args)
            _check_enum_values(values)
            return LiteralType(values)
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            node = EnumType(hint)
            _check_enum_values(node.values)
            return node
        shape = origin if origin is not None else hint
        try:
            hash(shape)
        except TypeError:
            raise SchemaError(f"cannot express the type hint {hint!r} as JSON Schema") from None
        if shape in SEQUENCE_ORIGINS:
            item = self.walk(args[0]) if args else ANY
            collection = frozenset if shape in _FROZENSETS else set if shape in _SETS else list
            return ArrayType(item, collection)
        if shape is tuple or shape is typing.Tuple:
            if not args:
                return ArrayType(ANY, tuple)
            if args == ((),):
                return TupleType(())
            if len(args) == 2 and args[1] is Ellipsis:
                return ArrayType(self.walk(args[0]), tuple)
            return TupleType(tuple(self.walk(a) for a in args))
        if shape in _MAPPINGS:
            if args:
                key = unwrap(args[0])
                if key is not str and key is not Any:
                    raise SchemaError(f"JSON object keys are strings; cannot use {args[0]!r} as the key type of {hint!r}")
            return MappingType(self.walk(args[1]) if len(args) == 2 else ANY)
        if is_typeddict(hint):
            return self._object(hint, "typeddict")
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._object(hint, "dataclass")
        if is_model(hint):
            return ModelType(hint)
        raise SchemaError(f"cannot express the type hint {hint!r} as JSON Schema")

    def _object(self, cls: type, kind: Literal["typeddict", "dataclass"]) -> ObjectType:
        node = self._objects.get(cls)
        if node is not None:
            return node  # done, or being walked: a recursive type
        node = self._objects[cls] = ObjectType(cls, kind)
        try:
            node.fields = self._typeddict_fields(cls) if kind == "typeddict" else self._dataclass_fields(cls)
        except BaseException:
            del self._objects[cls]
            raise
        return node

    def _typeddict_fields(self, cls: type) -> list[ObjectField]:
        hints = type_hints(cls)
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
        fields = []
        for key, hint in hints.items():
            try:
                node = self.walk(hint)
            except SchemaError as exc:
                raise SchemaError(f"{cls.__qualname__}.{key}: {exc}") from None
            fields.append(ObjectField(key, node, required=_required_key(key, hint, required_keys)))
        return fields

    def _dataclass_fields(self, cls: type) -> list[ObjectField]:
        hints = type_hints(cls)
        fields = []
        for f in dataclasses.fields(cls):
            node: TypeNode | None = None
            error: str | None = None
            try:
                if isinstance(f.default, Field):
                    raise SchemaError("use Annotated[T, Field(...)] in a dataclass, not a Field default")
                node = self.walk(hints.get(f.name, Any))
            except SchemaError as exc:
                error = f"{cls.__qualname__}.{f.name}: {exc}"
                if f.init:
                    raise SchemaError(error) from None
            described = f.metadata.get("description") if f.metadata else None
            has_default = f.default is not dataclasses.MISSING
            has_factory = f.default_factory is not dataclasses.MISSING
            fields.append(
                ObjectField(
                    f.name,
                    node,
                    required=not has_default and not has_factory,
                    default=f.default if has_default else MISSING,
                    has_factory=has_factory,
                    init=f.init,
                    description=described if isinstance(described, str) else None,
                    error=error,
                )
            )
        return fields


def type_node(hint: Any) -> TypeNode:
    """The node of one type hint (a fresh `TypeWalker`)."""
    return TypeWalker().walk(hint)


def _required_key(key: str, hint: Any, required_keys: frozenset[str]) -> bool:
    # The markers decide when present: under PEP 563 (string annotations) Python
    # 3.11 cannot see them and lists every key in __required_keys__.
    origin = typing.get_origin(hint)
    while origin is typing.Annotated:
        hint = typing.get_args(hint)[0]
        origin = typing.get_origin(hint)
    if origin is typing.NotRequired:
        return False
    if origin is typing.Required:
        return True
    return key in required_keys


def _check_enum_values(values: list[Any]) -> None:
    for value in values:
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise SchemaError(f"cannot use {value!r} in an enum: enum values must be JSON scalars")


def _own_doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or not isinstance(doc, str):
        return None
    doc = inspect.cleandoc(doc)
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return None  # the signature dataclasses writes when there is no docstring
    return doc
