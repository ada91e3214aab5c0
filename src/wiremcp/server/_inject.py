"""How a handler's parameters are filled: the `Context`, and strings converted by type hints.

A tool, resource, prompt or completer asks for the request's `Context` by
annotating a parameter with it (``ctx: Context``); `context_param` finds
that parameter, which is injected and never taken from the wire.

Resource templates (matched URI variables), prompts (``arguments``, an
object of strings) and completers (``context.arguments``) get strings from
the wire. `Signature` reads a function's parameters once and gives each a
converter built from its hint:

======================  ==================================================
hint                    a string becomes
======================  ==================================================
str, Any, none          itself
int                     an int: optional sign and ASCII digits
float                   a finite float (``1``, ``-2.5``, ``1e3``)
bool                    True for true/1/yes/on, False for false/0/no/off
Literal[...]            the member whose text it is (``str()``, or
                        true/false for a bool)
Enum subclass           the member whose value's text it is
X | None, Optional[X]   X's conversion
Union[X, Y, ...]        the first member that converts it
list[X], tuple[X, ...]  X for each comma-separated item (or each item of an
                        exploded template variable, ``{/path*}``)
dict[str, X]            X for each value of a named exploded template
                        variable (``{?params*}``)
Annotated[X, ...]       X's conversion; a str extra is the description, a
                        dict extra may give ``description`` and ``title``
======================  ==================================================

Any other hint is refused when the function is registered (`TypeError`),
not when a request comes. A value that does not convert raises `ValueError`;
the caller decides what that means (a template that does not match, an
invalid prompt argument).
"""

from __future__ import annotations

import enum
import inspect
import math
import re
import sys
import types
import typing
from typing import TYPE_CHECKING, Any, Callable, Literal, Union

from ._context import Context

if TYPE_CHECKING:
    from ._depends import Injection

__all__ = ["context_param", "converter", "Param", "Signature"]

Convert = Callable[[Any], Any]

# Patterns, compiled by `re` on first use (its cache): a server start compiles none of them.
_INT = r"[+-]?[0-9]+\Z"
_FLOAT = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z"
_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def _is_context(hint: Any) -> bool:
    if hint is Context:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _is_context(typing.get_args(hint)[0])
    if origin is Union or origin is types.UnionType:
        return any(a is Context for a in typing.get_args(hint))
    return False


def context_param(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter annotated `Context` (or ``Context | None``), if any."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved forward references: no injection
        return None
    for name, hint in hints.items():
        if name != "return" and _is_context(hint):
            return name
    return None


# -- converters ----------------------------------------------------------------


def _text(value: Any) -> str:
    if type(value) is not str:
        raise ValueError(f"expected one value, not {type(value).__name__}")
    return value


def _identity(value: Any) -> Any:
    return value


def _to_int(value: Any) -> int:
    text = _text(value)
    if not re.match(_INT, text):
        raise ValueError(f"{text!r} is not an integer")
    return int(text)


def _to_float(value: Any) -> float:
    text = _text(value)
    if not re.match(_FLOAT, text):
        raise ValueError(f"{text!r} is not a number")
    out = float(text)
    if not math.isfinite(out):
        raise ValueError(f"{text!r} is out of range")
    return out


def _to_bool(value: Any) -> bool:
    text = _text(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{value!r} is not true or false")


def _spelled(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _choice(options: dict[str, Any]) -> Convert:
    def convert(value: Any) -> Any:
        text = _text(value)
        try:
            return options[text]
        except KeyError:
            raise ValueError(f"{text!r} is not one of {', '.join(map(repr, options))}") from None

    return convert


def _items(item: Convert, make: Callable[[list[Any]], Any]) -> Convert:
    def convert(value: Any) -> Any:
        parts = value.split(",") if type(value) is str else value
        if type(parts) is not list:
            raise ValueError("expected a list of values")
        return make([item(p) for p in parts])

    return convert


def _mapping(item: Convert) -> Convert:
    def convert(value: Any) -> Any:
        if type(value) is not dict:
            raise ValueError("expected name=value pairs")
        return {k: item(v) for k, v in value.items()}

    return convert


def _first_of(options: list[Convert]) -> Convert:
    def convert(value: Any) -> Any:
        problem: ValueError | None = None
        for option in options:
            try:
                return option(value)
            except ValueError as exc:
                problem = problem or exc
        assert problem is not None
        raise problem

    return convert


def converter(hint: Any) -> Convert:
    """A function turning a wire string (or list/dict of them) into a value of ``hint``."""
    if hint is Any or hint is inspect.Parameter.empty or hint is object:
        return _identity
    if hint is str:
        return _text
    if hint is int:
        return _to_int
    if hint is float:
        return _to_float
    if hint is bool:
        return _to_bool
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return converter(args[0])
    if origin is Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            return converter(members[0])
        return _first_of([converter(a) for a in members])
    if origin is Literal:
        return _choice({_spelled(a): a for a in args})
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _choice({_spelled(m.value): m for m in hint})
    if origin in (list, typing.List) or hint is list:
        return _items(converter(args[0]) if args else _text, list)
    if origin is tuple and (not args or (len(args) == 2 and args[1] is Ellipsis)):
        return _items(converter(args[0]) if args else _text, tuple)
    if origin in (dict, typing.Dict) or hint is dict:
        if args and args[0] is not str:
            raise TypeError(f"cannot read {hint!r} from a URI: keys are strings")
        return _mapping(converter(args[1]) if len(args) == 2 else _text)
    raise TypeError(f"cannot convert a string argument to {hint!r}")


# -- signatures ----------------------------------------------------------------


class Param:
    """One parameter that takes a value from the wire."""

    __slots__ = ("name", "convert", "required", "description", "title")

    def __init__(self, name: str, convert: Convert, required: bool, description: str | None, title: str | None) -> None:
        self.name = name
        self.convert = convert
        self.required = required
        self.description = description
        self.title = title


def _describe(hint: Any) -> tuple[str | None, str | None]:
    """``(description, title)`` from ``Annotated`` extras."""
    description = title = None
    if typing.get_origin(hint) is typing.Annotated:
        for extra in typing.get_args(hint)[1:]:
            if isinstance(extra, str):
                description = extra
            elif isinstance(extra, dict):
                description = extra.get("description", description)
                title = extra.get("title", title)
    return description, title


class Signature:
    """What a function takes: the `Context` parameter, its injected ones (``depends``), and its wire parameters in order.

    ``what`` names the function in error messages (``"prompt 'greet'"``).
    """

    __slots__ = ("fn", "is_async", "context", "params", "by_name", "var_keyword", "depends")

    def __init__(self, fn: Callable[..., Any], what: str) -> None:
        if not callable(fn):
            raise TypeError(f"{what}: expected a function, got {fn!r}")
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as exc:
            raise TypeError(f"{what}: cannot resolve the type hints of {fn!r}: {exc}") from None
        self.context: str | None = None
        self.params: list[Param] = []
        self.var_keyword = False
        #: Parameters filled by dependency functions (``Annotated[T, Depends(f)]``, `_depends`), or None: looked
        #: for only once `_depends` is loaded (no annotation can hold a `Depends` before), so unused it costs nothing.
        self.depends: Injection | None = None
        depends = sys.modules.get(f"{__package__}._depends")
        if depends is not None:
            self.depends = depends.find_depends(fn, what)
        injected = self.depends.params if self.depends is not None else ()
        for p in inspect.signature(fn).parameters.values():
            hint = hints.get(p.name, inspect.Parameter.empty)
            if p.name in injected:
                continue
            if _is_context(hint):
                self.context = p.name
                continue
            if p.kind is p.VAR_KEYWORD:
                self.var_keyword = True
                continue
            if p.kind in (p.VAR_POSITIONAL, p.POSITIONAL_ONLY):
                raise TypeError(f"{what}: parameter {p.name!r} must be passable by keyword")
            try:
                convert = converter(hint)
            except TypeError as exc:
                raise TypeError(f"{what}, parameter {p.name!r}: {exc}") from None
            description, title = _describe(hint)
            self.params.append(Param(p.name, convert, p.default is p.empty, description, title))
        self.by_name = {p.name: p for p in self.params}

    @property
    def wants_context(self) -> bool:
        """Whether a call needs a `Context`: a parameter takes it, or a dependency may."""
        return self.context is not None or self.depends is not None
