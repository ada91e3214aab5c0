"""The official MCP conformance suite (pinned in conformance/package.json) against our server and client.

Server legs: ``wiremcp run examples/everything.py --http`` on loopback, scored
with ``conformance/server.sh`` per revision, both revisions against the same
server process (one dual-era endpoint). Client legs: the whole client
requirement sets (2026-07-28, 2025-11-25, and ``--suite all``), every
scenario, authorization included, with ``conformance/client.sh`` against
``conformance/client.py``, whose totals are the asserted outcome; and a few
scenarios (``CLIENT_SCENARIOS``) each on its own with ``conformance/harness.sh``,
every check a success. The harness
installs its pinned packages (and Node 22 from the npm registry) on first use.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "conformance"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None and not (CONFORMANCE / "node_modules").exists(), reason="needs npm"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def results_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("conformance")


@pytest.fixture(scope="module")
def everything_url(tmp_path_factory):
    port = free_port()
    # wiremcp run keeps tasks in SQLite under $XDG_STATE_HOME (docs/tasks.md): a fresh one here.
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path_factory.mktemp("state"))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "run", "examples/everything.py", "--http", "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    else:  # pragma: no cover - diagnostics only
        proc.kill()
        pytest.fail(f"the server did not start: {proc.stderr.read().decode()}")
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
        proc.stderr.close()


def run_server_leg(url: str, revision: str, results_root: Path) -> tuple[subprocess.CompletedProcess, dict]:
    env = {**os.environ, "CONFORMANCE_RESULTS_ROOT": str(results_root)}
    done = subprocess.run(
        ["bash", str(CONFORMANCE / "server.sh"), url, revision], capture_output=True, text=True, env=env, timeout=900
    )
    summary = json.loads((results_root / f"latest-server-{revision}" / "summary.json").read_text())
    return done, summary


def test_server_2026_07_28(everything_url, results_root):
    """Issue 3: the 2026-07-28 server requirement set, 37/37, plus its three pending scenarios."""
    done, summary = run_server_leg(everything_url, "2026-07-28", results_root)
    print(done.stdout[-3000:])
    assert done.stdout.strip().splitlines()[-1] == "server 2026-07-28: 37/37 scenarios passed", done.stdout[-3000:]
    assert done.returncode == 0
    statuses = {s["name"]: s["status"] for s in summary["scenarios"]}
    for pending in ("json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation"):
        assert statuses.get(pending) == "pass", (pending, statuses.get(pending))


def test_server_2025_11_25(everything_url, results_root):
    """The 2025-11-25 requirement set, 30/30, on the same server process as the 2026-07-28 leg (one dual-era
    endpoint: 2026-07-28 basic/versioning.mdx, "Backward Compatibility with Initialization-Based Versions"),
    plus the unscored session lifecycle and SSE polling scenarios (2025-11-25 basic/transports.mdx,
    "Session Management" and "Resumability and Redelivery"; FIXTURES.md 3.1)."""
    done, summary = run_server_leg(everything_url, "2025-11-25", results_root)
    print(done.stdout[-3000:])
    assert done.stdout.strip().splitlines()[-1] == "server 2025-11-25: 30/30 scenarios passed", done.stdout[-3000:]
    assert done.returncode == 0
    statuses = {s["name"]: s["status"] for s in summary["scenarios"]}
    for unscored in ("server-session-lifecycle", "server-sse-polling", "json-schema-2020-12"):
        assert statuses.get(unscored) == "pass", (unscored, statuses.get(unscored))


#: The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663; issue 14). They are
#: extension scenarios, run by ``--suite all``; tasks-status-notifications is reported as skipped
#: by the pinned harness itself (its listen-stream rewrite is pending) and scores as a pass.
TASK_SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
]


def test_server_suite_all(everything_url, results_root):
    """Issue 14: ``--suite all``, every server scenario the suite has, the tasks extension's included: 65/65."""
    done, summary = run_server_leg(everything_url, "all", results_root)
    print(done.stdout[-3000:])
    assert done.stdout.strip().splitlines()[-1] == "server all: 65/65 scenarios passed", done.stdout[-3000:]
    assert done.returncode == 0
    statuses = {s["name"]: s["status"] for s in summary["scenarios"]}
    for scenario in TASK_SCENARIOS:
        assert statuses.get(scenario) == "pass", (scenario, statuses.get(scenario))


@pytest.mark.parametrize("scenario", TASK_SCENARIOS)
def test_server_tasks_scenario(everything_url, scenario, tmp_path):
    """Issue 14: each tasks-* scenario on its own, every check a success (no failure, no warning)."""
    done = subprocess.run(
        ["bash", str(CONFORMANCE / "harness.sh"), "server", "--url", everything_url, "--scenario", scenario, "-o", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert re.search(r"Passed: (\d+)/\1, 0 failed, 0 warnings", output), output[-3000:]


CLIENT_SCENARIOS = [
    ("2026-07-28", "tools_call"),
    ("2026-07-28", "request-metadata"),
    ("2026-07-28", "sep-2322-client-request-state"),
    ("2026-07-28", "http-standard-headers"),
    ("2026-07-28", "http-custom-headers"),
    ("2026-07-28", "http-invalid-tool-headers"),
    ("2026-07-28", "json-schema-ref-no-deref"),
    ("2026-07-28", "json-schema-2020-12-preservation"),
    ("2025-11-25", "initialize"),
    ("2025-11-25", "tools_call"),
    ("2025-11-25", "elicitation-sep1034-client-defaults"),
    ("2025-11-25", "sse-retry"),
]


def run_client_scenario(scenario: str, revision: str | None, out: Path, *, force: bool = False) -> tuple[int, str]:
    """One client scenario on its own with harness.sh; (exit status, output). ``revision`` None:
    the harness's default wire for the scenario; ``force``: run it even when the scenario is not
    on that revision's timeline (extension scenarios)."""
    command = f"{sys.executable} {CONFORMANCE / 'client.py'}"
    argv = ["bash", str(CONFORMANCE / "harness.sh"), "client", "--command", command, "--scenario", scenario]
    if revision is not None:
        argv += ["--spec-version", revision] + (["--force"] if force else [])
    done = subprocess.run(argv + ["-o", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    return done.returncode, done.stdout + done.stderr


@pytest.mark.parametrize("revision, scenario", CLIENT_SCENARIOS, ids=[f"{r}-{s}" for r, s in CLIENT_SCENARIOS])
def test_client_scenario(revision, scenario, tmp_path):
    """Issue 5: one client scenario on its own, with conformance/client.py (the whole requirement
    sets, every scenario, authorization included, are `test_client_leg`)."""
    returncode, output = run_client_scenario(scenario, revision, tmp_path)
    assert returncode == 0, output[-3000:]
    assert "OVERALL: PASSED" in output, output[-3000:]
    assert " 0 failed, 0 warnings" in output, output[-3000:]


#: The client requirement sets and the totals they must reach (issue 18: every authorization
#: scenario; FIXTURES.md 4.3). "all" is ``--suite all``: every client scenario the suite has,
#: the extension auth scenarios (client credentials, enterprise-managed, DPoP, workload
#: identity) and the 2025-03-26 fallbacks included, each at its own wire.
CLIENT_LEGS = [("2026-07-28", 32), ("2025-11-25", 18), ("all", 48)]


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("revision, total", CLIENT_LEGS, ids=[r for r, _ in CLIENT_LEGS])
def test_client_leg(revision, total, results_root):
    """Issue 18: the client passes every scenario of the set, the auth ones and the unscored
    extension ones too. All scenarios start at once, and each is judged by that run: nothing is
    run again (issue 23: a scenario that failed under load was once "rescued" by a solo re-run;
    the reset behind it is now handled by the client, transports/http/_resend.py)."""
    command = f"{sys.executable} {CONFORMANCE / 'client.py'}"
    env = {**os.environ, "CONFORMANCE_RESULTS_ROOT": str(results_root)}
    done = subprocess.run(
        ["bash", str(CONFORMANCE / "client.sh"), command, revision],
        capture_output=True, text=True, env=env, timeout=1500, cwd=ROOT,
    )
    print(done.stdout[-3000:])
    assert done.stdout.strip().splitlines()[-1] == f"client {revision}: {total}/{total} scenarios passed", (
        done.stdout[-3000:] + done.stderr[-2000:]
    )
    assert done.returncode == 0
    summary = json.loads((results_root / f"latest-client-{revision}" / "summary.json").read_text())
    auth = {s["name"]: s["status"] for s in summary["scenarios"] if s["name"].startswith("auth/")}
    assert len(auth) >= {"2026-07-28": 31, "2025-11-25": 20, "all": 33}[revision], sorted(auth)
    assert "rescued" not in done.stdout
    failed = {name: status for name, status in auth.items() if status != "pass"}
    assert failed == {}, (failed, done.stdout[-3000:])
