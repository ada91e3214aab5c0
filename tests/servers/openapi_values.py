"""A value valid against a schema, made deterministically: for the generic OpenAPI upstream and its tests.

`example(schema, root)` reads an OpenAPI 3.0 or 3.1 schema (``$ref`` into
``root``: ``#/components/...``, ``#/$defs/...``; 3.0's ``nullable`` and
boolean ``exclusiveMinimum``) or the JSON Schema 2020-12 wiremcp makes of
one, and returns a value the schema accepts: ``const``, the first ``enum``
entry, the first ``anyOf``/``oneOf`` branch, ``allOf`` merged, every
property of an object, one item of an array, a string matching its
``pattern`` (`from_regex`) and its ``format``; with ``nulls=True``, ``null``
wherever the schema allows it. Test data only.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser
from typing import Any

__all__ = ["example", "from_regex", "resolve"]

_FORMATS = {
    "date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z", "email": "someone@example.com",
    "uri": "https://example.com/x", "url": "https://example.com/x", "uuid": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "byte": "eA==", "binary": "x",
}  # fmt: skip
_KEEP = ("exclusiveMinimum", "exclusiveMaximum", "minimum", "maximum", "minLength", "maxLength", "pattern", "format")


def resolve(schema: Any, root: dict[str, Any]) -> Any:
    """``schema`` with its ``$ref`` chain followed (siblings of the ``$ref`` merged over the target)."""
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/"):
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**node, **rest} if rest and isinstance(node, dict) else node
        seen += 1
        if seen > 50:
            raise ValueError("a $ref chain that does not end")
    return schema


def _merge(parts: list[Any], root: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in parts:
        part = resolve(part, root)
        if not isinstance(part, dict):
            continue
        if "allOf" in part:
            part = {**{k: v for k, v in part.items() if k != "allOf"}, **_merge(part["allOf"], root)}
        for key, value in part.items():
            if key == "properties":
                out["properties"] = {**out.get("properties", {}), **value}
            elif key == "required":
                out["required"] = [*out.get("required", []), *value]
            else:
                out.setdefault(key, value)
    return out


def example(schema: Any, root: dict[str, Any] | None = None, depth: int = 0, *, nulls: bool = False) -> Any:
    """A value ``schema`` accepts (``root``: the document its ``$ref``s point into).

    ``nulls``: ``null`` wherever the schema allows one (``nullable``, a ``"null"`` type), as APIs answer."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    schema = resolve(schema, root)
    if schema is True or not isinstance(schema, dict):
        return "x"
    kinds = schema.get("type")
    if nulls and (schema.get("nullable") is True or kinds == "null" or isinstance(kinds, list) and "null" in kinds):
        return None
    if "allOf" in schema:
        schema = _merge([{k: v for k, v in schema.items() if k != "allOf"}, *schema["allOf"]], root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return next((v for v in schema["enum"] if v is not None), schema["enum"][0])
    for key in ("oneOf", "anyOf"):
        branches = [resolve(b, root) for b in schema.get(key) or ()]
        if branches:
            typed = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")] or branches
            first = typed[0]
            merged = {k: v for k, v in schema.items() if k not in ("oneOf", "anyOf")}
            return example(_merge([merged, first], root) if isinstance(first, dict) else first, root, depth + 1, nulls=nulls)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "null":
        return None
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return _number(schema)
    if kind == "array":
        count = max(int(schema.get("minItems", 0)), 0 if depth > 3 else 1)
        items = schema.get("items", {})
        return [example(items, root, depth + 1, nulls=nulls) for _ in range(count)] if isinstance(items, (dict, bool)) else []
    if kind == "object":
        properties = schema.get("properties") or {}
        wanted = properties if depth <= 4 else {k: properties[k] for k in schema.get("required", ()) if k in properties}
        return {name: example(sub, root, depth + 1, nulls=nulls) for name, sub in wanted.items()}
    return _string(schema)


def _number(schema: dict[str, Any]) -> int | float:
    low, high = schema.get("minimum"), schema.get("maximum")
    ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if ex_low is True:
        ex_low, low = low, None
    if ex_high is True:
        ex_high, high = high, None
    value: float = 1
    if isinstance(low, (int, float)):
        value = max(value, low)
    if isinstance(ex_low, (int, float)) and not isinstance(ex_low, bool):
        value = max(value, ex_low + 1)
    if isinstance(high, (int, float)) and value > high:
        value = high
    if isinstance(ex_high, (int, float)) and not isinstance(ex_high, bool) and value >= ex_high:
        value = ex_high - 1
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step:
        value = step * max(1, -(-value // step))
    return int(value) if float(value).is_integer() else value


def _string(schema: dict[str, Any]) -> str:
    pattern = schema.get("pattern")
    text = from_regex(pattern) if isinstance(pattern, str) else _FORMATS.get(str(schema.get("format")), "text")
    low, high = schema.get("minLength"), schema.get("maxLength")
    while isinstance(low, int) and len(text) < low:
        longer = text + "a"
        if isinstance(pattern, str) and re.search(pattern, longer) is None:
            longer = "a" + text
        text = longer
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    return text


def from_regex(pattern: str) -> str:
    """A short string in which ``pattern`` is found (``re.search``): the first branch, the least repeats."""
    return _emit(_parser.parse(pattern))


def _emit(items: Any) -> str:
    out = []
    for op, arg in items:
        if op is C.LITERAL:
            out.append(chr(arg))
        elif op is C.NOT_LITERAL:
            out.append("a" if arg != ord("a") else "b")
        elif op is C.ANY:
            out.append("a")
        elif op is C.IN:
            out.append(_in(arg))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, _high, sub = arg
            out.append(_emit(sub) * low)
        elif op is C.SUBPATTERN:
            out.append(_emit(arg[-1]))
        elif op is C.ATOMIC_GROUP:
            out.append(_emit(arg))
        elif op is C.BRANCH:
            out.append(_emit(arg[1][0]))
        elif op is C.CATEGORY:
            out.append(_category(arg))
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        else:
            raise ValueError(f"from_regex: {op} is not handled")
    return "".join(out)


def _category(category: Any) -> str:
    return {C.CATEGORY_DIGIT: "0", C.CATEGORY_SPACE: " ", C.CATEGORY_WORD: "a"}.get(category, "a")


def _in(members: list[Any]) -> str:
    if members and members[0][0] is C.NEGATE:
        negated = re.compile(_regex_text(members))
        for candidate in "aZ0_-x":
            if negated.fullmatch(candidate):
                return candidate
        raise ValueError("from_regex: no character outside the negated set")
    op, arg = members[0]
    if op is C.LITERAL:
        return chr(arg)
    if op is C.RANGE:
        return chr(arg[0])
    if op is C.CATEGORY:
        return _category(arg)
    raise ValueError(f"from_regex: {op} in a set is not handled")


def _member_text(member: Any) -> str:
    op, arg = member
    if op is C.LITERAL:
        return re.escape(chr(arg))
    if op is C.RANGE:
        return re.escape(chr(arg[0])) + "-" + re.escape(chr(arg[1]))
    if op is C.CATEGORY:
        return {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_SPACE: r"\s", C.CATEGORY_WORD: r"\w",
                C.CATEGORY_NOT_DIGIT: r"\D", C.CATEGORY_NOT_SPACE: r"\S", C.CATEGORY_NOT_WORD: r"\W"}[arg]  # fmt: skip
    raise ValueError(f"from_regex: {op} in a set is not handled")


def _regex_text(members: list[Any]) -> str:
    return "[^" + "".join(_member_text(m) for m in members[1:]) + "]"
