"""``WWW-Authenticate`` parsing (RFC 9110 section 11.6.1, RFC 6750 section 3, RFC 9728 section 5.1).

Rules it keeps:

* a header value may hold several challenges separated by commas; each is a
  scheme (case-insensitive, returned lowercased) followed by either a
  token68 or comma-separated ``name=value`` parameters, where the value is a
  token or a quoted string (backslash escapes undone);
* parameter names are case-insensitive (returned lowercased); when a name
  repeats in one challenge the first value wins;
* anything unparsable is skipped, never raised: a malformed header from a
  server must not crash the client, it only yields fewer parameters;
* `bearer_challenge` picks the challenge the client acts on: ``DPoP`` or
  ``Bearer``, in the order the server listed them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Challenge", "parse_www_authenticate", "bearer_challenge"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header (RFC 9110 section 11.6.1): its scheme, its auth-params and its token68."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    @property
    def scope(self) -> list[str] | None:
        """The ``scope`` parameter split on spaces, or None when absent."""
        value = self.params.get("scope")
        return None if value is None else value.split()

    @property
    def resource_metadata(self) -> str | None:
        """The ``resource_metadata`` parameter: the URL of the Protected Resource Metadata (RFC 9728), or None."""
        return self.params.get("resource_metadata")

    @property
    def error(self) -> str | None:
        """The ``error`` parameter (RFC 6750: ``invalid_token``, ``insufficient_scope``, ...), or None."""
        return self.params.get("error")


def _skip(value: str, i: int, chars: str) -> int:
    while i < len(value) and value[i] in chars:
        i += 1
    return i


def _quoted(value: str, i: int) -> tuple[str, int]:
    """The quoted string starting at ``value[i] == '"'``; returns (text, index after it)."""
    out: list[str] = []
    i += 1
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value):
            out.append(value[i + 1])
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    return "".join(out), i  # unterminated: take what there is


def parse_www_authenticate(value: str) -> list[Challenge]:
    """The challenges of a ``WWW-Authenticate`` header value, in order (RFC 9110 section 11.6.1); unknown schemes are kept."""
    challenges: list[Challenge] = []
    current: Challenge | None = None
    i, n = 0, len(value)
    while i < n:
        i = _skip(value, i, " \t,")
        if i >= n:
            break
        m = _TOKEN.match(value, i)
        if m is None:
            i += 1  # stray character: skip it
            continue
        name, j = m.group(), m.end()
        k = _skip(value, j, " \t")
        if current is not None and k < n and value[k] == "=":
            v = _skip(value, k + 1, " \t")
            if v < n and value[v] == '"':
                text, i = _quoted(value, v)
            else:
                t = _TOKEN.match(value, v)
                if t is None or (v < n and value[v] == "="):
                    # "abc==" after a scheme: a token68 with padding
                    t68 = _TOKEN68.match(value, i)
                    if t68 is not None and not current.params and current.token68 is None:
                        current.token68 = t68.group()
                        i = t68.end()
                    else:
                        i = v + 1
                    continue
                text, i = t.group(), t.end()
            current.params.setdefault(name.lower(), text)
            continue
        # a new challenge: scheme, then maybe a token68
        current = Challenge(name.lower())
        challenges.append(current)
        i = _skip(value, j, " \t")
        t68 = _TOKEN68.match(value, i)
        if t68 is not None and i > j:
            after = _skip(value, t68.end(), " \t")
            word = _TOKEN.match(value, i)
            is_param = word is not None and _skip(value, word.end(), " \t") < n and value[_skip(value, word.end(), " \t")] == "="
            if (after >= n or value[after] == ",") and not (is_param and not t68.group().endswith("=")):
                current.token68 = t68.group()
                i = t68.end()
    return challenges


def bearer_challenge(value: str | None) -> Challenge | None:
    """The first ``DPoP`` or ``Bearer`` challenge in a header value, or None."""
    if not value:
        return None
    for challenge in parse_www_authenticate(value):
        if challenge.scheme in ("bearer", "dpop"):
            return challenge
    return None
