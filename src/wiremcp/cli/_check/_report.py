"""The reports of ``wiremcp check``: for people, JSON, JUnit XML and SARIF 2.1.0 (no I/O but the stream given).

* Human (`human`): the findings grouped by group (wire, schema, host,
  security, check), most severe first; each with its rule id, title,
  message, the quoted spec and where it is, then the envelopes (``>>>``
  sent, ``<<<`` received); a last line counts errors, warnings and rules.
* `as_json`: one object: target, transport, eras, rules run, findings
  (rule, severity, message, subject, envelopes).
* `junit`: a testsuite of one testcase per rule run; a rule with findings
  is a ``failure`` (error) or carries them in ``system-out`` (warning,
  info), so a CI view shows each rule passed or failed.
* `sarif`: SARIF 2.1.0: every rule run in ``tool.driver.rules`` (id, name,
  short and full description, help), a result per finding (``ruleId``,
  ``ruleIndex``, ``level``, ``message.text``) located at the target.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, TextIO

from .. import _output
from ... import __version__
from ._findings import SEVERITY_ORDER, Finding, Rule
from ._runner import Report

__all__ = ["human", "as_json", "junit", "sarif", "counts"]

_GROUPS = ("wire", "schema", "host", "security", "check")
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def counts(report: Report) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for found in report.findings:
        out[found.rule.severity] += 1
    return out


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (_GROUPS.index(f.rule.group), SEVERITY_ORDER[f.rule.severity], f.rule.id))


def human(report: Report, out: TextIO, style: _output.Style) -> None:
    """Grouped by group, then by rule (most severe first): the rule and its quote once, then each finding."""
    colour = {"error": "31", "warning": "33", "info": "2"}
    print(style("1", f"wiremcp check {report.target}") + f"  ({report.transport}; eras: {', '.join(report.eras) or 'none'})", file=out)
    group = rule_id = ""
    for found in _sorted(report.findings):
        checked = found.rule
        if checked.group != group:
            group = checked.group
            print("\n" + style("1", f"== {group} =="), file=out)
        if checked.id != rule_id:
            rule_id = checked.id
            print("\n" + style(colour[checked.severity], f"{checked.severity.upper()} {checked.id}") + f": {checked.title}", file=out)
            print(style("2", f'  spec: "{checked.quote}" ({checked.source})'), file=out)
        subject = f"[{found.subject}] " if found.subject else ""
        print(f"  - {subject}{found.message}", file=out)
        for line in found.envelopes[-6:]:
            print(style("2", "      " + (line if len(line) <= 160 else line[:157] + "...")), file=out)
    tally = counts(report)
    failed = {f.rule.id for f in report.findings}
    passed = len([r for r in report.ran if r not in failed])
    print(
        f"\n{tally['error']} error(s), {tally['warning']} warning(s), {tally['info']} note(s); "
        f"{passed} of {len(report.ran)} rules passed",
        file=out,
    )


def _finding_json(found: Finding) -> dict[str, Any]:
    return {
        "rule": found.rule.id, "group": found.rule.group, "severity": found.rule.severity, "title": found.rule.title,
        "message": found.message, "subject": found.subject, "quote": found.rule.quote, "source": found.rule.source,
        "envelopes": list(found.envelopes),
    }


def as_json(report: Report) -> dict[str, Any]:
    return {
        "target": report.target, "transport": report.transport, "eras": report.eras, "counts": counts(report),
        "rules": sorted(report.ran), "findings": [_finding_json(f) for f in _sorted(report.findings)],
    }


def junit(report: Report) -> bytes:
    by_rule: dict[str, list[Finding]] = {}
    for found in report.findings:
        by_rule.setdefault(found.rule.id, []).append(found)
    rules = dict(report.ran)
    rules.update({f.rule.id: f.rule for f in report.findings})
    failures = sum(1 for rid in by_rule if rules[rid].severity == "error")
    suite = ET.Element("testsuite", name="wiremcp check", tests=str(len(rules)), failures=str(failures), errors="0")
    suite.set("hostname", report.target[:200])
    for rid in sorted(rules):
        checked = rules[rid]
        case = ET.SubElement(suite, "testcase", classname=f"wiremcp.check.{checked.group}", name=rid)
        seen = by_rule.get(rid, [])
        text = "\n\n".join(_plain(f) for f in seen)
        if seen and checked.severity == "error":
            failure = ET.SubElement(case, "failure", message=seen[0].message[:500], type=checked.severity)
            failure.text = text
        elif seen:
            ET.SubElement(case, "system-out").text = text
    suites = ET.Element("testsuites")
    suites.append(suite)
    data: bytes = ET.tostring(suites, encoding="utf-8", xml_declaration=True)
    return data


def _plain(found: Finding) -> str:
    return "\n".join([f"{found.rule.id}: {found.message}", f'spec: "{found.rule.quote}" ({found.rule.source})', *found.envelopes])


def _sarif_rule(checked: Rule) -> dict[str, Any]:
    return {
        "id": checked.id,
        "name": "".join(word.capitalize() for word in checked.id.split("-")),
        "shortDescription": {"text": checked.title},
        "fullDescription": {"text": f"{checked.quote} ({checked.source})"},
        "help": {"text": f"{checked.title}. The spec: \"{checked.quote}\" ({checked.source})"},
        "defaultConfiguration": {"level": _LEVEL[checked.severity]},
        "properties": {"group": checked.group},
    }


def sarif(report: Report) -> dict[str, Any]:
    rules = dict(report.ran)
    rules.update({f.rule.id: f.rule for f in report.findings})
    order = sorted(rules)
    index = {rid: i for i, rid in enumerate(order)}
    location = report.target if "://" in report.target else "mcp-server"
    results = [
        {
            "ruleId": f.rule.id,
            "ruleIndex": index[f.rule.id],
            "level": _LEVEL[f.rule.severity],
            "message": {"text": f"{f.message}" + (f" [{f.subject}]" if f.subject else "")},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": location}}}],
            "properties": {"envelopes": list(f.envelopes)},
        }
        for f in _sorted(report.findings)
    ]
    run = {
        "tool": {
            "driver": {
                "name": "wiremcp check", "version": __version__,
                "rules": [_sarif_rule(rules[rid]) for rid in order],
            }
        },
        "results": results,
        "properties": {"target": report.target, "transport": report.transport, "eras": report.eras},
    }
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run],
    }
