"""Fuzz the URI template parser and matcher (wiremcp/server/_uri_template.py).

Invariants (the module's docstring; RFC 6570):

* any string either parses or raises `TemplateError`, nothing else;
* a parsed template expands any values of the documented kinds (str, int,
  float, bool, lists, dicts; missing or None) without raising, and `match`
  returns None or a dict for any string, without raising;
* `match` undoes `expand` for the values a resource URI carries: non-empty
  values of unreserved characters, in templates where a literal ends each
  value (``match(expand(v)) == v``), and matches what it expands itself to
  for any values.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from wiremcp.server._uri_template import TemplateError, UriTemplate

from ._budget import fuzz_settings, run_for

_names = st.sampled_from(["a", "b", "c", "x_1", "v%20w", "a.b"])
_template_chars = st.sampled_from(list("{}+#./;?&*:,=!@|%-_~ab09xyz/") + ["{a}", "{+a}", "{?a,b}", "{/c*}", ":3"])

templates = st.one_of(
    st.text(max_size=30),
    st.lists(_template_chars, max_size=16).map("".join),
)

_scalar_values = st.one_of(st.text(max_size=8), st.integers(-5, 10**6), st.floats(allow_nan=False), st.booleans())
_values = st.dictionaries(
    _names,
    st.one_of(
        st.none(),
        _scalar_values,
        st.lists(_scalar_values, max_size=3),
        st.dictionaries(st.text(max_size=4), _scalar_values, max_size=3),
    ),
    max_size=4,
)


@fuzz_settings(400)
@given(template=templates, values=_values, uri=st.text(max_size=40))
def fuzz_parse_expand_match(template: str, values: dict[str, Any], uri: str) -> None:
    try:
        parsed = UriTemplate(template)
    except TemplateError:
        return
    expanded = parsed.expand(values)
    assert isinstance(expanded, str)
    for candidate in (uri, expanded, template, expanded + uri):
        found = parsed.match(candidate)
        assert found is None or isinstance(found, dict)


# -- round trips ------------------------------------------------------------------

_value_text = st.text(alphabet="abcxyz019_", min_size=1, max_size=6)  # none of the separators
_SEPARATORS = ["/", "~", "/x/", "--"]


@st.composite
def round_trips(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A template whose every value is followed by a literal it cannot contain, and values."""
    parts = [draw(st.sampled_from(["note://", "file:///", "x:"]))]
    values: dict[str, Any] = {}
    count = draw(st.integers(1, 3))
    for i in range(count):
        op = draw(st.sampled_from(["", "+", ".", "/"]))
        name = f"v{i}"
        if draw(st.booleans()) and op in ("", "/"):
            parts.append("{" + op + name + ":3}")
            values[name] = draw(st.text(alphabet="abcxyz019", min_size=1, max_size=3))
        else:
            parts.append("{" + op + name + "}")
            values[name] = draw(_value_text).replace(".", "") or "a"
        parts.append(draw(st.sampled_from(_SEPARATORS)))
    named = draw(st.sampled_from(["", "{?q}", "{?q,r}", "{;q}", "{?q}{&r}"]))
    for var in ("q", "r"):
        if var in named and draw(st.booleans()):
            values[var] = draw(_value_text)
    parts.append(named)
    if draw(st.booleans()):
        parts.append("{#f}")
        values["f"] = draw(_value_text)
    return "".join(parts), values


@fuzz_settings(400)
@given(case=round_trips())
def fuzz_round_trip(case: tuple[str, dict[str, Any]]) -> None:
    template, values = case
    parsed = UriTemplate(template)
    uri = parsed.expand(values)
    assert parsed.match(uri) == values, (template, values, uri)


def test_parse_expand_match() -> None:
    run_for(fuzz_parse_expand_match)


def test_round_trip() -> None:
    run_for(fuzz_round_trip)
