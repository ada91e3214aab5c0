"""The rules of ``wiremcp check`` that come from the wire checker: one ``wire-<code>`` rule per code it reports."""

from __future__ import annotations

import re
from pathlib import Path

from wiremcp.cli._check import _runner  # noqa: F401  (declares every wire rule)
from wiremcp.cli._check._findings import RULES
from wiremcp.cli._check._wire_rules import CHECKER_RULES, CODES

SOURCE = Path(__file__).resolve().parents[2] / "src" / "wiremcp" / "cli" / "_wirecheck.py"


def test_every_code_of_the_wire_checker_is_a_rule() -> None:
    written = set(re.findall(r'problem\(\s*"([a-z-]+)"', SOURCE.read_text()))
    assert written == set(CODES)
    assert all(RULES[f"wire-{code}"] is CHECKER_RULES[code] for code in written)


def test_every_rule_quotes_its_source() -> None:
    for found in RULES.values():
        assert found.quote and found.source and found.title, found.id
