"""``wiremcp check`` run for real (a subprocess) against the fixture servers of tests/check/fixtures.

Every wire probe has a defect of ``bad_server.py`` that fails it; the same
server without the defect passes (the clean run checks every rule at once).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BAD = str(HERE / "fixtures" / "bad_server.py")

pytestmark = pytest.mark.slow


#: the note every URL target gets: Claude Desktop's configuration file takes no URL (host-claude-desktop-transport)
DESKTOP_URL = {"host-claude-desktop-transport"}


def check(*args: str, timeout: float = 240, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``wiremcp check ARGS`` in a subprocess (``env``: variables on top of a bare environment)."""
    bare = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "check", *args], capture_output=True, text=True, timeout=timeout, env={**bare, **(env or {})},
    )


def report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.stdout, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    return out


#: defect -> the rule it breaks (and the era to check it in, to keep the run short)
DEFECTS: dict[str, tuple[str, str]] = {
    "bad-jsonrpc-accepted": ("wire-rejects-bad-jsonrpc", "legacy"),
    "bad-id-echoed": ("wire-rejects-bad-id", "modern"),
    "batch-processed": ("wire-rejects-batch", "legacy"),
    "params-ignored": ("wire-rejects-bad-params", "legacy"),
    "unknown-method-result": ("wire-method-not-found", "modern"),
    "notification-reply": ("wire-notification-no-reply", "legacy"),
    "cancel-reply": ("wire-cancel-in-flight", "modern"),
    "duplicate-crash": ("wire-survives-duplicate-id", "legacy"),
    "parse-silent": ("wire-rejects-malformed-json", "legacy"),
    "oversize-crash": ("wire-survives-oversize", "modern"),
    "deep-crash": ("wire-survives-deep-nesting", "legacy"),
    "discover-result": ("wire-discover", "legacy"),
    "version-echo": ("wire-version-negotiation", "legacy"),
    "unsupported-version-ok": ("wire-unsupported-version", "modern"),
    "hang-tools-list": ("wire-answers-in-time", "modern"),
    "no-result-type": ("wire-missing-result-type", "modern"),
    "no-cache-hints": ("wire-missing-cache-hints", "modern"),
    "stdout-noise": ("wire-parse-error", "legacy"),
}


def test_the_clean_server_passes_every_rule() -> None:
    done = check("--json", "--", sys.executable, BAD)
    out = report(done)
    assert done.returncode == 0, out["findings"]
    assert out["findings"] == [] and out["eras"] == ["modern", "legacy"]
    assert set(DEFECTS[d][0] for d in DEFECTS) <= set(out["rules"])


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_defect_fails_its_rule(defect: str) -> None:
    rule_id, era = DEFECTS[defect]
    done = check("--json", "--timeout", "3", "--era", era, "--only", rule_id, "--", sys.executable, BAD, "--defect", defect)
    out = report(done)
    found = [f for f in out["findings"] if f["rule"] == rule_id]
    assert found, out
    severity = found[0]["severity"]
    assert done.returncode == (1 if severity == "error" else 0), done.stderr
    assert all(f["envelopes"] for f in found if f["rule"] != "check-not-run")
    assert any(line.startswith(">>> ") for line in found[0]["envelopes"])


def test_a_legacy_only_server_is_checked_in_the_legacy_era() -> None:
    done = check("--json", "--only", "wire-method-not-found", "--", sys.executable, BAD, "--defect", "legacy-only")
    out = report(done)
    assert done.returncode == 0 and out["eras"] == ["legacy"], out


def test_an_era_the_server_does_not_speak_is_a_check_not_run() -> None:
    done = check("--json", "--era", "modern", "--only", "wire-method-not-found", "--", sys.executable, BAD, "--defect", "legacy-only")
    out = report(done)
    assert done.returncode == 0
    assert [f["rule"] for f in out["findings"]] == ["check-not-run"]


def test_warnings_fail_only_with_strict() -> None:
    args = ("--json", "--era", "legacy", "--only", "wire-survives-duplicate-id", "--", sys.executable, BAD, "--defect", "duplicate-crash")
    assert check(*args).returncode == 0
    assert check("--strict", *args).returncode == 1


def test_an_unknown_rule_is_an_options_error_naming_close_rules() -> None:
    done = check("--only", "wire-rejects-bad-jsonrpcs", "--", sys.executable, BAD)
    assert done.returncode == 2
    assert "unknown rule 'wire-rejects-bad-jsonrpcs'" in done.stderr and "wire-rejects-bad-jsonrpc" in done.stderr


def test_a_target_that_does_not_start_is_status_2() -> None:
    done = check("--", "/nonexistent/server")
    assert done.returncode == 2 and "wiremcp check: cannot start /nonexistent/server" in done.stderr


def test_a_target_that_speaks_no_mcp_is_status_2() -> None:
    done = check("--timeout", "2", "--", sys.executable, "-c", "import sys; sys.stdin.read()")
    assert done.returncode == 2 and "answered neither server/discover nor initialize" in done.stderr


def test_a_url_nothing_listens_on_is_status_2() -> None:
    from _servers import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    done = check("--timeout", "2", url)
    assert done.returncode == 2 and f"wiremcp check: cannot connect to {url}" in done.stderr
