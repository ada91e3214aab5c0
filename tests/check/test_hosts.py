"""The host compatibility rules of wiremcp check (cli/_check/_hosts.py): the table's proofs, the checks, and end to end.

Each fact of the host table names the test that proves it; here every such
test is found in its file (a function of that name), and a fact no test
proves names the vendor's document instead. The end-to-end tests run
``wiremcp check`` on tests/check/fixtures/bad_server.py with the defects
that break each rule (``old-version``, ``modern-only``, ``long-tool-name``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from test_check_wire import BAD, ROOT, check, report

from _servers import free_port, serving_http
from wiremcp.cli._check._hosts import FEATURE_RULES, HOSTS, TRANSPORT_RULES, Fact, check_hosts

ERA = ["host-claude-code-era", "host-claude-desktop-era", "host-cursor-era", "host-vscode-era"]
FEATURES = sorted(r.id for r in FEATURE_RULES.values())
TRANSPORTS = sorted(r.id for r in TRANSPORT_RULES.values())
INIT = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "notes", "version": "1"}}


def _facts() -> list[tuple[str, str, Fact]]:
    return [(host.id, field, getattr(host, field)) for host in HOSTS
            for field in ("modern", "legacy", "transports", "tool_prefix", "features")]


def _defined(path: Path) -> set[str]:
    return {node.name for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("host, field, fact", _facts(), ids=[f"{h}-{f}" for h, f, _ in _facts()])
def test_each_fact_is_proved_by_a_test_or_names_the_vendor_document(host: str, field: str, fact: Fact) -> None:
    assert fact.tested or fact.documented, (host, field)
    if fact.tested:
        for ref in fact.tested.split("; "):
            path, _, name = ref.partition("::")
            assert (ROOT / path).is_file(), ref
            assert name.startswith("test_") and name in _defined(ROOT / path), f"{ref}: no such test"
    else:
        assert fact.proof.startswith("documented, not tested here: ") and any(
            site in fact.documented for site in ("modelcontextprotocol.io", "claude.com", "visualstudio.com", "cursor.com")
        ), fact.documented
    for ref in fact.documented.split("; "):
        if ref.startswith("tests/"):  # a document may cite a test of ours too (what wiremcp install writes)
            path, _, name = ref.partition("::")
            assert name in _defined(ROOT / path), ref


def test_only_claude_code_is_tested_here_and_its_facts_all_are() -> None:
    tested = {host.id for host in HOSTS if any(getattr(host, f).tested for f in ("modern", "transports", "tool_prefix"))}
    assert tested == {"claude-code"}
    claude_code = next(h for h in HOSTS if h.id == "claude-code")
    assert all(getattr(claude_code, f).tested for f in ("modern", "legacy", "transports", "tool_prefix", "features"))
    # a host the tests cannot run says why, and the docs say it with its facts
    page = (ROOT / "docs" / "check.md").read_text()
    for host in HOSTS:
        assert bool(host.untested) == (host.id not in tested), host.id
        if host.untested:
            assert f"- {host.name} (not tested here: {host.untested}):" in page, host.name


def test_every_fact_a_run_can_hold_a_server_to_has_a_rule_per_host() -> None:
    assert {r.id for r in TRANSPORT_RULES.values()} == {f"host-{h.id}-transport" for h in HOSTS}
    assert {r.id for r in FEATURE_RULES.values()} == {f"host-{h.id}-features" for h in HOSTS}
    assert all(r.severity == "info" for r in TRANSPORT_RULES.values())
    assert all(r.severity == "warning" for r in FEATURE_RULES.values())
    page = (ROOT / "docs" / "check.md").read_text()
    assert all(f"`{rid}`" in page for rid in ERA + FEATURES + TRANSPORTS)


def test_a_url_is_a_transport_only_claude_desktops_configuration_lacks() -> None:
    assert check_hosts(spoken=["legacy"], initialize=INIT, tools=[], transport="stdio") == []
    got = check_hosts(spoken=["legacy"], initialize=INIT, tools=[], transport="http")
    assert ids(got) == ["host-claude-desktop-transport"] and got[0].rule.severity == "info"
    assert "Settings > Connectors" in got[0].message


def test_a_server_that_offers_nothing_a_host_uses_is_named() -> None:
    def run(listed: dict) -> list[str]:  # type: ignore[type-arg]
        return ids(check_hosts(spoken=["legacy"], initialize=INIT, tools=[], listed=listed))

    assert run({"tools": [{"name": "search"}]}) == []
    assert run({"tools": [], "prompts": []}) == FEATURES  # declared, but nothing listed
    # resources only: the hosts documented to use them take it; Claude Code was seen using tools only
    assert run({"resources": [], "resourceTemplates": [{"uriTemplate": "memo://{id}", "name": "memo"}]}) == ["host-claude-code-features"]
    assert run({"prompts": [{"name": "greet"}]}) == ["host-claude-code-features"]


def ids(findings: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(f.rule.id for f in findings)


def test_a_server_of_both_eras_fits_every_host() -> None:
    assert check_hosts(spoken=["modern", "legacy"], initialize=INIT, tools=[{"name": "search"}]) == []


def test_a_modern_only_server_fits_only_the_host_that_speaks_2026_07_28() -> None:
    got = check_hosts(spoken=["modern"], initialize=None, tools=[])
    assert ids(got) == ERA[1:]
    assert "does not answer initialize" in got[0].message and "not known to speak 2026-07-28" in got[0].message


def test_an_initialize_answered_with_a_version_no_host_asks_for_fits_none() -> None:
    got = check_hosts(spoken=["legacy"], initialize={**INIT, "protocolVersion": "2024-11-05"}, tools=[])
    assert ids(got) == ERA and all("'2024-11-05'" in f.message for f in got)
    # the same server speaking 2026-07-28 too still reaches Claude Code
    assert ids(check_hosts(spoken=["modern", "legacy"], initialize={**INIT, "protocolVersion": "2024-11-05"}, tools=[])) == ERA[1:]


def test_a_tool_name_with_claude_codes_prefix_over_64_is_named() -> None:
    fits = "t" * (64 - len("mcp__notes__"))
    got = check_hosts(spoken=["legacy"], initialize=INIT, tools=[{"name": fits}, {"name": fits + "x"}, {"name": "y" * 65}])
    assert [(f.rule.id, f.subject) for f in got] == [("host-tool-name-prefix-length", f"tool {fits}x")]
    assert "mcp__notes__" in got[0].message and "(65 characters, over 64)" in got[0].message
    assert "serverInfo" in got[0].message
    named = check_hosts(spoken=["legacy"], initialize=INIT, tools=[{"name": fits}], server="notes-server")
    assert [f.subject for f in named] == [f"tool {fits}"] and "'notes-server'" in named[0].message


@pytest.mark.slow
@pytest.mark.parametrize(
    "defects, expected",
    [
        ([], []),
        (["old-version"], ERA[1:]),  # it speaks 2026-07-28 too, which Claude Code speaks
        (["old-version", "legacy-only"], ERA),
        (["modern-only"], ERA[1:]),
        (["long-tool-name"], ["host-tool-name-prefix-length"]),
        (["no-tools"], FEATURES),
    ],
)
def test_check_names_what_a_host_cannot_load(defects: list[str], expected: list[str]) -> None:
    flags = [word for d in defects for word in ("--defect", d)]
    rules = ERA + FEATURES + TRANSPORTS + ["host-tool-name-prefix-length"]
    done = check("--json", "--only", ",".join(rules), "--", sys.executable, BAD, *flags)
    out = report(done)
    assert sorted(f["rule"] for f in out["findings"]) == expected, out["findings"]
    assert done.returncode == 0  # host findings are warnings
    assert all(f["severity"] == "warning" for f in out["findings"])


@pytest.mark.slow
def test_a_url_target_gets_claude_desktops_transport_note() -> None:
    port = free_port()
    with serving_http([sys.executable, BAD, "--http", str(port)], port) as url:
        done = check("--json", "--timeout", "3", "--only", ",".join(TRANSPORTS + FEATURES), url)
    out = report(done)
    found = [f["rule"] for f in out["findings"] if f["rule"] != "check-not-run"]  # the fixture mints no session id to judge
    assert done.returncode == 0 and found == ["host-claude-desktop-transport"], out["findings"]
    assert sorted(out["rules"]) == sorted(TRANSPORTS + FEATURES)


def test_the_table_is_shown_in_the_docs() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "check.md").read_text()
    for host in HOSTS:
        assert f"| {host.name} |" in page, host.name


@pytest.mark.slow
def test_the_server_name_is_the_one_install_gives_unless_told() -> None:
    everything = str(ROOT / "examples" / "everything.py")
    only = ("--json", "--only", "host-tool-name-prefix-length")
    assert report(check(*only, everything))["findings"] == []  # mcp__everything__...: within 64
    named = report(check(*only, "--server-name", "wiremcp-everything", everything))["findings"]
    assert {f["subject"] for f in named} == {
        "tool test_input_required_result_request_state", "tool test_input_required_result_multiple_inputs",
        "tool test_input_required_result_tampered_state",
    }
    assert all("mcp__wiremcp-everything__" in f["message"] for f in named)
