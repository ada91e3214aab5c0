"""The words of ``wiremcp call | prompt``: ``key=value`` arguments, and "did you mean" for names.

Rules:

* ``call TOOL key=value ...`` builds the arguments object from the tool's
  ``inputSchema``: a property typed ``integer`` or ``number`` takes a number,
  ``boolean`` takes true/false (also yes/no, 1/0, on/off), ``object`` and
  ``array`` take JSON, ``string`` takes the text as it is (``null`` where
  the type allows it is null). A property with no type, several types or a
  name the schema does not list takes JSON when the text is JSON, else the
  text. A value that does not fit its type is a usage error naming the key
  and the type; a key given twice is one too.
* ``call TOOL '{"json": "object"}'`` (one word starting with ``{``) is still
  accepted as the whole arguments object.
* `suggest` finds the names closest to a mistyped one (`difflib`, cutoff
  0.6), for the error message.
"""

from __future__ import annotations

import difflib
from typing import Any, Iterable

import orjson

__all__ = ["ArgumentError", "parse_arguments", "convert", "suggest", "did_you_mean"]

_TRUE = ("true", "yes", "y", "1", "on")
_FALSE = ("false", "no", "n", "0", "off")


class ArgumentError(ValueError):
    """A word that does not make an argument; the message is for the user."""


def _types(schema: Any) -> list[str]:
    if type(schema) is not dict:
        return []
    kind = schema.get("type")
    if type(kind) is str:
        return [kind]
    if type(kind) is list:
        return [k for k in kind if type(k) is str]
    return []


def convert(key: str, text: str, schema: Any) -> Any:
    """``text`` as the value of a property of ``schema``; `ArgumentError` when it does not fit."""
    kinds = _types(schema)
    if "null" in kinds and text == "null":
        return None
    kinds = [k for k in kinds if k != "null"]
    if len(kinds) != 1:
        if "string" in kinds and not text.strip().startswith(("{", "[", '"')):
            return text
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
    kind = kinds[0]
    if kind == "string":
        return text
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ArgumentError(f"{key} wants an integer, not {text!r}") from None
    if kind == "number":
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            raise ArgumentError(f"{key} wants a number, not {text!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise ArgumentError(f"{key} wants a finite number, not {text!r}")
        return value
    if kind == "boolean":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ArgumentError(f"{key} wants true or false, not {text!r}")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ArgumentError(f"{key} wants JSON ({kind}): {exc}") from None
    if kind in ("object", "array") and type(value) is not (dict if kind == "object" else list):
        raise ArgumentError(f"{key} wants a JSON {kind}, not {text!r}")
    return value


def parse_arguments(words: list[str], schema: Any) -> dict[str, Any] | None:
    """The arguments object for a tool: ``None`` for no words, one JSON object, or ``key=value`` words."""
    if not words:
        return None
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        try:
            value = orjson.loads(words[0])
        except orjson.JSONDecodeError as exc:
            raise ArgumentError(f"the arguments are not JSON: {exc}") from None
        if type(value) is not dict:
            raise ArgumentError("the arguments must be a JSON object")
        whole: dict[str, Any] = value
        return whole
    properties = schema.get("properties") if type(schema) is dict else None
    if type(properties) is not dict:
        properties = {}
    arguments: dict[str, Any] = {}
    for word in words:
        key, sep, text = word.partition("=")
        if not sep or not key:
            raise ArgumentError(f"arguments are key=value words (or one JSON object), not {word!r}")
        if key in arguments:
            raise ArgumentError(f"{key} is given twice")
        arguments[key] = convert(key, text, properties.get(key))
    return arguments


def suggest(name: str, candidates: Iterable[str]) -> list[str]:
    """The candidates closest to ``name``, best first (at most three)."""
    return difflib.get_close_matches(name, list(candidates), n=3, cutoff=0.6)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``'x' or 'y'``), or "" when nothing is close."""
    close = suggest(name, candidates)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?"
