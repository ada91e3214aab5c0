"""``wiremcp check`` calls read-only tools (and those named by ``--call``) and judges their results against outputSchema.

The server is tests/check/fixtures_rules/results_server.py over stdio, run
by ``wiremcp check`` as a subprocess: ``status`` (read-only, no arguments)
breaks its outputSchema, ``lookup`` (read-only, requires ``key``) returns no
structuredContent, ``wipe`` (destructive) must never be called unasked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from test_check_wire import check, report

from wiremcp.cli._check._calls import parse_call, plan

pytestmark = pytest.mark.slow

SERVER = str(Path(__file__).resolve().parent / "fixtures_rules" / "results_server.py")
ONLY = ("--only", "schema-output-conforms,schema-output-present,schema-output-text")


def found(out: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f["rule"], f["subject"]) for f in out["findings"] if f["rule"] != "check-not-run")


def notes(out: dict[str, Any]) -> list[str]:
    return [f["message"] for f in out["findings"] if f["rule"] == "check-not-run"]


def test_a_read_only_tool_whose_result_breaks_its_output_schema_is_named() -> None:
    done = check("--json", *ONLY, "--", sys.executable, SERVER)
    out = report(done)
    assert done.returncode == 1, out
    assert found(out) == [("schema-output-conforms", "tool status")], out["findings"]
    conforms = next(f for f in out["findings"] if f["rule"] == "schema-output-conforms")
    assert any(line.startswith(">>> ") and '"tools/call"' in line for line in conforms["envelopes"]), conforms
    assert any('"state": 3' in line for line in conforms["envelopes"] if line.startswith("<<< "))
    # the read-only tool that needs arguments is named, with how to call it; the destructive one, whose
    # result would break its outputSchema too, is never called (no finding names it)
    assert notes(out) == ["schema-output-conforms: the read-only tool lookup needs arguments (key) and was not called; "
                          "give them with --call 'lookup={...}'"]


def test_call_names_a_tool_and_its_arguments() -> None:
    done = check("--json", *ONLY, "--call", 'lookup={"key": "a"}', "--call", "nothing", "--", sys.executable, SERVER)
    out = report(done)
    assert found(out) == [("schema-output-conforms", "tool status"), ("schema-output-present", "tool lookup")], out["findings"]
    assert notes(out) == ["schema-output-conforms: --call nothing: the server lists no such tool"]


def test_the_fixed_server_passes_and_its_rules_count_as_run() -> None:
    done = check("--json", *ONLY, "--call", 'lookup={"key": "a"}', "--", sys.executable, SERVER, "--fixed")
    out = report(done)
    assert done.returncode == 0 and out["findings"] == [], out["findings"]
    assert out["rules"] == ["schema-output-conforms", "schema-output-present", "schema-output-text"]


def test_with_no_tool_called_the_result_rules_are_not_counted_as_passed() -> None:
    done = check("--json", *ONLY, "--", sys.executable, SERVER.replace("results_server", "poisoned_server"))
    out = report(done)
    assert out["rules"] == [], out  # poisoned_server has no read-only tool: nothing was called, nothing passed


def test_call_arguments_are_a_json_object() -> None:
    assert parse_call("t") == ("t", {}) and parse_call('t={"a": 1}') == ("t", {"a": 1})
    for bad in ("t=[1]", "t={", "=1"):
        with pytest.raises(ValueError):
            parse_call(bad)
    done = check("--call", "t=[1]", "--", sys.executable, SERVER)
    assert done.returncode == 2 and "JSON object" in done.stderr


def test_the_plan_calls_read_only_tools_and_those_named() -> None:
    tools: list[dict[str, Any]] = [
        {"name": "r", "annotations": {"readOnlyHint": True}},
        {"name": "w", "annotations": {"readOnlyHint": False}},
        {"name": "n"},
        {"name": "req", "annotations": {"readOnlyHint": True}, "inputSchema": {"type": "object", "required": ["q"]}},
    ]
    planned, skipped = plan(tools, {"w": {"x": 1}})
    assert [(t["name"], a) for t, a in planned] == [("r", {}), ("w", {"x": 1})]
    assert [f.subject for f in skipped] == ["tool req"]
