"""URI templates (RFC 6570): expansion at all four levels, and matching a URI back.

``UriTemplate("file:///logs/{name}{?lines}")`` parses once; `expand` builds a
URI from values exactly as RFC 6570 section 3 says; `match` goes the other
way, from a URI to the variables' values, for ``resources/read``.

Expansion is defined by the RFC; matching is not, so these are the rules
`match` keeps (they make ``match(expand(v)) == v`` for the values a resource
URI would carry):

* The whole URI must match (no prefix match); literal text matches exactly.
* A value (outside ``;``, ``?``, ``&``, see below) is one or more characters
  and takes as few as it can, so later parts of the template get theirs:
  ``{name}{.ext}`` reads ``report.pdf`` as ``name="report"``, ``ext="pdf"``.
* ``{var}``, ``{x,y}`` (simple): values have none of ``/ ? # [ ]``, and no
  ``,`` when the expression has several variables or explodes (``,``
  separates them). Every variable must be present.
* ``{+var}`` (reserved), ``{#var}`` (fragment): any characters (no ``,``
  with several variables). ``{#...}`` as a whole may be absent.
* ``{.var}``, ``{/var}``: each variable is its own optional ``.value`` /
  ``/value`` part; ``.`` values cannot contain ``.``, neither can contain
  ``/ ? #``. ``{/path*}`` (explode) takes ``/a/b/c`` as ``["a", "b", "c"]``.
* ``{;a,b}``, ``{?a,b}``, ``{&c}`` (named): the parameters may come in any
  order, any may be absent (``;a`` and ``?a`` without ``=`` are empty
  values); a parameter the template does not name, or a repeated one, means
  no match, except for an exploded variable: ``{?tag*}`` collects repeated
  ``tag=`` as a list and, when it is the template's only exploded named
  variable, other unnamed parameters as a dict.
* ``{var:3}`` (prefix): at most that many characters.
* A variable used twice must have the same value both times (a prefix use:
  a prefix of it).
* A URI longer than the template's `max_uri_length` matches nothing (see
  below).
* Values are percent-decoded as UTF-8 (``%20`` → space; bad UTF-8 is no
  match). ``+`` stays ``+``: RFC 6570 encodes a space as ``%20``. So a
  ``{name}`` value has no raw ``/`` but may hold a decoded one (``..%2Fx`` is
  ``../x``): code that turns values into file paths must check them
  (resources.mdx, Security Considerations 5).

Matching is one regular expression, and a value whose end is ambiguous
(``{+a}/{+b}``: either value may hold a ``/``) makes it backtrack: with k >= 1
such values, a hostile URI of length n costs up to about n**(k+1) / (k+1)!
steps (each choice of ends rescans what follows). So each template gets
``max_uri_length``: `MAX_URI_LENGTH` when k = 0, else the length at which
that cost stays under `MATCH_BUDGET` (k = 1: 3162, k = 2: 310, k = 3: 104
characters). A value whose end is fixed by the next character it cannot
contain (``{name}/`` ends at the first ``/``), or by the end of the URI,
does not count.

A non-exploded variable gives a ``str``, an exploded one a ``list[str]`` (or
a ``dict[str, str]`` for a named associative explode). Absent optional
variables are absent from the result.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

__all__ = ["UriTemplate", "TemplateError", "MAX_TEMPLATE_LENGTH", "MAX_URI_LENGTH", "MATCH_BUDGET"]

#: Longest template accepted; a template is code, not data, so this is generous.
MAX_TEMPLATE_LENGTH = 8192
#: Longest URI `match` looks at; a longer one matches nothing. URIs in the
#: wild stay under 8 KB.
MAX_URI_LENGTH = 16384
#: Worst-case regex steps allowed for one match (measured here: 0.1-0.3 s of
#: CPU at worst); sets ``max_uri_length`` for templates whose matching can
#: backtrack.
MATCH_BUDGET = 5_000_000

#: RFC 3986 section 2.2: gen-delims and sub-delims, left as is by ``{+...}`` and ``{#...}``.
_RESERVED = ":/?#[]@!$&'()*+,;="
#: RFC 6570 section 2.2: operators reserved for future extensions.
_FUTURE = "=,!@|"
#: RFC 6570 section 2.4.1: max-length is 1-9999.
_MAX_PREFIX = 9999

_VARNAME = re.compile(r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*\Z")
_TRIPLET = re.compile(r"%[0-9A-Fa-f]{2}")


class TemplateError(ValueError):
    """A malformed URI template."""


class _Op:
    """One row of RFC 6570 Appendix A's table."""

    __slots__ = ("char", "first", "sep", "named", "ifemp", "reserved")

    def __init__(self, char: str, first: str, sep: str, named: bool, ifemp: str, reserved: bool) -> None:
        self.char = char
        self.first = first
        self.sep = sep
        self.named = named
        self.ifemp = ifemp
        self.reserved = reserved


_OPS = {
    op.char: op
    for op in (
        _Op("", "", ",", False, "", False),
        _Op("+", "", ",", False, "", True),
        _Op(".", ".", ".", False, "", False),
        _Op("/", "/", "/", False, "", False),
        _Op(";", ";", ";", True, "", False),
        _Op("?", "?", "&", True, "=", False),
        _Op("&", "&", "&", True, "=", False),
        _Op("#", "#", ",", False, "", True),
    )
}


class _Var:
    __slots__ = ("name", "prefix", "explode")

    def __init__(self, name: str, prefix: int | None, explode: bool) -> None:
        self.name = name
        self.prefix = prefix
        self.explode = explode


class _Expr:
    __slots__ = ("op", "vars")

    def __init__(self, op: _Op, vars: list[_Var]) -> None:
        self.op = op
        self.vars = vars


# What a regex group captured, and how to read it.
_ONE, _LIST, _NAMED = 0, 1, 2


class UriTemplate:
    """A parsed RFC 6570 URI template: `expand` values into a URI, `match` a URI back.

    >>> t = UriTemplate("file:///logs/{name}{?lines}")
    >>> t.expand({"name": "app.log", "lines": 10})
    'file:///logs/app.log?lines=10'
    >>> t.match("file:///logs/app.log?lines=10")
    {'name': 'app.log', 'lines': '10'}
    """

    __slots__ = ("template", "variables", "max_uri_length", "_parts", "_regex", "_groups", "_pool", "_assoc")

    def __init__(self, template: str) -> None:
        if type(template) is not str:
            raise TemplateError("a URI template must be a string")
        if len(template) > MAX_TEMPLATE_LENGTH:
            raise TemplateError(f"the URI template is longer than {MAX_TEMPLATE_LENGTH} characters")
        self.template = template
        self._parts: list[str | _Expr] = _parse(template)
        names: dict[str, None] = {}
        for part in self._parts:
            if type(part) is _Expr:
                for var in part.vars:
                    names[var.name] = None
        #: The variable names, in order of first appearance.
        self.variables: tuple[str, ...] = tuple(names)
        self._compile()
        ambiguous = _ambiguous_values(self._parts)
        #: Longest URI `match` considers (module docstring: a bound on backtracking).
        self.max_uri_length = MAX_URI_LENGTH
        if ambiguous:
            power = ambiguous + 1
            bound = int((MATCH_BUDGET * math.factorial(power)) ** (1 / power))
            self.max_uri_length = min(MAX_URI_LENGTH, bound)

    @property
    def is_literal(self) -> bool:
        """Whether the template has no expressions (it names exactly one URI)."""
        return not self.variables

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    def __str__(self) -> str:
        return self.template

    def __eq__(self, other: object) -> bool:
        return type(other) is UriTemplate and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    # -- expansion (RFC 6570 section 3) ---------------------------------------

    def expand(self, values: Mapping[str, Any]) -> str:
        """The URI for ``values``: str/int/float/bool scalars, lists, or dicts (pairs).

        A variable that is missing, None, or an empty list or dict is undefined
        and left out, as the RFC says.
        """
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
            else:
                out.append(_expand(part, values))
        return "".join(out)

    # -- matching --------------------------------------------------------------

    def _compile(self) -> None:
        pattern: list[str] = []
        groups: list[tuple[str, int, _Op, _Var | None]] = []
        pool: dict[str, _Var] = {}
        for part in self._parts:
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            expr = part
            op = expr.op
            if op.named:
                group = f"g{len(groups)}"
                groups.append((group, _NAMED, op, None))
                for var in expr.vars:
                    pool[var.name] = var
                rest = "[^/?#]*" if op.char == ";" else "[^#]*"
                pattern.append(f"(?:{re.escape(op.first)}(?P<{group}>{rest}))?")
                continue
            single = len(expr.vars) == 1
            pieces: list[str] = []
            for var in expr.vars:
                group = f"g{len(groups)}"
                groups.append((group, _LIST if var.explode else _ONE, op, var))
                pieces.append(f"(?P<{group}>{_value_pattern(op, var, single)})")
            if op.char in ("", "+"):
                pattern.append(",".join(pieces))
            elif op.char == "#":
                tail = "".join(f"(?:,{p})?" for p in pieces[1:])
                pattern.append(f"(?:\\#{pieces[0]}{tail})?")
            else:  # "." and "/": each value its own optional part
                first = re.escape(op.first)
                pattern.append("".join(f"(?:{first}{p})?" for p in pieces))
        self._regex = re.compile("".join(pattern), re.DOTALL)
        self._groups = groups
        self._pool = pool
        exploded = [v for v in pool.values() if v.explode]
        self._assoc = exploded[0].name if len(exploded) == 1 else None

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables' values if ``uri`` matches the whole template, else None."""
        if len(uri) > self.max_uri_length:
            return None
        m = self._regex.fullmatch(uri)
        if m is None:
            return None
        full: dict[str, Any] = {}
        prefixes: dict[str, list[str]] = {}
        try:
            for group, kind, op, var in self._groups:
                raw = m.group(group)
                if raw is None:
                    continue
                if kind == _NAMED:
                    if not self._named(raw, op, full, prefixes):
                        return None
                    continue
                assert var is not None
                if kind == _LIST:
                    value: Any = [_decode(item) for item in raw.split(op.sep)]
                else:
                    value = _decode(raw)
                if not _store(var, value, full, prefixes):
                    return None
        except UnicodeDecodeError:
            return None
        for name, seen in prefixes.items():
            longest = full.get(name)
            if longest is None:
                longest = max(seen, key=len)
                full[name] = longest
            if type(longest) is not str or not all(longest.startswith(p) for p in seen):
                return None
        return {name: full[name] for name in self.variables if name in full}

    def _named(self, raw: str, op: _Op, full: dict[str, Any], prefixes: dict[str, list[str]]) -> bool:
        """Read ``a=1&b=2`` (or ``a=1;b``) into ``full``; False if it does not fit."""
        lists: dict[str, list[str]] = {}
        pairs: dict[str, str] = {}
        for piece in raw.split(op.sep):
            if not piece:
                continue
            key, _, value_raw = piece.partition("=")
            value = _decode(value_raw)
            var = self._pool.get(key)
            if var is not None and var.explode:
                lists.setdefault(key, []).append(value)
            elif var is not None:
                if key in full or key in prefixes or key in lists:
                    return False  # a repeated parameter: ambiguous
                if not _store(var, value, full, prefixes):
                    return False
            elif self._assoc is not None:
                name = _decode(key)
                if name in pairs:
                    return False
                pairs[name] = value
            else:
                return False
        if pairs:
            assert self._assoc is not None
            if self._assoc in lists or self._assoc in full:
                return False
            full[self._assoc] = pairs
        for name, values in lists.items():
            if name in full and full[name] != values:
                return False
            full[name] = values
        return True


def _store(var: _Var, value: Any, full: dict[str, Any], prefixes: dict[str, list[str]]) -> bool:
    if var.prefix is not None:
        if len(value) > var.prefix:
            return False
        prefixes.setdefault(var.name, []).append(value)
        return True
    if var.name in full:
        return bool(full[var.name] == value)
    full[var.name] = value
    return True


def _follow(parts: list[str | _Expr], start: int) -> set[str] | None:
    """The characters the text after ``parts[:start]`` may begin with; None: any."""
    chars: set[str] = set()
    for part in parts[start:]:
        if isinstance(part, str):
            if part:
                chars.add(part[0])
                return chars
            continue
        first = part.op.first
        if not first:  # a required value comes next: it may begin with anything
            return None
        chars.add(first)  # an optional expression: it, or what follows it
    return chars


def _ambiguous_values(parts: list[str | _Expr]) -> int:
    """How many captured values may end at more than one place (module docstring)."""
    count = 0
    for i, part in enumerate(parts):
        if isinstance(part, str):
            continue
        expr = part
        op = expr.op
        after = _follow(parts, i + 1)
        if op.named:
            excluded = set("/?#") if op.char == ";" else {"#"}
            count += after is None or not after <= excluded
            continue
        single = len(expr.vars) == 1
        for j, var in enumerate(expr.vars):
            excluded = set(_atom_excluded(op, var, single))
            if var.explode:
                excluded.discard(op.sep)
            nxt: set[str] | None
            if j == len(expr.vars) - 1:
                nxt = after
            elif op.char in ("", "+"):
                nxt = {","}
            else:  # the next variables are optional: their separator, or what follows
                nxt = None if after is None else {op.sep, *after}
            count += nxt is None or not nxt <= excluded
    return count


def _decode(raw: str) -> str:
    if "%" not in raw:
        return raw
    from urllib.parse import unquote  # on first use: urllib.parse costs ~1.5 ms of cold start

    return unquote(raw, errors="strict")


def _atom_excluded(op: _Op, var: _Var, single: bool) -> str:
    """The characters one item of a non-named value cannot contain."""
    if op.reserved:
        return "," if var.explode or not single else ""
    excluded = "/?#[]"
    if op.char == ".":
        excluded += "."
    if var.explode or not single:
        excluded += ","
    return excluded


def _value_pattern(op: _Op, var: _Var, single: bool) -> str:
    """The regex for one non-named variable's value."""
    excluded = _atom_excluded(op, var, single)
    if not excluded:
        return ".+?"
    if op.reserved:
        atom = f"[^{re.escape(excluded)}]"
    else:
        atom = f"(?:%[0-9A-Fa-f]{{2}}|[^{re.escape(excluded)}%])"
    item = f"{atom}+?"
    if var.explode:
        sep = re.escape(op.sep)
        return f"{item}(?:{sep}{item})*?"
    return item


# -- parsing -------------------------------------------------------------------


def _parse(template: str) -> list[str | _Expr]:
    parts: list[str | _Expr] = []
    pos = 0
    while pos < len(template):
        start = template.find("{", pos)
        close = template.find("}", pos)
        if close != -1 and (start == -1 or close < start):
            raise TemplateError(f"unmatched '}}' at position {close} in {template!r}")
        if start == -1:
            parts.append(template[pos:])
            break
        if start > pos:
            parts.append(template[pos:start])
        end = template.find("}", start)
        if end == -1:
            raise TemplateError(f"unclosed '{{' at position {start} in {template!r}")
        body = template[start + 1 : end]
        if "{" in body:
            raise TemplateError(f"nested '{{' at position {start} in {template!r}")
        parts.append(_parse_expression(body, template))
        pos = end + 1
    return parts


def _parse_expression(body: str, template: str) -> _Expr:
    if not body:
        raise TemplateError(f"empty expression '{{}}' in {template!r}")
    op = _OPS.get(body[0])  # never the "" row: body[0] is one character
    if op is not None:
        body = body[1:]
    elif body[0] in _FUTURE:
        raise TemplateError(f"operator {body[0]!r} is reserved by RFC 6570 and not supported ({template!r})")
    else:
        op = _OPS[""]
    vars: list[_Var] = []
    for spec in body.split(","):
        explode = spec.endswith("*")
        if explode:
            spec = spec[:-1]
        prefix: int | None = None
        name, colon, length = spec.partition(":")
        if colon:
            if explode:
                raise TemplateError(f"{{{body}}}: a variable cannot have both a prefix and '*' ({template!r})")
            if not length.isdigit() or length.startswith("0") or int(length) > _MAX_PREFIX:
                raise TemplateError(f"{{{body}}}: the prefix length must be 1-{_MAX_PREFIX} ({template!r})")
            prefix = int(length)
        if not _VARNAME.match(name):
            raise TemplateError(f"{{{body}}}: {name!r} is not a valid variable name ({template!r})")
        vars.append(_Var(name, prefix, explode))
    return _Expr(op, vars)


# -- expansion -----------------------------------------------------------------


def _encode(value: str, reserved: bool) -> str:
    from urllib.parse import quote

    if not reserved:
        return quote(value, safe="")
    # U+R: keep reserved characters and existing percent-triplets, encode the rest.
    out: list[str] = []
    pos = 0
    for m in _TRIPLET.finditer(value):
        out.append(quote(value[pos : m.start()], safe=_RESERVED))
        out.append(m.group())
        pos = m.end()
    out.append(quote(value[pos:], safe=_RESERVED))
    return "".join(out)


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value if type(value) is str else str(value)


def _expand(expr: _Expr, values: Mapping[str, Any]) -> str:
    op = expr.op
    parts: list[str] = []
    for var in expr.vars:
        value = values.get(var.name)
        if value is None:
            continue
        if isinstance(value, Mapping):
            pairs = [(_scalar(k), _scalar(v)) for k, v in value.items() if v is not None]
            if not pairs:
                continue
            if var.explode:
                parts.append(
                    op.sep.join(
                        _encode(k, op.reserved) + ("=" + _encode(v, op.reserved) if v or not op.named else op.ifemp)
                        for k, v in pairs
                    )
                )
            else:
                joined = ",".join(f"{_encode(k, op.reserved)},{_encode(v, op.reserved)}" for k, v in pairs)
                parts.append(_named(var.name, joined, op) if op.named else joined)
            continue
        if isinstance(value, (list, tuple)):
            items = [_scalar(v) for v in value if v is not None]
            if not items:
                continue
            if var.explode:
                if op.named:
                    parts.append(op.sep.join(_named(var.name, _encode(v, op.reserved), op) for v in items))
                else:
                    parts.append(op.sep.join(_encode(v, op.reserved) for v in items))
            else:
                joined = ",".join(_encode(v, op.reserved) for v in items)
                parts.append(_named(var.name, joined, op) if op.named else joined)
            continue
        text = _scalar(value)
        if var.prefix is not None:
            text = text[: var.prefix]
        encoded = _encode(text, op.reserved)
        parts.append(_named(var.name, encoded, op) if op.named else encoded)
    if not parts:
        return ""
    return op.first + op.sep.join(parts)


def _named(name: str, encoded: str, op: _Op) -> str:
    return name + (op.ifemp if not encoded else "=" + encoded)
