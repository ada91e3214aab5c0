"""JSON Schema (2020-12) from Python type hints, and a compiled validator for it.

`schema_for(hint)` maps a type hint to a schema; `signature_schema(fn)`
builds a tool's ``inputSchema`` from a function's parameters. `compile`
turns a schema into a plain function ``check(value) -> str | None`` (the
first problem, as a sentence, or ``None``), so a tool's arguments are checked
with a few type tests and no schema interpretation per call.

Supported hints: str, int, float, bool, None, Any, list[X], tuple[X, ...],
tuple[X, Y], dict[str, X], set[X], Optional/Union, Literal, Enum subclasses,
and ``Annotated[X, "description"]`` (a plain string is the description; a
dict is merged into the schema, e.g. ``{"minimum": 0}``).

The validator knows: type, enum, const, properties, required,
additionalProperties, items, prefixItems, anyOf/oneOf, minimum, maximum,
exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern, minItems,
maxItems. Other keywords are accepted and not enforced.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from typing import Any, Callable, Literal, Union

__all__ = ["schema_for", "signature_schema", "compile", "Check", "SchemaError"]

Check = Callable[[Any], "str | None"]


class SchemaError(TypeError):
    """A type hint that cannot be expressed as JSON Schema."""


_PRIMITIVES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
    bytes: {"type": "string", "contentEncoding": "base64"},
}


def schema_for(hint: Any) -> dict[str, Any]:
    """The JSON Schema of a type hint."""
    if hint is Any or hint is inspect.Parameter.empty:
        return {}
    if hint in _PRIMITIVES:
        return dict(_PRIMITIVES[hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        base = schema_for(args[0])
        for extra in args[1:]:
            if isinstance(extra, str):
                base["description"] = extra
            elif isinstance(extra, dict):
                base.update(extra)
        return base
    if origin is Union or origin is types.UnionType:
        members = [schema_for(a) for a in args]
        simple = [m.get("type") for m in members]
        if all(isinstance(t, str) and len(m) == 1 for t, m in zip(simple, members)):
            return {"type": simple}
        return {"anyOf": members}
    if origin is Literal:
        values = list(args)
        kinds = sorted({_json_type(v) for v in values})
        out: dict[str, Any] = {"enum": values}
        if len(kinds) == 1:
            out["type"] = kinds[0]
        return out
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        kinds = sorted({_json_type(v) for v in values})
        out = {"enum": values}
        if len(kinds) == 1:
            out["type"] = kinds[0]
        return out
    if origin in (list, typing.List, set, frozenset, typing.Sequence, typing.Iterable) or hint in (list, set, frozenset):
        out = {"type": "array"}
        if args:
            out["items"] = schema_for(args[0])
        if origin in (set, frozenset) or hint in (set, frozenset):
            out["uniqueItems"] = True
        return out
    if origin is tuple or hint is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_for(args[0])}
        return {
            "type": "array",
            "prefixItems": [schema_for(a) for a in args],
            "items": False,
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin in (dict, typing.Mapping) or hint is dict:
        out = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            out["additionalProperties"] = schema_for(args[1])
        return out
    raise SchemaError(f"cannot express the type hint {hint!r} as JSON Schema")


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
    raise SchemaError(f"cannot use {value!r} in an enum")


def signature_schema(
    fn: Callable[..., Any], *, skip: frozenset[str] = frozenset()
) -> tuple[dict[str, Any], list[str]]:
    """``(inputSchema, parameter names)`` for a function; ``skip`` names injected parameters."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)
    properties: dict[str, Any] = {}
    required: list[str] = []
    names: list[str] = []
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
        try:
            prop = schema_for(hint)
        except SchemaError as exc:
            raise SchemaError(f"{fn.__qualname__}, parameter {param.name!r}: {exc}") from None
        if param.default is param.empty:
            required.append(param.name)
        elif _is_json(param.default):
            prop.setdefault("default", param.default)
        properties[param.name] = prop
        names.append(param.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not open_ended:
        schema["additionalProperties"] = False
    return schema, names


def _is_json(value: Any) -> bool:
    if value is None or type(value) in (str, int, float, bool):
        return True
    if type(value) in (list, tuple):
        return all(_is_json(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _is_json(v) for k, v in value.items())
    return False


# -- the compiled validator --------------------------------------------------

_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}


def _where(path: str) -> str:
    return f"'{path}'" if path else "the value"


def compile(schema: Any, path: str = "") -> Check:
    """A function that returns the first problem of a value against ``schema``, or None."""
    if schema is True or schema == {}:
        return lambda v: None
    if schema is False:
        return lambda v: f"{_where(path)} is not allowed"
    if not isinstance(schema, dict):
        raise SchemaError(f"not a JSON Schema: {schema!r}")
    checks: list[Check] = []

    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        tests = [_TYPE_TESTS[k] for k in kinds if k in _TYPE_TESTS]
        expected = " or ".join(kinds)

        def check_type(v: Any, tests: list[Callable[[Any], bool]] = tests) -> str | None:
            for t in tests:
                if t(v):
                    return None
            return f"{_where(path)} must be {expected}, not {_describe(v)}"

        checks.append(check_type)
    if "enum" in schema:
        allowed = schema["enum"]
        checks.append(
            lambda v: None
            if any(_same(v, a) for a in allowed)
            else f"{_where(path)} must be one of {', '.join(map(_show, allowed))}"
        )
    if "const" in schema:
        const = schema["const"]
        checks.append(lambda v: None if _same(v, const) else f"{_where(path)} must be {_show(const)}")
    for key, test, phrase in (
        ("minimum", lambda v, b: v >= b, "at least"),
        ("maximum", lambda v, b: v <= b, "at most"),
        ("exclusiveMinimum", lambda v, b: v > b, "greater than"),
        ("exclusiveMaximum", lambda v, b: v < b, "less than"),
    ):
        if key in schema:
            bound = schema[key]
            checks.append(
                lambda v, bound=bound, test=test, phrase=phrase: None
                if not _is_number(v) or test(v, bound)
                else f"{_where(path)} must be {phrase} {bound}"
            )
    if "minLength" in schema or "maxLength" in schema or "pattern" in schema:
        lo = schema.get("minLength", 0)
        hi = schema.get("maxLength")
        rx = re.compile(schema["pattern"]) if "pattern" in schema else None

        def check_string(v: Any) -> str | None:
            if type(v) is not str:
                return None
            if len(v) < lo:
                return f"{_where(path)} must be at least {lo} characters long"
            if hi is not None and len(v) > hi:
                return f"{_where(path)} must be at most {hi} characters long"
            if rx is not None and not rx.search(v):
                return f"{_where(path)} must match the pattern {rx.pattern!r}"
            return None

        checks.append(check_string)
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        checks.append(_compile_array(schema, path))
    if any(k in schema for k in ("properties", "required", "additionalProperties")):
        checks.append(_compile_object(schema, path))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [compile(s, path) for s in schema[key]]

            def check_any(v: Any, options: list[Check] = options) -> str | None:
                problems = [o(v) for o in options]
                if any(p is None for p in problems):
                    return None
                return problems[0]

            checks.append(check_any)

    if not checks:
        return lambda v: None
    if len(checks) == 1:
        return checks[0]

    def check_all(v: Any) -> str | None:
        for c in checks:
            problem = c(v)
            if problem is not None:
                return problem
        return None

    return check_all


def _compile_array(schema: dict[str, Any], path: str) -> Check:
    prefix = [compile(s, f"{path}[{i}]") for i, s in enumerate(schema.get("prefixItems", []))]
    items_schema = schema.get("items", True)
    rest = compile(items_schema, f"{path}[]") if items_schema is not False else None
    lo = schema.get("minItems", 0)
    hi = schema.get("maxItems")

    def check_array(v: Any) -> str | None:
        if type(v) is not list:
            return None
        if len(v) < lo:
            return f"{_where(path)} must have at least {lo} items"
        if hi is not None and len(v) > hi:
            return f"{_where(path)} must have at most {hi} items"
        for i, item in enumerate(v):
            if i < len(prefix):
                problem = prefix[i](item)
            elif rest is None:
                return f"{_where(path)} must have at most {len(prefix)} items"
            else:
                problem = rest(item)
            if problem is not None:
                return problem.replace(f"{path}[]", f"{path}[{i}]")
        return None

    return check_array


def _compile_object(schema: dict[str, Any], path: str) -> Check:
    prefix = f"{path}." if path else ""
    props = {
        name: compile(sub, f"{prefix}{name}") for name, sub in (schema.get("properties") or {}).items()
    }
    required = list(schema.get("required") or ())
    extra = schema.get("additionalProperties", True)
    extra_check = compile(extra, f"{prefix}*") if extra not in (True, False) else None

    def check_object(v: Any) -> str | None:
        if type(v) is not dict:
            return None
        for name in required:
            if name not in v:
                return f"'{prefix}{name}' is required"
        for name, value in v.items():
            check = props.get(name)
            if check is not None:
                problem = check(value)
            elif extra is False:
                return f"'{prefix}{name}' is not an accepted argument"
            elif extra_check is not None:
                problem = extra_check(value)
                if problem is not None:
                    problem = problem.replace(f"{prefix}*", f"{prefix}{name}")
            else:
                continue
            if problem is not None:
                return problem
        return None

    return check_object


def _is_number(v: Any) -> bool:
    return type(v) is int or type(v) is float


def _same(a: Any, b: Any) -> bool:
    # JSON equality: True is not 1.
    return type(a) is type(b) and a == b or (_is_number(a) and _is_number(b) and a == b)


def _show(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    name = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}
    return name.get(type(value), type(value).__name__)
