"""JSON Schema (2020-12) from the type model: input schemas and output schemas.

`SchemaWriter` turns `TypeNode` s into schemas; `schema_for(hint)` and
`output_schema_for(hint)` walk a hint and write it. Rules the writer keeps
(basic/index.mdx, "JSON Schema Usage"):

* No ``$schema`` is written: 2020-12 is the default dialect.
* Named types (TypedDict, dataclass, pydantic model) are **inlined**, so hosts
  that cannot follow ``$ref`` still work. Only a genuinely recursive type goes
  to ``$defs`` at the schema root and is referred to with a local
  ``#/$defs/Name``; nothing else is ever referenced.
* Object types are closed (``additionalProperties: false``) on input: a key
  the function cannot receive is refused, not dropped. Output schemas of
  TypedDicts stay open; once serialized a dataclass has every field, so all
  of them are required in an output schema.
* ``Annotated`` metadata, applied in order over the inner type's schema: a
  ``str`` is the description; a ``dict`` is merged; a `Field` writes its
  keywords; a `Header` the ``x-mcp-header`` annotation (streamable-http.mdx,
  "Custom Headers from Tool Parameters"); ``annotated_types`` constraints
  (``Ge``, ``Lt``, ``MinLen``, ...) and a pydantic ``FieldInfo`` are read by
  duck typing; anything else is someone else's metadata and is ignored.
* A default is published (``default``) only when it is JSON.
"""

from __future__ import annotations

import datetime
import enum
import math
import re
import uuid
from typing import Any

import orjson

from ._exceptions import SchemaError
from ._markers import MISSING, Field, Header, has_type
from ._pydantic import field_info_default, is_field_info
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
    TypeWalker,
    UnionType,
)
from ._validator import unescape_pointer

__all__ = ["SchemaWriter", "schema_for", "json_schema", "output_schema_for", "is_json_value", "as_json_value"]

_SCALAR_SCHEMAS: dict[type, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
}


class SchemaWriter:
    """Writes the schemas of one root; collects the ``$defs`` of recursive types.

    ``output`` writes output schemas (open TypedDicts, every dataclass field
    required, pydantic's serialization schema).
    """

    __slots__ = ("output", "defs", "_names", "_stack", "_recursive", "_adopted")

    def __init__(self, output: bool = False) -> None:
        self.output = output
        self.defs: dict[str, Any] = {}
        self._names: dict[type, str] = {}
        self._stack: list[type] = []
        self._recursive: set[type] = set()
        self._adopted: dict[bytes, str] = {}

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` as a root: with the ``$defs`` collected so far."""
        if self.defs:
            schema = {**schema, "$defs": {**schema.get("$defs", {}), **self.defs}}
        return schema

    def write(self, node: TypeNode) -> dict[str, Any]:
        """A fresh schema dict for ``node`` (the caller may change it)."""
        if isinstance(node, Scalar):
            return dict(_SCALAR_SCHEMAS[node.py])
        if node is ANY:
            return {}
        if isinstance(node, AnnotatedType):
            return self._annotated(node)
        if isinstance(node, UnionType):
            return self._union(node)
        if isinstance(node, (LiteralType, EnumType)):
            return _enum_schema(list(node.values))
        if isinstance(node, ArrayType):
            out: dict[str, Any] = {"type": "array"}
            items = self.write(node.item)
            if items:
                out["items"] = items
            if node.collection is set or node.collection is frozenset:
                out["uniqueItems"] = True
            return out
        if isinstance(node, TupleType):
            if not node.items:
                return {"type": "array", "maxItems": 0}
            n = len(node.items)
            return {
                "type": "array",
                "prefixItems": [self.write(item) for item in node.items],
                "items": False,
                "minItems": n,
                "maxItems": n,
            }
        if isinstance(node, MappingType):
            out = {"type": "object"}
            values = self.write(node.value)
            if values:
                out["additionalProperties"] = values
            return out
        if isinstance(node, ObjectType):
            return self._named(node)
        if isinstance(node, ModelType):
            mode = "serialization" if self.output else "validation"
            model: Any = node.cls  # a pydantic model, duck-typed
            raw: dict[str, Any] = model.model_json_schema(mode=mode)
            return self.adopt(raw)
        raise TypeError(f"not a type node: {node!r}")  # every node kind is above

    def _annotated(self, node: AnnotatedType) -> dict[str, Any]:
        schema = self.write(node.inner)
        pydantic_info = None
        for extra in node.extras:
            _apply_extra(schema, extra)
            if is_field_info(extra):
                pydantic_info = extra
        if pydantic_info is not None:
            default = field_info_default(pydantic_info)
            if default is not MISSING and is_json_value(default):
                schema.setdefault("default", as_json_value(default))
        return schema

    def _union(self, node: UnionType) -> dict[str, Any]:
        members = [self.write(m) for m in node.members]
        if any(m == {} for m in members):
            return {}
        kinds: list[str] = []
        for m in members:
            kind = m.get("type")
            if len(m) != 1 or not isinstance(kind, str):
                break
            if kind not in kinds:
                kinds.append(kind)
        else:
            return {"type": kinds[0] if len(kinds) == 1 else kinds}
        out: list[dict[str, Any]] = []
        for m in members:
            if m not in out:
                out.append(m)
        return {"anyOf": out}

    def _named(self, node: ObjectType) -> dict[str, Any]:
        """Inline ``node``; if it turns out to refer to itself, move it to ``$defs``."""
        cls = node.cls
        name = self._names.get(cls)
        if cls in self._stack or (name is not None and name in self.defs):
            self._recursive.add(cls)
            return {"$ref": f"#/$defs/{self._name(cls)}"}
        self._stack.append(cls)
        try:
            schema = self._object(node)
        finally:
            self._stack.pop()
        if cls in self._recursive:
            self.defs[self._name(cls)] = schema
            return {"$ref": f"#/$defs/{self._name(cls)}"}
        return schema

    def _name(self, cls: type) -> str:
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

    def _object(self, node: ObjectType) -> dict[str, Any]:
        dataclass = node.kind == "dataclass"
        properties: dict[str, Any] = {}
        required: list[str] = []
        for f in node.fields:
            if not f.init and not self.output:
                continue
            if f.node is None:
                raise SchemaError(f.error or f"{node.cls.__qualname__}.{f.name}: no type")
            prop = self.write(f.node)
            if f.description is not None:
                prop["description"] = f.description
            if f.required or (dataclass and self.output):
                required.append(f.name)  # a serialized dataclass has every field
            elif f.default is not MISSING and is_json_value(f.default):
                prop.setdefault("default", as_json_value(f.default))
            properties[f.name] = prop
        schema: dict[str, Any] = {"type": "object"}
        if node.description:
            schema["description"] = node.description
        schema["properties"] = properties
        if required:
            schema["required"] = required
        if dataclass or not self.output:
            schema["additionalProperties"] = False
        return schema

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
                target = unescape_pointer(ref[len("#/$defs/") :])
                rest = {k: subst(v) for k, v in node.items() if k != "$ref"}
                if target in renamed:
                    return {"$ref": f"#/$defs/{renamed[target]}", **rest}
                if target in defs:
                    return {**subst(defs[target]), **rest}
            return {k: subst(v) for k, v in node.items()}

        for name in recursive:
            if self.defs.get(renamed[name]) is None:
                self.defs[renamed[name]] = subst(defs[name])
        out: dict[str, Any] = subst(raw)
        return self._show_root(out)

    def _show_root(self, schema: dict[str, Any]) -> dict[str, Any]:
        """A bare ``$ref`` to a recursive root shows the body it points at."""
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            body = self.defs.get(unescape_pointer(ref[len("#/$defs/") :]))
            if isinstance(body, dict):
                return {**body, **{k: v for k, v in schema.items() if k != "$ref"}}
        return schema


def _apply_extra(schema: dict[str, Any], extra: Any) -> None:
    if isinstance(extra, str):
        schema["description"] = extra
    elif isinstance(extra, dict):
        schema.update(extra)
    elif isinstance(extra, Field):
        extra.apply(schema)
    elif isinstance(extra, Header):
        schema["x-mcp-header"] = extra.name
    elif is_field_info(extra):
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
    array = has_type(schema, "array")
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


def _local_refs(node: Any) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            ref = n.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                found.add(unescape_pointer(ref[len("#/$defs/") :]))
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
    # the walk made sure every value is a JSON scalar
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def is_json_value(value: Any) -> bool:
    """Whether a default can be published as JSON (an Enum member counts as its value)."""
    if value is None or type(value) in (str, int, bool):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if isinstance(value, enum.Enum):
        return is_json_value(value.value)
    if type(value) in (list, tuple):
        return all(is_json_value(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and is_json_value(v) for k, v in value.items())
    return False


def as_json_value(value: Any) -> Any:
    """A value `is_json_value` accepted, as JSON: Enum members become their values, tuples lists."""
    if isinstance(value, enum.Enum):
        return as_json_value(value.value)
    if type(value) in (list, tuple):
        return [as_json_value(v) for v in value]
    if type(value) is dict:
        return {k: as_json_value(v) for k, v in value.items()}
    return value


def json_schema(node: TypeNode, *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema of a node, as a root (recursive types get a root ``$defs``)."""
    writer = SchemaWriter(output)
    return writer.finish(writer.write(node))


def schema_for(hint: Any, *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema of a type hint (recursive types get a root ``$defs``)."""
    return json_schema(TypeWalker().walk(hint), output=output)


def output_schema_for(hint: Any) -> tuple[dict[str, Any], bool]:
    """``(outputSchema, wrapped)`` for a return annotation.

    An object type gives an object schema and the value is the structured
    content; anything else is wrapped as ``{"result": value}`` under
    ``{"type": "object", "properties": {"result": ...}, "required": ["result"]}``,
    as the official SDKs do, so the schema also suits revisions that require an
    object at the root (2025-11-25).
    """
    writer = SchemaWriter(output=True)
    inner = writer._show_root(writer.write(TypeWalker().walk(hint)))
    if inner.get("type") == "object":
        return writer.finish(inner), False
    wrapper = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    return writer.finish(wrapper), True
