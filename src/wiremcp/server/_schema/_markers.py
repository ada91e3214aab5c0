"""What a user writes next to a type hint: `Field`, `Header` and `MISSING`.

Rules the markers keep:

* A marker checks its own arguments when it is made (a bound is a finite
  number, a length a non-negative integer, a pattern a valid regular
  expression), so a mistake shows at import time, not at the first call.
* A marker only describes; it writes JSON Schema keywords with `Field.apply`
  (and `Header` with the ``x-mcp-header`` annotation, server/tools.mdx), and
  never touches the Python value.
* `MISSING` means "no default": the parameter or field is required. It is
  falsy and prints as ``MISSING``.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["MISSING", "Field", "Header", "has_type"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: "No default": the parameter or field is required.
MISSING: Any = _Missing()


def has_type(schema: dict[str, Any], name: str) -> bool:
    """Whether ``schema``'s ``type`` is ``name`` or a list holding it."""
    kind = schema.get("type")
    return kind == name or (type(kind) is list and name in kind)


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
        for key, length in (("min_length", min_length), ("max_length", max_length)):
            if length is not None and (type(length) is not int or length < 0):
                raise TypeError(f"Field({key}=...) must be a non-negative integer, not {length!r}")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"Field(pattern={pattern!r}) is not a valid regular expression: {exc}") from None
        for key, text in (("description", description), ("title", title), ("header", header)):
            if text is not None and type(text) is not str:
                raise TypeError(f"Field({key}=...) must be a string, not {text!r}")
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
        array = has_type(schema, "array")
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
