"""What a tool returns: whether it is data (and so gets an ``outputSchema``), and its JSON.

Rules (server/tools.mdx, "Output Schema", "Structured Content"):

* Data is what a return annotation describes as JSON the model can use as
  structure: numbers, objects, arrays, TypedDicts, dataclasses, pydantic
  models. Not data: no annotation, ``Any``, ``str`` (prose for the model),
  ``None``, ``bytes`` (say what it is with a content helper), content blocks
  and `ToolResult` (the ``content`` types given by the caller), unions with
  any of those (``Optional[X]`` is data when X is) and arrays of content
  blocks.
* The value goes out through orjson; `json_default` encodes what orjson does
  not (pydantic models, sets, bytes as base64) and refuses anything else.
"""

from __future__ import annotations

import base64
import inspect
import types
import typing
from typing import Any, Union

from ._pydantic import is_model
from ._types import SEQUENCE_ORIGINS, unwrap

__all__ = ["is_structured", "json_default"]

_UNSTRUCTURED = (str, type(None), None, Any, inspect.Parameter.empty, object, bytes)


def is_structured(hint: Any, content: frozenset[Any] = frozenset()) -> bool:
    """Whether a return annotation describes data (and so gets an ``outputSchema``).

    ``content`` holds the hints that are content, not data (content blocks,
    `ToolResult`).
    """
    hint = unwrap(hint)
    if any(hint is u for u in _UNSTRUCTURED) or _is_content(hint, content):
        return False
    origin = typing.get_origin(hint)
    if origin is Union or origin is types.UnionType:
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return bool(members) and all(is_structured(a, content) for a in members)
    if origin in SEQUENCE_ORIGINS or origin is tuple:
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


def json_default(value: Any) -> Any:
    """orjson's ``default=`` for what it does not encode natively (pydantic, sets, bytes)."""
    dump = getattr(value, "model_dump", None)
    if dump is not None and is_model(type(value)):
        return dump(mode="json")
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
