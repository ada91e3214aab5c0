"""Rules and findings: what every check of ``wiremcp check`` returns (no I/O).

Rules it keeps:

* A `Rule` is declared once, at import of the module that checks it, with
  `rule()`; its ``id`` is unique (a second declaration raises) and stable
  (``--only``/``--skip`` and CI gates name it), lower-case words joined by
  ``-`` and prefixed by its group: ``wire-``, ``schema-``, ``host-``,
  ``security-``.
* A rule quotes the text it enforces (``quote``) and names where that text
  lives (``source``: a spec page and section, or an RFC), so a reader of a
  report never has to look it up.
* A `Finding` is one breach of one rule: a message saying what was seen,
  the subject it concerns (a tool's name, a URL, an envelope's method), and
  the envelopes that broke it, as sent and received (raw lines, in order).
* A check that could not run (the server crashed, the transport has no such
  probe) is not a finding of the rule it would have checked: it is a finding
  of ``check-not-run`` (info), naming the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Severity", "Group", "Rule", "Finding", "RULES", "rule", "SEVERITY_ORDER", "CHECK_NOT_RUN"]

Severity = Literal["error", "warning", "info"]
Group = Literal["wire", "schema", "host", "security", "check"]

#: most severe first: a report groups and sorts by it
SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "info": 2}

_ID = re.compile(r"^(wire|schema|host|security|check)(-[a-z0-9]+)+$")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule a server is checked against."""

    id: str
    group: Group
    severity: Severity
    title: str  # a short sentence: "A notification gets no reply"
    quote: str  # the words of the spec (or RFC) the rule enforces
    source: str  # where they are: "basic/index.mdx, Notifications"


@dataclass(frozen=True, slots=True)
class Finding:
    """One breach of `rule`, seen on `subject`."""

    rule: Rule
    message: str
    subject: str = ""
    envelopes: tuple[str, ...] = field(default=())  # raw lines, ">>> " sent / "<<< " received


#: every rule declared so far, by id
RULES: dict[str, Rule] = {}


def rule(id: str, group: Group, severity: Severity, title: str, quote: str, source: str) -> Rule:
    """Declare a rule (once per id) and return it."""
    if not _ID.match(id) or not id.startswith(group + "-"):
        raise ValueError(f"rule id {id!r}: lower-case words joined by '-', starting with its group {group!r}")
    if id in RULES:
        raise ValueError(f"rule {id!r} is declared twice")
    declared = RULES[id] = Rule(id, group, severity, title, quote, source)
    return declared


CHECK_NOT_RUN = rule(
    "check-not-run", "check", "info", "A check could not run",
    "(wiremcp check) a check that could not run is reported, never counted as passed", "docs/check.md",
)
