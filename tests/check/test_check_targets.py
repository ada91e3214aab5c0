"""``wiremcp check`` on real servers: wiremcp's examples and the official SDK's (stdio and HTTP), the fixture over HTTP,
and the reports it writes (JUnit parsed with xml.etree, SARIF against the structure of SARIF 2.1.0)."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import orjson
import pytest
from _servers import free_port, serving_http
from test_check_wire import BAD, DESKTOP_URL, ROOT, check, report

HERE = Path(__file__).resolve().parent
OFFICIAL = str(HERE / "fixtures" / "official_server.py")
#: The official SDK's interpreter: bench/.venv-official, or another venv with mcp 2.x named by WIREMCP_OFFICIAL_PYTHON.
OFFICIAL_PYTHON = Path(os.environ.get("WIREMCP_OFFICIAL_PYTHON") or ROOT / "bench" / ".venv-official" / "bin" / "python")
needs_official = pytest.mark.skipif(not OFFICIAL_PYTHON.exists(), reason="bench/.venv-official is not set up (bash bench/setup_official.sh)")

pytestmark = pytest.mark.slow

#: What the official mcp 2.x server really breaks (docs/check.md, "Known findings"): it drops, unanswered,
#: a request whose id is not a string or integer, and a line that is not valid JSON or not a valid message
#: (stdio: the SDK logs them and reads on); it answers a bad "jsonrpc" and a batch with -32602, not -32600 (HTTP).
OFFICIAL_STDIO = {
    "wire-rejects-bad-id", "wire-rejects-bad-jsonrpc", "wire-rejects-bad-params", "wire-rejects-batch",
    "wire-rejects-malformed-json", "wire-survives-deep-nesting",
}
OFFICIAL_HTTP = {"wire-rejects-bad-id", "wire-rejects-bad-jsonrpc", "wire-rejects-batch"}
#: the official server's tool is called (it is not marked read-only), so its result is judged against its outputSchema
OFFICIAL_CALL = ("--call", 'add={"a": 1, "b": 2}')
OUTPUT_RULES = {"schema-output-conforms", "schema-output-present", "schema-output-text"}


@pytest.mark.parametrize("example", ["echo.py", "everything.py"])
def test_wiremcp_examples_pass_clean_over_stdio(example: str) -> None:
    done = check("--json", str(ROOT / "examples" / example))
    out = report(done)
    assert done.returncode == 0 and out["findings"] == [], out["findings"]
    assert out["eras"] == ["modern", "legacy"] and out["transport"] == "stdio"


def test_a_wiremcp_example_passes_clean_over_http() -> None:
    port = free_port()
    args = [sys.executable, "-m", "wiremcp", "run", str(ROOT / "examples" / "echo.py"), "--http", "--port", str(port)]
    with serving_http(args, port, {"PYTHONPATH": str(ROOT / "src")}) as url:
        # a tools/call over modern HTTP carries Mcp-Name (a 2026-07-28 server refuses one without it)
        done = check("--json", "--call", 'echo={"text": "hi"}', url)
    out = report(done)
    assert done.returncode == 0 and {f["rule"] for f in out["findings"]} == DESKTOP_URL, out["findings"]
    assert out["eras"] == ["modern", "legacy"] and out["transport"] == "http"
    assert "schema-output-text" in out["rules"]


def test_the_fixture_over_http_passes_clean_and_fails_with_a_defect() -> None:
    port = free_port()
    with serving_http([sys.executable, BAD, "--http", str(port)], port) as url:
        clean = check("--json", "--timeout", "3", url)
    counts = report(clean)["counts"]  # notes (a check not run, e.g. no session ids to judge) are no failure
    assert clean.returncode == 0 and counts["error"] == counts["warning"] == 0, report(clean)["findings"]
    port = free_port()
    with serving_http([sys.executable, BAD, "--http", str(port), "--defect", "notification-reply"], port) as url:
        done = check("--json", "--timeout", "3", "--only", "wire-notification-no-reply", url)
    out = report(done)
    assert done.returncode == 1
    messages = [f["message"] for f in out["findings"] if f["rule"] == "wire-notification-no-reply"]
    assert any("expected 202 and no body" in m for m in messages), messages


@needs_official
@pytest.mark.timeout(600)  # a whole check of a foreign server outlasts the default 120 s on a loaded machine
def test_the_official_sdk_server_over_stdio_breaks_only_the_rules_the_docs_list() -> None:
    done = check("--json", *OFFICIAL_CALL, "--", str(OFFICIAL_PYTHON), OFFICIAL, "stdio")
    out = report(done)
    assert {f["rule"] for f in out["findings"]} == OFFICIAL_STDIO, out["findings"]
    assert out["eras"] == ["modern", "legacy"] and OUTPUT_RULES <= set(out["rules"])


@needs_official
@pytest.mark.timeout(600)  # a whole check of a foreign server outlasts the default 120 s on a loaded machine
def test_the_official_sdk_server_over_http_breaks_only_the_rules_the_docs_list() -> None:
    port = free_port()
    with serving_http([str(OFFICIAL_PYTHON), OFFICIAL, "http", str(port)], port) as url:
        done = check("--json", *OFFICIAL_CALL, url)
    out = report(done)
    assert {f["rule"] for f in out["findings"]} == OFFICIAL_HTTP | DESKTOP_URL, out["findings"]
    assert out["eras"] == ["modern", "legacy"] and out["transport"] == "http"
    # every rule of an HTTP target runs but those of --auth and --pin: the tour, the tool's result, session ids, CORS
    ran = set(out["rules"])
    assert OUTPUT_RULES | {"security-host-check", "security-origin-check", "security-session-id-strength",
                           "security-cors-reflects-origin", "wire-notification-no-reply"} <= ran, sorted(ran)
    # what the docs' table says it does: no reply (202) to a bad id; -32602 to a bad "jsonrpc" and to a batch
    by_rule = {rule: {f["message"] for f in out["findings"] if f["rule"] == rule} for rule in OFFICIAL_HTTP}
    assert all(m.startswith("no reply") for m in by_rule["wire-rejects-bad-id"]), by_rule
    assert by_rule["wire-rejects-bad-jsonrpc"] == by_rule["wire-rejects-batch"] == {"error -32602, expected -32600"}, by_rule


def test_the_junit_and_sarif_reports(tmp_path: Path) -> None:
    junit, sarif = tmp_path / "check.xml", tmp_path / "check.sarif"
    args = ("--junit", str(junit), "--sarif", str(sarif), "--era", "legacy", "--timeout", "3")
    done = check(*args, "--only", "wire-rejects-batch,wire-method-not-found", "--", sys.executable, BAD, "--defect", "batch-processed")
    assert done.returncode == 1
    assert "ERROR wire-rejects-batch" in done.stdout and ">>> [" in done.stdout and "spec: " in done.stdout

    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"wire-rejects-batch", "wire-method-not-found"} and suite.get("failures") == "1"
    assert cases["wire-rejects-batch"].find("failure") is not None and cases["wire-method-not-found"].find("failure") is None

    log = orjson.loads(sarif.read_bytes())
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json") and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] and all({"id", "shortDescription", "fullDescription"} <= set(r) for r in driver["rules"])
    ids = [r["id"] for r in driver["rules"]]
    assert ids == ["wire-method-not-found", "wire-rejects-batch"]
    assert run["results"], run
    for result in run["results"]:
        assert result["level"] in ("error", "warning", "note", "none") and result["message"]["text"]
        assert ids[result["ruleIndex"]] == result["ruleId"] == "wire-rejects-batch"
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]


def test_the_cli_loads_no_module_of_check_unless_check_runs() -> None:
    import subprocess

    probe = "import sys; from wiremcp.cli import _commands; print(any('_check' in m for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={"PYTHONPATH": str(ROOT / "src")})
    assert done.stdout.strip() == "False", done.stderr
