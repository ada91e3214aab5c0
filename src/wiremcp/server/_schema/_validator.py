"""A compiled JSON Schema validator: a schema becomes a plain function, once.

`compile_validator(schema)` turns a schema into ``check(value) -> str | None``
(the first problem, as a sentence, or ``None``), so a value is checked with a
few type tests and no schema interpretation per call. Generated schemas and
user-supplied ones (``input_schema=``, ``output_schema=``, elicitation
schemas) go through the same compiler.

It knows: ``type``, ``enum``, ``const``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``, ``minLength``,
``maxLength``, ``pattern``, ``items``, ``prefixItems``, ``additionalItems``
(tuple form of ``items``, draft-07), ``minItems``, ``maxItems``,
``uniqueItems``, ``contains``/``minContains``/``maxContains``, ``properties``,
``required``, ``additionalProperties``, ``patternProperties``,
``propertyNames``, ``minProperties``, ``maxProperties``,
``dependentRequired``, ``dependentSchemas``, ``dependencies`` (draft-07),
``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else`` and local
``$ref`` (``#``, JSON pointers such as ``#/$defs/x`` or
``#/definitions/x``, and ``$anchor`` names).

Rules it keeps (basic/index.mdx, "JSON Schema Usage"):

* A ``$ref`` to another document is refused at compile time: it is never
  fetched ("$ref Resolution").
* ``format``, ``unevaluatedProperties``, ``unevaluatedItems``,
  ``$dynamicRef`` and annotation keywords are accepted and not enforced.
* Dialects: 2020-12 (the default), 2019-09 and draft-07; another
  ``$schema`` is a `SchemaError`.
* Limits against hostile schemas ("Composition-Keyword Resource Use"):
  `MAX_SCHEMA_DEPTH`, `MAX_SUBSCHEMAS`; a value nested too deeply to check
  is a problem, not a crash.
* JSON semantics, not Python's: ``true`` is not ``1``, ``1.0`` is an integer,
  ``multipleOf`` tolerates float rounding.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import orjson

from ._exceptions import SchemaError

__all__ = [
    "Check",
    "Problem",
    "compile_validator",
    "render",
    "unescape_pointer",
    "MAX_SCHEMA_DEPTH",
    "MAX_SUBSCHEMAS",
    "SUPPORTED_DIALECTS",
]

#: A compiled check: the first problem of a value as a sentence, or ``None``.
Check = Callable[[Any], "str | None"]

#: Deepest nesting of subschemas `compile_validator` accepts; generated schemas
#: stay far below it, and a deeper one is more likely an attack than a data
#: model (basic/index.mdx, "Composition-Keyword Resource Use").
MAX_SCHEMA_DEPTH = 64
#: Most subschemas one `compile_validator` call turns into checks, for the same reason.
MAX_SUBSCHEMAS = 10_000


#: A problem: (path from the checked value, sentence without the subject).
Problem = tuple[tuple[Any, ...], str]
_Check = Callable[[Any], "Problem | None"]

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


def render(problem: Problem, prefix: str = "") -> str:
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


def compile_validator(schema: Any, path: str = "", *, noun: str = "property") -> Check:
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
        self.cells: dict[str, list[_Check | None]] = {}
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
            part = unescape_pointer(raw)
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(f"$ref {ref!r} does not resolve inside this schema")
        return node

    def ref(self, ref: str, depth: int) -> _Check:
        found = self.cells.get(ref)
        if found is not None:
            done = found[0]
            if done is not None:
                return done
            cell = found  # still being compiled: a recursive reference

            def forward(v: Any) -> Problem | None:
                target = cell[0]
                assert target is not None
                return target(v)

            return forward
        self.cells[ref] = [None]
        check = self.cells[ref][0] = self.node(self.resolve(ref), depth + 1)
        return check

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

            def check_two(v: Any) -> Problem | None:
                problem = first(v)
                return problem if problem is not None else second(v)

            return check_two

        def check_all(v: Any) -> Problem | None:
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

        def check_array(v: Any) -> Problem | None:
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
            def check_object(v: Any) -> Problem | None:
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

        def check_object_full(v: Any) -> Problem | None:
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

    def check_type(v: Any) -> Problem | None:
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

    def check_number(v: Any) -> Problem | None:
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
    r = round(q)
    if r == 0:  # a tiny quotient (4.76e-197 / 0.5) is no multiple: only 0 is
        return v == 0
    return abs(q - r) <= 1e-9 * abs(r)  # relative: rounding of v / m, never a fraction of a step


def _compile_string(schema: dict[str, Any]) -> _Check | None:
    if "minLength" not in schema and "maxLength" not in schema and "pattern" not in schema:
        return None
    lo = _count(schema, "minLength", 0)
    hi = _count(schema, "maxLength", None)
    rx = _regex(schema["pattern"]) if "pattern" in schema else None

    def check_string(v: Any) -> Problem | None:
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
    def check_any(v: Any) -> Problem | None:
        best: Problem | None = None
        for option in options:
            problem = option(v)
            if problem is None:
                return None
            if best is None or len(problem[0]) > len(best[0]):
                best = problem  # the branch that got furthest explains best
        return best

    return check_any


def _one_of(options: list[_Check]) -> _Check:
    def check_one(v: Any) -> Problem | None:
        matched = 0
        best: Problem | None = None
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


def unescape_pointer(part: str) -> str:
    """One JSON pointer segment (RFC 6901, percent-decoded as a URI fragment): ``a~1b`` is ``a/b``."""
    from urllib.parse import unquote  # only for schemas with $ref: not at import

    return unquote(part).replace("~1", "/").replace("~0", "~")


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1; arrays and objects compared deeply."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if (ta is int or ta is float) and (tb is int or tb is float):
        same: bool = a == b
        return same
    if ta is not tb:
        return False
    if ta is list:
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if ta is dict:
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    equal: bool = a == b
    return equal


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
