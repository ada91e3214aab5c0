"""JSON Schema (2020-12) from Python type hints, and a compiled validator for it.

Two halves, both used once, at registration:

* **Generation.** `schema_for(hint)` maps a type hint to a schema;
  `signature_schema(fn)` builds a tool's ``inputSchema`` from a function's
  parameters; `output_schema_for(hint)` builds an ``outputSchema`` from a
  return annotation.
* **Validation.** `compile(schema)` turns a schema into a plain function
  ``check(value) -> str | None`` (the first problem, as a sentence, or
  ``None``), so a value is checked with a few type tests and no schema
  interpretation per call. User-supplied schemas go through the same compiler.

Rules the generator keeps (basic/index.mdx, "JSON Schema Usage"):

* No ``$schema`` is written: 2020-12 is the default dialect.
* Named types (TypedDict, dataclass, pydantic model) are **inlined**, so hosts
  that cannot follow ``$ref`` still work. Only a genuinely recursive type goes
  to ``$defs`` at the schema root and is referred to with a local
  ``#/$defs/Name``; nothing else is ever referenced.
* A parameter without a default is required; a default that is JSON is
  published as ``default``. Object types are closed
  (``additionalProperties: false``) on input: a key the function cannot
  receive is refused, not dropped. Output schemas of TypedDicts stay open.

Supported hints: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
``bytes`` (base64 text), ``list[X]``, ``Sequence[X]``, ``set[X]`` and
``frozenset[X]`` (``uniqueItems``), ``tuple[X, ...]``, ``tuple[X, Y]``,
``dict[str, X]``, ``Optional``/``Union``/``X | Y``, ``Literal``, ``Enum``
subclasses, ``TypedDict`` (``Required``/``NotRequired``, ``total=False``),
dataclasses, pydantic v2 models (only when pydantic is already imported: it is
never imported here), ``datetime``/``date``/``time``/``UUID`` (strings with a
``format``), ``NewType`` and ``Annotated``. ``Annotated`` metadata:

* a ``str``: the description;
* a ``dict``: merged into the schema (``{"minimum": 0}``);
* a `Field`: description, title, examples, bounds, lengths, pattern, header;
* a `Header`: the ``x-mcp-header`` annotation (streamable-http.mdx, "Custom
  Headers from Tool Parameters");
* ``annotated_types`` constraints (``Ge``, ``Lt``, ``MinLen``, ...) and a
  pydantic ``FieldInfo`` (``pydantic.Field(...)``), read by duck typing.

A parameter's description also comes from a Google-style ``Args:`` section
of the function's docstring; an explicit description wins.

The validator knows: ``type``, ``enum``, ``const``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``, ``minLength``,
``maxLength``, ``pattern``, ``items``, ``prefixItems``, ``additionalItems``
(tuple form of ``items``, draft-07), ``minItems``, ``maxItems``,
``uniqueItems``, ``contains``/``minContains``/``maxContains``, ``properties``,
``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``minProperties``, ``maxProperties``,
``dependentRequired``, ``dependentSchemas``, ``dependencies`` (draft-07),
``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else`` and local
``$ref`` (``#``, JSON pointers such as ``#/$defs/x`` or
``#/definitions/x``, and ``$anchor`` names). A ``$ref`` to another document
is refused at compile time: it is never fetched (basic/index.mdx, "$ref
Resolution"). ``format``, ``unevaluatedProperties``, ``unevaluatedItems``,
``$dynamicRef`` and annotation keywords are accepted and not enforced.
Dialects: 2020-12 (the default), 2019-09 and draft-07; another ``$schema``
is a `SchemaError`. Limits against hostile schemas: `MAX_SCHEMA_DEPTH`,
`MAX_SUBSCHEMAS`.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import enum
import inspect
import math
import re
import sys
import types
import typing
import uuid
from typing import Any, Callable, Literal, Union

import orjson

from ..protocol.headers import MAX_SAFE_INTEGER, InvalidHeaderAnnotation, header_annotations

__all__ = [
    "Field",
    "Header",
    "MISSING",
    "schema_for",
    "signature_schema",
    "signature_info",
    "output_schema_for",
    "is_structured",
    "compile",
    "check_headers",
    "parse_docstring",
    "json_default",
    "Check",
    "SchemaError",
    "Param",
    "SignatureInfo",
    "MAX_SCHEMA_DEPTH",
    "MAX_SUBSCHEMAS",
]

Check = Callable[[Any], "str | None"]

#: Deepest nesting of subschemas `compile` accepts; generated schemas stay far
#: below it, and a deeper one is more likely an attack than a data model
#: (basic/index.mdx, "Composition-Keyword Resource Use").
MAX_SCHEMA_DEPTH = 64
#: Most subschemas one `compile` call turns into checks, for the same reason.
MAX_SUBSCHEMAS = 10_000


class SchemaError(TypeError, ValueError):
    """A type hint that cannot be expressed as JSON Schema, or a schema we cannot compile."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: "No default": the parameter or field is required.
MISSING: Any = _Missing()


# -- markers -----------------------------------------------------------------


class Header:
    """Mirror a parameter into the ``Mcp-Param-{name}`` HTTP header: ``Annotated[str, Header("Region")]``.

    Writes ``"x-mcp-header": name`` into the parameter's schema (server/tools.mdx,
    "x-mcp-header"); the name and the parameter's type are checked when the tool
    is registered.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Header({self.name!r})"


class Field:
    """Describe and constrain a parameter or a field.

    Use it in ``Annotated`` (``Annotated[int, Field(ge=0, description="...")]``)
    or, for a function parameter, as its default (``limit: int = Field(10, ge=1)``;
    the first argument is the default, leave it out for a required parameter).

    ``ge``/``gt``/``le``/``lt`` become ``minimum``/``exclusiveMinimum``/
    ``maximum``/``exclusiveMaximum``; ``min_length``/``max_length`` become
    ``minItems``/``maxItems`` on an array and ``minLength``/``maxLength``
    otherwise; ``header`` is the ``x-mcp-header`` name; ``json_schema`` is a
    dict of further keywords, merged last.
    """

    __slots__ = (
        "default",
        "description",
        "title",
        "examples",
        "ge",
        "gt",
        "le",
        "lt",
        "multiple_of",
        "min_length",
        "max_length",
        "pattern",
        "header",
        "json_schema",
    )

    def __init__(
        self,
        default: Any = MISSING,
        *,
        description: str | None = None,
        title: str | None = None,
        examples: list[Any] | None = None,
        ge: float | None = None,
        gt: float | None = None,
        le: float | None = None,
        lt: float | None = None,
        multiple_of: float | None = None,
        min_length: int | None = None,
        max_length: int | None = None,
        pattern: str | None = None,
        header: str | None = None,
        json_schema: dict[str, Any] | None = None,
    ) -> None:
        for key, value in (("ge", ge), ("gt", gt), ("le", le), ("lt", lt), ("multiple_of", multiple_of)):
            if value is not None and (type(value) not in (int, float) or not math.isfinite(value)):
                raise TypeError(f"Field({key}=...) must be a finite number, not {value!r}")
        if multiple_of is not None and multiple_of <= 0:
            raise ValueError("Field(multiple_of=...) must be greater than 0")
        for key, value in (("min_length", min_length), ("max_length", max_length)):
            if value is not None and (type(value) is not int or value < 0):
                raise TypeError(f"Field({key}=...) must be a non-negative integer, not {value!r}")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"Field(pattern={pattern!r}) is not a valid regular expression: {exc}") from None
        for key, value in (("description", description), ("title", title), ("header", header)):
            if value is not None and type(value) is not str:
                raise TypeError(f"Field({key}=...) must be a string, not {value!r}")
        if json_schema is not None and type(json_schema) is not dict:
            raise TypeError("Field(json_schema=...) must be a dict of JSON Schema keywords")
        self.default = default
        self.description = description
        self.title = title
        self.examples = examples
        self.ge = ge
        self.gt = gt
        self.le = le
        self.lt = lt
        self.multiple_of = multiple_of
        self.min_length = min_length
        self.max_length = max_length
        self.pattern = pattern
        self.header = header
        self.json_schema = json_schema

    def __repr__(self) -> str:
        shown = [f"{k}={getattr(self, k)!r}" for k in self.__slots__ if getattr(self, k) not in (None, MISSING)]
        return f"Field({', '.join(shown)})"

    def apply(self, schema: dict[str, Any]) -> None:
        """Write this field's keywords into ``schema``."""
        if self.title is not None:
            schema["title"] = self.title
        if self.description is not None:
            schema["description"] = self.description
        if self.examples is not None:
            schema["examples"] = list(self.examples)
        for key, word in (
            ("ge", "minimum"),
            ("gt", "exclusiveMinimum"),
            ("le", "maximum"),
            ("lt", "exclusiveMaximum"),
            ("multiple_of", "multipleOf"),
        ):
            value = getattr(self, key)
            if value is not None:
                schema[word] = value
        array = _has_type(schema, "array")
        if self.min_length is not None:
            schema["minItems" if array else "minLength"] = self.min_length
        if self.max_length is not None:
            schema["maxItems" if array else "maxLength"] = self.max_length
        if self.pattern is not None:
            schema["pattern"] = self.pattern
        if self.header is not None:
            schema["x-mcp-header"] = self.header
        if self.json_schema:
            schema.update(self.json_schema)


def _has_type(schema: dict[str, Any], name: str) -> bool:
    kind = schema.get("type")
    return kind == name or (type(kind) is list and name in kind)


# -- generation ---------------------------------------------------------------

_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
}

_ARRAYS = {list, set, frozenset, typing.List, typing.Set, typing.FrozenSet}
# typing aliases and their collections.abc origins (get_origin(Sequence[int]) is abc.Sequence)
_ABSTRACT_ARRAYS = {
    typing.Sequence,
    typing.Iterable,
    typing.Collection,
    typing.MutableSequence,
    typing.AbstractSet,
    typing.MutableSet,
    collections.abc.Sequence,
    collections.abc.Iterable,
    collections.abc.Collection,
    collections.abc.MutableSequence,
    collections.abc.Set,
    collections.abc.MutableSet,
}
_MAPPINGS = {
    dict,
    typing.Dict,
    typing.Mapping,
    typing.MutableMapping,
    collections.abc.Mapping,
    collections.abc.MutableMapping,
}
_SETS = {
    set,
    frozenset,
    typing.Set,
    typing.FrozenSet,
    typing.AbstractSet,
    typing.MutableSet,
    collections.abc.Set,
    collections.abc.MutableSet,
}
_REQUIRED_MARKERS = {typing.Required, typing.NotRequired}


def pydantic_model(hint: Any) -> bool:
    """Whether ``hint`` is a pydantic v2 model class (never imports pydantic)."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(hint, type):
        return False
    base = getattr(pydantic, "BaseModel", None)
    return base is not None and issubclass(hint, base) and hasattr(hint, "model_json_schema")


def is_typeddict(hint: Any) -> bool:
    if typing.is_typeddict(hint):
        return True
    te = sys.modules.get("typing_extensions")
    return te is not None and te.is_typeddict(hint)


def unwrap(hint: Any) -> Any:
    """``hint`` without ``Annotated``, ``Required``/``NotRequired`` and ``NewType`` wrappers."""
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


class _Builder:
    """Builds schemas for one root; collects the ``$defs`` of recursive types."""

    __slots__ = ("output", "defs", "_names", "_stack", "_recursive", "_adopted")

    def __init__(self, output: bool = False) -> None:
        self.output = output
        self.defs: dict[str, Any] = {}
        self._names: dict[Any, str] = {}
        self._stack: list[Any] = []
        self._recursive: set[Any] = set()
        self._adopted: dict[bytes, str] = {}

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        if self.defs:
            schema = {**schema, "$defs": {**schema.get("$defs", {}), **self.defs}}
        return schema

    # -- one hint

    def hint(self, hint: Any) -> dict[str, Any]:
        if hint is Any or hint is inspect.Parameter.empty or hint is object:
            return {}
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated:
            return self._annotated(args[0], args[1:])
        if origin in _REQUIRED_MARKERS:
            return self.hint(args[0])
        if isinstance(hint, typing.NewType):
            return self.hint(hint.__supertype__)
        if type(hint).__name__ == "TypeAliasType":
            return self.hint(hint.__value__)
        if isinstance(hint, (str, typing.ForwardRef)):
            raise SchemaError(f"the forward reference {hint!r} could not be resolved; define the type at module level")
        if origin is None:
            try:
                primitive = _PRIMITIVES.get(hint)
            except TypeError:  # unhashable
                primitive = None
            if primitive is not None:
                return dict(primitive)
        if origin is Union or origin is types.UnionType:
            return self._union(args)
        if origin is Literal:
            return _enum_schema(list(args))
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return _enum_schema([m.value for m in hint])
        if origin in _ARRAYS or origin in _ABSTRACT_ARRAYS or hint in _ARRAYS or hint in _ABSTRACT_ARRAYS:
            out: dict[str, Any] = {"type": "array"}
            if args:
                items = self.hint(args[0])
                if items:
                    out["items"] = items
            if origin in _SETS or hint in _SETS:
                out["uniqueItems"] = True
            return out
        if origin is tuple or hint is tuple or hint is typing.Tuple:
            if not args or args == ((),):
                return {"type": "array"} if not args else {"type": "array", "maxItems": 0}
            if len(args) == 2 and args[1] is Ellipsis:
                out = {"type": "array"}
                items = self.hint(args[0])
                if items:
                    out["items"] = items
                return out
            return {
                "type": "array",
                "prefixItems": [self.hint(a) for a in args],
                "items": False,
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin in _MAPPINGS or hint in _MAPPINGS:
            out = {"type": "object"}
            if args:
                key = unwrap(args[0])
                if key is not str and key is not Any:
                    raise SchemaError(f"JSON object keys are strings; cannot use {args[0]!r} as the key type of {hint!r}")
                if len(args) == 2:
                    values = self.hint(args[1])
                    if values:
                        out["additionalProperties"] = values
            return out
        if is_typeddict(hint):
            return self._named(hint, self._typeddict)
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            return self._named(hint, self._dataclass)
        if pydantic_model(hint):
            return self._pydantic(hint)
        raise SchemaError(f"cannot express the type hint {hint!r} as JSON Schema")

    def _annotated(self, base: Any, extras: tuple[Any, ...]) -> dict[str, Any]:
        pydantic_info = None
        for extra in extras:
            if _is_field_info(extra):
                pydantic_info = extra
        schema = self.hint(base)
        for extra in extras:
            _apply_extra(schema, extra)
        if pydantic_info is not None:
            default = _field_info_default(pydantic_info)
            if default is not MISSING and _is_json(default):
                schema.setdefault("default", _json_value(default))
        return schema

    def _union(self, args: tuple[Any, ...]) -> dict[str, Any]:
        members = [self.hint(a) for a in args]
        if any(m == {} for m in members):
            return {}
        kinds: list[str] = []
        simple = True
        for m in members:
            kind = m.get("type")
            if len(m) == 1 and isinstance(kind, str):
                if kind not in kinds:
                    kinds.append(kind)
            else:
                simple = False
                break
        if simple:
            return {"type": kinds[0] if len(kinds) == 1 else kinds}
        out: list[dict[str, Any]] = []
        for m in members:
            if m not in out:
                out.append(m)
        return {"anyOf": out}

    def _named(self, cls: type, build: Callable[[type], dict[str, Any]]) -> dict[str, Any]:
        """Inline ``cls``; if it turns out to refer to itself, move it to ``$defs``."""
        name = self._names.get(cls)
        if cls in self._stack or (name is not None and name in self.defs):
            self._recursive.add(cls)
            return {"$ref": f"#/$defs/{self._name(cls)}"}
        self._stack.append(cls)
        try:
            schema = build(cls)
        finally:
            self._stack.pop()
        if cls in self._recursive:
            self.defs[self._name(cls)] = schema
            return {"$ref": f"#/$defs/{self._name(cls)}"}
        return schema

    def _name(self, cls: Any) -> str:
        name = self._names.get(cls)
        if name is None:
            base = re.sub(r"[^A-Za-z0-9_.-]", "_", getattr(cls, "__name__", "T"))
            name, n = base, 1
            taken = set(self._names.values()) | set(self.defs)
            while name in taken:
                n += 1
                name = f"{base}{n}"
            self._names[cls] = name
        return name

    def _typeddict(self, cls: type) -> dict[str, Any]:
        hints = _type_hints(cls)
        required_keys = getattr(cls, "__required_keys__", frozenset(hints))
        properties = {}
        for key, hint in hints.items():
            try:
                properties[key] = self.hint(hint)
            except SchemaError as exc:
                raise SchemaError(f"{cls.__qualname__}.{key}: {exc}") from None
        schema: dict[str, Any] = {"type": "object"}
        doc = _own_doc(cls)
        if doc:
            schema["description"] = doc
        schema["properties"] = properties
        required = [k for k, h in hints.items() if _required_key(k, h, required_keys)]
        if required:
            schema["required"] = required
        if not self.output:
            schema["additionalProperties"] = False
        return schema

    def _dataclass(self, cls: type) -> dict[str, Any]:
        hints = _type_hints(cls)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for f in dataclasses.fields(cls):
            if not f.init and not self.output:
                continue
            if isinstance(f.default, Field):
                raise SchemaError(
                    f"{cls.__qualname__}.{f.name}: use Annotated[T, Field(...)] in a dataclass, not a Field default"
                )
            try:
                prop = self.hint(hints.get(f.name, Any))
            except SchemaError as exc:
                raise SchemaError(f"{cls.__qualname__}.{f.name}: {exc}") from None
            described = f.metadata.get("description") if f.metadata else None
            if isinstance(described, str):
                prop["description"] = described
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                required.append(f.name)
            elif self.output:
                required.append(f.name)  # always present once serialized
            elif f.default is not dataclasses.MISSING and _is_json(f.default):
                prop.setdefault("default", _json_value(f.default))
            properties[f.name] = prop
        schema: dict[str, Any] = {"type": "object"}
        doc = _own_doc(cls)
        if doc:
            schema["description"] = doc
        schema["properties"] = properties
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema

    def _pydantic(self, model: type) -> dict[str, Any]:
        raw = model.model_json_schema(mode="serialization" if self.output else "validation")  # type: ignore[attr-defined]
        return self.adopt(raw)

    def adopt(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Take a schema with its own ``$defs`` in: inline what is not recursive."""
        raw = dict(raw)
        defs: dict[str, Any] = raw.pop("$defs", None) or {}
        if not defs:
            return raw
        graph = {name: _local_refs(body) for name, body in defs.items()}
        recursive = {name for name in defs if _reaches(graph, name, name)}
        renamed: dict[str, str] = {}
        for name in sorted(recursive):
            key = orjson.dumps(defs[name], option=orjson.OPT_SORT_KEYS) + name.encode()
            new = self._adopted.get(key)
            if new is None:
                new, n = name, 1
                while new in self.defs or new in self._names.values():
                    n += 1
                    new = f"{name}{n}"
                self._adopted[key] = new
                self.defs[new] = None  # reserve the name
            renamed[name] = new

        def subst(node: Any) -> Any:
            if isinstance(node, list):
                return [subst(x) for x in node]
            if not isinstance(node, dict):
                return node
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                target = _unescape(ref[len("#/$defs/") :])
                rest = {k: subst(v) for k, v in node.items() if k != "$ref"}
                if target in renamed:
                    return {"$ref": f"#/$defs/{renamed[target]}", **rest}
                if target in defs:
                    return {**subst(defs[target]), **rest}
            return {k: subst(v) for k, v in node.items()}

        for name in recursive:
            if self.defs.get(renamed[name]) is None:
                self.defs[renamed[name]] = subst(defs[name])
        out = subst(raw)
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):  # a recursive root: show its body
            body = self.defs.get(_unescape(ref[len("#/$defs/") :]))
            if isinstance(body, dict):
                out = {**body, **{k: v for k, v in out.items() if k != "$ref"}}
        return out


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


def _apply_extra(schema: dict[str, Any], extra: Any) -> None:
    if isinstance(extra, str):
        schema["description"] = extra
    elif isinstance(extra, dict):
        schema.update(extra)
    elif isinstance(extra, Field):
        extra.apply(schema)
    elif isinstance(extra, Header):
        schema["x-mcp-header"] = extra.name
    elif _is_field_info(extra):
        for key in ("title", "description", "examples"):
            value = getattr(extra, key, None)
            if value is not None:
                schema[key] = value
        for item in getattr(extra, "metadata", ()) or ():
            _apply_extra(schema, item)
        more = getattr(extra, "json_schema_extra", None)
        if isinstance(more, dict):
            schema.update(more)
    elif type(extra).__module__ == "annotated_types" or type(extra).__name__ == "_PydanticGeneralMetadata":
        _apply_constraint(schema, extra)  # Ge, Lt, MinLen, Len, MultipleOf...; pydantic's pattern holder
    # anything else is metadata for someone else: ignored


def _apply_constraint(schema: dict[str, Any], c: Any) -> None:
    array = _has_type(schema, "array")
    for attr, word in (
        ("gt", "exclusiveMinimum"),
        ("ge", "minimum"),
        ("lt", "exclusiveMaximum"),
        ("le", "maximum"),
        ("multiple_of", "multipleOf"),
        ("pattern", "pattern"),
    ):
        value = getattr(c, attr, None)
        if value is not None:
            schema[word] = value
    lo = getattr(c, "min_length", None)
    hi = getattr(c, "max_length", None)
    if lo is not None:
        schema["minItems" if array else "minLength"] = lo
    if hi is not None:
        schema["maxItems" if array else "maxLength"] = hi


def _is_field_info(obj: Any) -> bool:
    fields = sys.modules.get("pydantic.fields")
    info = getattr(fields, "FieldInfo", None) if fields is not None else None
    return info is not None and isinstance(obj, info)


def _field_info_default(info: Any) -> Any:
    default = getattr(info, "default", MISSING)
    if type(default).__name__ == "PydanticUndefinedType" or default is Ellipsis:
        return MISSING
    return default


def _type_hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:
        raise SchemaError(f"cannot resolve the type hints of {cls!r}: {exc}") from None


def _own_doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or not isinstance(doc, str):
        return None
    doc = inspect.cleandoc(doc)
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return None  # the signature dataclasses writes when there is no docstring
    return doc


def _local_refs(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            ref = n.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                found.add(_unescape(ref[len("#/$defs/") :]))
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return found


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        n = todo.pop()
        if n == goal:
            return True
        if n not in seen:
            seen.add(n)
            todo.extend(graph.get(n, ()))
    return False


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    kinds = sorted({_json_type(v) for v in values})
    out: dict[str, Any] = {"enum": values}
    if len(kinds) == 1:
        out["type"] = kinds[0]
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise SchemaError(f"cannot use {value!r} in an enum: enum values must be JSON scalars")


def schema_for(hint: Any, *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema of a type hint (recursive types get a root ``$defs``)."""
    builder = _Builder(output)
    return builder.finish(builder.hint(hint))


# -- signatures and docstrings -------------------------------------------------

_ARGS_HEADER = re.compile(r"^(\s*)(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
_ARG_LINE = re.compile(r"^\*{0,2}(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """``(description without the Args section, {parameter: description})`` from a Google-style docstring."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    kept: list[str] = []
    i = 0
    while i < len(lines):
        m = _ARGS_HEADER.match(lines[i])
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
            arg = _ARG_LINE.match(stripped) if depth <= item_indent else None
            if arg is not None:
                current = arg.group(1)
                params[current] = arg.group(3).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
    text = "\n".join(kept).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    return (text or None), params


class Param:
    """A tool parameter: name, type hint, default (`MISSING` if required) and ``fill``.

    ``fill`` makes the value to pass when the argument is absent, for defaults
    Python cannot apply itself (a `Field` or ``pydantic.Field`` used as the
    default); ``None`` otherwise.
    """

    __slots__ = ("name", "hint", "default", "fill")

    def __init__(self, name: str, hint: Any, default: Any, fill: Callable[[], Any] | None = None) -> None:
        self.name = name
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


def signature_info(fn: Callable[..., Any], *, skip: frozenset[str] = frozenset()) -> SignatureInfo:
    """Everything a tool needs from ``fn``'s signature; ``skip`` names injected parameters."""
    sig = inspect.signature(fn)
    hints = _resolved_hints(fn)
    description, arg_docs = parse_docstring(inspect.getdoc(fn))
    builder = _Builder()
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
        elif _is_field_info(default):
            info = default
            hint = typing.Annotated[hint, info]
            default = _field_info_default(info)
            if default is not MISSING:
                fill = _constant(default)
            elif getattr(info, "default_factory", None) is not None:
                fill = info.default_factory
                default, factory = None, True  # not required; no published default
        elif default is param.empty:
            default = MISSING
        try:
            prop = builder.hint(hint)
        except SchemaError as exc:
            raise SchemaError(f"{fn.__qualname__}, parameter {param.name!r}: {exc}") from None
        if marker is not None:
            marker.apply(prop)
        if param.name in arg_docs and not _described(hint, marker):
            prop["description"] = arg_docs[param.name]  # over a type's own docstring
        if default is MISSING:
            required.append(param.name)
        elif not factory and _is_json(default):
            prop.setdefault("default", _json_value(default))
        if "x-mcp-header" in prop and prop.get("type") == "integer":
            # header values must survive IEEE 754 doubles (tools.mdx, x-mcp-header)
            if prop.get("minimum", -SAFE_INTEGER) < -SAFE_INTEGER or "minimum" not in prop:
                prop["minimum"] = max(prop.get("minimum", -SAFE_INTEGER), -SAFE_INTEGER)
            if prop.get("maximum", SAFE_INTEGER) > SAFE_INTEGER or "maximum" not in prop:
                prop["maximum"] = min(prop.get("maximum", SAFE_INTEGER), SAFE_INTEGER)
        properties[param.name] = prop
        params.append(Param(param.name, hint, default, fill))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not open_ended:
        schema["additionalProperties"] = False
    schema = builder.finish(schema)
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
            if (isinstance(extra, Field) or _is_field_info(extra)) and getattr(extra, "description", None):
                return True
        hint = args[0]
    return False


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def signature_schema(
    fn: Callable[..., Any], *, skip: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[str]]:
    """``(inputSchema, parameter names)`` for a function; ``skip`` names injected parameters."""
    info = signature_info(fn, skip=skip)
    return info.schema, [p.name for p in info.params]


def _is_json(value: Any) -> bool:
    if value is None or type(value) in (str, int, bool):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if isinstance(value, enum.Enum):
        return _is_json(value.value)
    if type(value) in (list, tuple):
        return all(_is_json(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _is_json(v) for k, v in value.items())
    return False


def _json_value(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return _json_value(value.value)
    if type(value) in (list, tuple):
        return [_json_value(v) for v in value]
    if type(value) is dict:
        return {k: _json_value(v) for k, v in value.items()}
    return value


# -- output schemas -------------------------------------------------------------

_UNSTRUCTURED = (str, type(None), None, Any, inspect.Parameter.empty, object, bytes)


def is_structured(hint: Any, content: frozenset[Any] = frozenset()) -> bool:
    """Whether a return annotation describes data (and so gets an ``outputSchema``).

    Not data: a missing annotation, ``Any``, ``str`` (prose for the model),
    ``None``, ``bytes`` (say what it is with a content helper), the types in
    ``content`` (content blocks, `ToolResult`), unions with any of those
    (``Optional[X]`` is data when X is) and arrays of content blocks.
    """
    hint = unwrap(hint)
    if any(hint is u for u in _UNSTRUCTURED) or _is_content(hint, content):
        return False
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return bool(members) and all(is_structured(a, content) for a in members)
    if origin in _ARRAYS or origin in _ABSTRACT_ARRAYS or origin is tuple:
        return not any(_is_content(unwrap(a), content) for a in typing.get_args(hint) if a is not Ellipsis)
    return True


def _is_content(hint: Any, content: frozenset[Any]) -> bool:
    try:
        if hint in content:
            return True
    except TypeError:
        return False
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return all(_is_content(unwrap(a), content) for a in typing.get_args(hint))
    return False


def output_schema_for(hint: Any) -> tuple[dict[str, Any], bool]:
    """``(outputSchema, wrapped)`` for a return annotation.

    An object type gives an object schema and the value is the structured
    content; anything else is wrapped as ``{"result": value}`` under
    ``{"type": "object", "properties": {"result": ...}, "required": ["result"]}``,
    as the official SDKs do, so the schema also suits revisions that require an
    object at the root (2025-11-25).
    """
    builder = _Builder(output=True)
    inner = builder.hint(hint)
    ref = inner.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(builder.defs.get(ref[8:]), dict):
        inner = {**builder.defs[ref[8:]], **{k: v for k, v in inner.items() if k != "$ref"}}  # show a recursive root
    if inner.get("type") == "object":
        return builder.finish(inner), False
    wrapper = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    return builder.finish(wrapper), True


def json_default(value: Any) -> Any:
    """orjson's ``default=`` for what it does not encode natively (pydantic, sets, bytes)."""
    dump = getattr(value, "model_dump", None)
    if dump is not None and pydantic_model(type(value)):
        return dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        import base64

        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


# -- x-mcp-header -----------------------------------------------------------------

#: Integers that survive a round trip through an IEEE 754 double (tools.mdx, x-mcp-header).
SAFE_INTEGER = MAX_SAFE_INTEGER


def check_headers(schema: dict[str, Any], where: str = "inputSchema") -> dict[str, tuple[str, ...]]:
    """Check every ``x-mcp-header`` in a tool's input schema; ``{header: property path}``.

    Raises `ValueError` naming the problem; the rules are in
    `wiremcp.protocol.headers` (shared with the HTTP transport and the client).
    """
    try:
        params = header_annotations(schema)
    except InvalidHeaderAnnotation as exc:
        raise ValueError(f"{where}: {exc}") from None
    return {p.name: p.path for p in params}


# -- the compiled validator --------------------------------------------------------

# A problem: (path from the checked value, sentence without the subject).
_Problem = tuple[tuple[Any, ...], str]
_Check = Callable[[Any], "_Problem | None"]

_DIALECTS = {
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
    "https://json-schema.org/draft/2019-09/schema": "2019-09",
    "http://json-schema.org/draft-07/schema": "draft-07",
    "https://json-schema.org/draft-07/schema": "draft-07",
}
SUPPORTED_DIALECTS = tuple(sorted(set(_DIALECTS.values())))


def _ok(v: Any) -> None:
    return None


def _type_test(kind: str) -> Callable[[Any], bool]:
    if kind == "string":
        return lambda v: type(v) is str
    if kind == "integer":
        return lambda v: type(v) is int or (type(v) is float and v.is_integer())
    if kind == "number":
        return lambda v: type(v) is int or type(v) is float
    if kind == "boolean":
        return lambda v: type(v) is bool
    if kind == "null":
        return lambda v: v is None
    if kind == "array":
        return lambda v: type(v) is list
    if kind == "object":
        return lambda v: type(v) is dict
    raise SchemaError(f"unknown JSON Schema type {kind!r}")


_EXACT = {"string": str, "boolean": bool, "array": list, "object": dict}


def render(problem: _Problem, prefix: str = "") -> str:
    """A problem as a sentence: ``'a.b[0]' must be ...``."""
    parts, message = problem
    text = prefix
    for p in parts:
        if type(p) is int:
            text += f"[{p}]"
        else:
            text = f"{text}.{p}" if text else str(p)
    where = f"'{text}'" if text else "the value"
    return f"{where} {message}"


def compile(schema: Any, path: str = "", *, noun: str = "property") -> Check:
    """A function that returns the first problem of a value against ``schema``, or None.

    ``path`` prefixes the names in the messages; ``noun`` names the keys of the
    root object in "is not an accepted ..." (tools say "argument"). Raises
    `SchemaError` for a schema it cannot compile (an unknown dialect, an
    external or dangling ``$ref``, a bad regular expression, limits exceeded).
    """
    inner = _Compiler(schema, noun).root()

    def check(value: Any) -> str | None:
        try:
            problem = inner(value)
        except RecursionError:
            return f"{render(((), ''), path).rstrip()} is nested too deeply to check"
        if problem is None:
            return None
        return render(problem, path)

    return check


class _Compiler:
    __slots__ = ("schema", "noun", "dialect", "count", "cells", "anchors", "base")

    def __init__(self, schema: Any, noun: str) -> None:
        if not isinstance(schema, (dict, bool)):
            raise SchemaError(f"not a JSON Schema: {schema!r}")
        self.schema = schema
        self.noun = noun
        self.dialect = "2020-12"
        self.base = ""
        if isinstance(schema, dict):
            declared = schema.get("$schema")
            if declared is not None:
                key = declared.rstrip("#") if isinstance(declared, str) else declared
                if key not in _DIALECTS:
                    raise SchemaError(
                        f"unsupported JSON Schema dialect {declared!r}; supported: "
                        + ", ".join(SUPPORTED_DIALECTS)
                        + " (basic/index.mdx, Schema Dialect)"
                    )
                self.dialect = _DIALECTS[key]
            if isinstance(schema.get("$id"), str):
                self.base = schema["$id"].split("#")[0]
        self.count = 0
        self.cells: dict[str, list[Any]] = {}
        self.anchors: dict[str, Any] = {}
        self._collect_anchors(schema, 0)

    def _collect_anchors(self, node: Any, depth: int) -> None:
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(node, dict):
            anchor = node.get("$anchor")
            if isinstance(anchor, str):
                self.anchors.setdefault(anchor, node)
            for key, value in node.items():
                if key in ("enum", "const", "default", "examples"):
                    continue
                self._collect_anchors(value, depth + 1)
        elif isinstance(node, list):
            for value in node:
                self._collect_anchors(value, depth + 1)

    def root(self) -> _Check:
        return self.node(self.schema, 0, top=True)

    # -- references

    def resolve(self, ref: str) -> Any:
        target = ref
        if self.base and target.startswith(self.base):
            target = target[len(self.base) :]
        if not target.startswith("#"):
            raise SchemaError(
                f"$ref {ref!r} points outside this schema; external references are never fetched "
                "(basic/index.mdx, $ref Resolution)"
            )
        fragment = target[1:]
        if fragment == "":
            return self.schema
        if not fragment.startswith("/"):
            if fragment in self.anchors:
                return self.anchors[fragment]
            raise SchemaError(f"$ref {ref!r}: no $anchor named {fragment!r} in this schema")
        node: Any = self.schema
        for raw in fragment[1:].split("/"):
            part = _unescape(raw)
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(f"$ref {ref!r} does not resolve inside this schema")
        return node

    def ref(self, ref: str, depth: int) -> _Check:
        cell = self.cells.get(ref)
        if cell is not None:
            if cell[0] is None:  # still being compiled: a recursive reference
                return lambda v: cell[0](v)
            return cell[0]  # type: ignore[no-any-return]
        cell = self.cells[ref] = [None]
        cell[0] = self.node(self.resolve(ref), depth + 1)
        return cell[0]  # type: ignore[no-any-return]

    # -- one schema

    def node(self, schema: Any, depth: int, top: bool = False) -> _Check:
        self.count += 1
        if self.count > MAX_SUBSCHEMAS:
            raise SchemaError(f"the schema has more than {MAX_SUBSCHEMAS} subschemas")
        if depth > MAX_SCHEMA_DEPTH:
            raise SchemaError(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        if schema is True or schema == {}:
            return _ok
        if schema is False:
            return lambda v: ((), "is not allowed")
        if not isinstance(schema, dict):
            raise SchemaError(f"not a JSON Schema: {schema!r}")
        d = depth + 1
        checks: list[_Check] = []
        kind = schema.get("type")
        objectish = any(
            k in schema
            for k in ("properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                      "minProperties", "maxProperties", "dependentRequired", "dependentSchemas", "dependencies")
        )
        if kind is not None and not (kind == "object" and objectish):
            checks.append(_compile_type(kind))
        if "enum" in schema:
            allowed = schema["enum"]
            if not isinstance(allowed, list):
                raise SchemaError(f"enum must be an array, not {allowed!r}")
            message = f"must be one of {', '.join(map(_show, allowed))}"
            checks.append(lambda v: None if any(_json_equal(v, a) for a in allowed) else ((), message))
        if "const" in schema:
            const = schema["const"]
            message = f"must be {_show(const)}"
            checks.append(lambda v: None if _json_equal(v, const) else ((), message))
        numeric = _compile_numeric(schema)
        if numeric is not None:
            checks.append(numeric)
        string = _compile_string(schema)
        if string is not None:
            checks.append(string)
        if any(k in schema for k in ("items", "prefixItems", "additionalItems", "minItems", "maxItems",
                                      "uniqueItems", "contains")):
            checks.append(self._array(schema, d))
        if objectish:
            checks.append(self._object(schema, d, top, typed=kind == "object"))
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise SchemaError(f"$ref must be a string, not {ref!r}")
            checks.append(self.ref(ref, d))
        if "allOf" in schema:
            checks.extend(self.node(s, d) for s in _schema_list(schema, "allOf"))
        if "anyOf" in schema:
            checks.append(_any_of([self.node(s, d) for s in _schema_list(schema, "anyOf")]))
        if "oneOf" in schema:
            checks.append(_one_of([self.node(s, d) for s in _schema_list(schema, "oneOf")]))
        if "not" in schema:
            negated = self.node(schema["not"], d)
            checks.append(lambda v: ((), "must not match the excluded schema") if negated(v) is None else None)
        if "if" in schema and ("then" in schema or "else" in schema):
            condition = self.node(schema["if"], d)
            then = self.node(schema.get("then", True), d)
            otherwise = self.node(schema.get("else", True), d)
            checks.append(lambda v: then(v) if condition(v) is None else otherwise(v))
        if not checks:
            return _ok
        if len(checks) == 1:
            return checks[0]
        if len(checks) == 2:
            first, second = checks

            def check_two(v: Any) -> _Problem | None:
                problem = first(v)
                return problem if problem is not None else second(v)

            return check_two

        def check_all(v: Any) -> _Problem | None:
            for c in checks:
                problem = c(v)
                if problem is not None:
                    return problem
            return None

        return check_all

    def _array(self, schema: dict[str, Any], d: int) -> _Check:
        items = schema.get("items", True)
        prefix_schemas = schema.get("prefixItems")
        rest_schema: Any = items
        if isinstance(items, list):  # draft-07 / 2019-09 tuple form
            prefix_schemas = items
            rest_schema = schema.get("additionalItems", True)
        prefix = [self.node(s, d) for s in (prefix_schemas or [])]
        rest = self.node(rest_schema, d) if rest_schema is not False else None
        if rest is _ok:
            rest = None
            open_rest = True
        else:
            open_rest = rest_schema is not False
        lo = _count(schema, "minItems", 0)
        hi = _count(schema, "maxItems", None)
        unique = schema.get("uniqueItems") is True
        contains = self.node(schema["contains"], d) if "contains" in schema else None
        min_contains = _count(schema, "minContains", 1)
        max_contains = _count(schema, "maxContains", None)
        n_prefix = len(prefix)

        def check_array(v: Any) -> _Problem | None:
            if type(v) is not list:
                return None
            n = len(v)
            if n < lo:
                return ((), f"must have at least {lo} item{'s' if lo != 1 else ''}")
            if hi is not None and n > hi:
                return ((), f"must have at most {hi} item{'s' if hi != 1 else ''}")
            for i in range(min(n, n_prefix)):
                problem = prefix[i](v[i])
                if problem is not None:
                    return ((i,) + problem[0], problem[1])
            if n > n_prefix:
                if not open_rest:
                    return ((), f"must have at most {n_prefix} item{'s' if n_prefix != 1 else ''}")
                if rest is not None:
                    for i in range(n_prefix, n):
                        problem = rest(v[i])
                        if problem is not None:
                            return ((i,) + problem[0], problem[1])
            if unique and n > 1:
                seen: set[Any] = set()
                for i, item in enumerate(v):
                    key = _freeze(item)
                    if key in seen:
                        return ((), f"must not repeat items (item {i} is a duplicate)")
                    seen.add(key)
            if contains is not None:
                matches = sum(1 for item in v if contains(item) is None)
                if matches < min_contains:
                    return ((), f"must contain at least {min_contains} matching item{'s' if min_contains != 1 else ''}")
                if max_contains is not None and matches > max_contains:
                    return ((), f"must contain at most {max_contains} matching items")
            return None

        return check_array

    def _object(self, schema: dict[str, Any], d: int, top: bool, typed: bool) -> _Check:
        props = {name: self.node(sub, d) for name, sub in _schema_map(schema, "properties").items()}
        required = schema.get("required") or []
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise SchemaError(f"required must be an array of strings, not {required!r}")
        patterns = [(_regex(p), self.node(sub, d)) for p, sub in _schema_map(schema, "patternProperties").items()]
        extra = schema.get("additionalProperties", True)
        closed = extra is False
        extra_check = None if extra is True or extra is False else self.node(extra, d)
        if extra_check is _ok:
            extra_check = None
        names = self.node(schema["propertyNames"], d) if "propertyNames" in schema else None
        lo = _count(schema, "minProperties", 0)
        hi = _count(schema, "maxProperties", None)
        dep_required: dict[str, list[str]] = dict(schema.get("dependentRequired") or {})
        dep_schemas = {k: self.node(s, d) for k, s in _schema_map(schema, "dependentSchemas").items()}
        for key, value in (schema.get("dependencies") or {}).items():  # draft-07
            if isinstance(value, list):
                dep_required[key] = value
            else:
                dep_schemas[key] = self.node(value, d)
        refused = f"is not an accepted {self.noun if top else 'property'}"
        has_extras = bool(patterns or names or lo or hi is not None or dep_required or dep_schemas)
        props_get = props.get

        if not has_extras and extra_check is None:
            # the common shape (every generated schema): keep it tight
            def check_object(v: Any) -> _Problem | None:
                if type(v) is not dict:
                    return ((), f"must be object, not {_describe(v)}") if typed else None
                for name in required:
                    if name not in v:
                        return ((name,), "is required")
                for name, value in v.items():
                    c = props_get(name)
                    if c is not None:
                        problem = c(value)
                        if problem is not None:
                            return ((name,) + problem[0], problem[1])
                    elif closed:
                        return ((name,), refused)
                return None

            return check_object

        def check_object_full(v: Any) -> _Problem | None:
            if type(v) is not dict:
                return ((), f"must be object, not {_describe(v)}") if typed else None
            n = len(v)
            if n < lo:
                return ((), f"must have at least {lo} propert{'ies' if lo != 1 else 'y'}")
            if hi is not None and n > hi:
                return ((), f"must have at most {hi} propert{'ies' if hi != 1 else 'y'}")
            for name in required:
                if name not in v:
                    return ((name,), "is required")
            for name, value in v.items():
                if names is not None:
                    problem = names(name)
                    if problem is not None:
                        return ((name,), f"is not an accepted name: {render(problem)}")
                matched = False
                c = props_get(name)
                if c is not None:
                    matched = True
                    problem = c(value)
                    if problem is not None:
                        return ((name,) + problem[0], problem[1])
                for rx, pc in patterns:
                    if rx.search(name):
                        matched = True
                        problem = pc(value)
                        if problem is not None:
                            return ((name,) + problem[0], problem[1])
                if not matched:
                    if closed:
                        return ((name,), refused)
                    if extra_check is not None:
                        problem = extra_check(value)
                        if problem is not None:
                            return ((name,) + problem[0], problem[1])
            for key, needs in dep_required.items():
                if key in v:
                    for other in needs:
                        if other not in v:
                            return ((other,), f"is required when '{key}' is present")
            for key, dep in dep_schemas.items():
                if key in v:
                    problem = dep(v)
                    if problem is not None:
                        return problem
            return None

        return check_object_full


def _compile_type(kind: Any) -> _Check:
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise SchemaError(f"type must be a type name or an array of them, not {kind!r}")
    expected = " or ".join(kinds)
    if len(kinds) == 1 and kinds[0] in _EXACT:
        exact = _EXACT[kinds[0]]
        return lambda v: None if type(v) is exact else ((), f"must be {expected}, not {_describe(v)}")
    tests = [_type_test(k) for k in kinds]
    if len(tests) == 1:
        test = tests[0]
        return lambda v: None if test(v) else ((), f"must be {expected}, not {_describe(v)}")

    def check_type(v: Any) -> _Problem | None:
        for t in tests:
            if t(v):
                return None
        return ((), f"must be {expected}, not {_describe(v)}")

    return check_type


def _compile_numeric(schema: dict[str, Any]) -> _Check | None:
    bounds: list[tuple[Callable[[Any, Any], bool], Any, str]] = []
    for key, test, phrase in (
        ("minimum", lambda v, b: v >= b, "at least"),
        ("maximum", lambda v, b: v <= b, "at most"),
        ("exclusiveMinimum", lambda v, b: v > b, "greater than"),
        ("exclusiveMaximum", lambda v, b: v < b, "less than"),
    ):
        if key in schema:
            bound = schema[key]
            if type(bound) is bool:  # draft-04 boolean form: not supported
                raise SchemaError(f"{key} must be a number (draft-04 boolean form is not supported)")
            if type(bound) not in (int, float):
                raise SchemaError(f"{key} must be a number, not {bound!r}")
            bounds.append((test, bound, f"must be {phrase} {_show(bound)}"))
    multiple = schema.get("multipleOf")
    if multiple is not None and (type(multiple) not in (int, float) or multiple <= 0):
        raise SchemaError(f"multipleOf must be a number greater than 0, not {multiple!r}")
    if not bounds and multiple is None:
        return None

    def check_number(v: Any) -> _Problem | None:
        if type(v) is not int and type(v) is not float:
            return None
        for test, bound, message in bounds:
            if not test(v, bound):
                return ((), message)
        if multiple is not None and not _is_multiple(v, multiple):
            return ((), f"must be a multiple of {_show(multiple)}")
        return None

    return check_number


def _is_multiple(v: float, m: float) -> bool:
    if type(v) is int and type(m) is int:
        return v % m == 0
    q = v / m
    if math.isinf(q):
        return False
    return abs(q - round(q)) < 1e-9


def _compile_string(schema: dict[str, Any]) -> _Check | None:
    if "minLength" not in schema and "maxLength" not in schema and "pattern" not in schema:
        return None
    lo = _count(schema, "minLength", 0)
    hi = _count(schema, "maxLength", None)
    rx = _regex(schema["pattern"]) if "pattern" in schema else None

    def check_string(v: Any) -> _Problem | None:
        if type(v) is not str:
            return None
        if len(v) < lo:
            return ((), f"must be at least {lo} character{'s' if lo != 1 else ''} long")
        if hi is not None and len(v) > hi:
            return ((), f"must be at most {hi} character{'s' if hi != 1 else ''} long")
        if rx is not None and not rx.search(v):
            return ((), f"must match the pattern {rx.pattern!r}")
        return None

    return check_string


def _any_of(options: list[_Check]) -> _Check:
    def check_any(v: Any) -> _Problem | None:
        best: _Problem | None = None
        for option in options:
            problem = option(v)
            if problem is None:
                return None
            if best is None or len(problem[0]) > len(best[0]):
                best = problem  # the branch that got furthest explains best
        return best

    return check_any


def _one_of(options: list[_Check]) -> _Check:
    def check_one(v: Any) -> _Problem | None:
        matched = 0
        best: _Problem | None = None
        for option in options:
            problem = option(v)
            if problem is None:
                matched += 1
            elif best is None or len(problem[0]) > len(best[0]):
                best = problem
        if matched == 1:
            return None
        if matched == 0:
            return best
        return ((), f"must match exactly one of the allowed schemas, but matches {matched}")

    return check_one


def _schema_list(schema: dict[str, Any], key: str) -> list[Any]:
    value = schema[key]
    if not isinstance(value, list) or not value:
        raise SchemaError(f"{key} must be a non-empty array of schemas")
    return value


def _schema_map(schema: dict[str, Any], key: str) -> dict[str, Any]:
    value = schema.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SchemaError(f"{key} must be an object of schemas, not {value!r}")
    return value


def _count(schema: dict[str, Any], key: str, default: Any) -> Any:
    value = schema.get(key, default)
    if value is default:
        return value
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int or value < 0:
        raise SchemaError(f"{key} must be a non-negative integer, not {value!r}")
    return value


def _regex(pattern: Any) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise SchemaError(f"pattern must be a string, not {pattern!r}")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise SchemaError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None


def _unescape(part: str) -> str:
    from urllib.parse import unquote

    return unquote(part).replace("~1", "/").replace("~0", "~")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1; arrays and objects compared deeply."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a == b  # type: ignore[no-any-return]
    if ta is not tb:
        return False
    if ta is list:
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return a == b  # type: ignore[no-any-return]


def _freeze(value: Any) -> Any:
    t = type(value)
    if t is bool:
        return ("b", value)
    if t is int or t is float:
        return ("n", value)
    if t is list:
        return ("l", tuple(_freeze(x) for x in value))
    if t is dict:
        return ("d", frozenset((k, _freeze(v)) for k, v in value.items()))
    return ("s", value)


def _show(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    name = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}
    return name.get(type(value), type(value).__name__)
