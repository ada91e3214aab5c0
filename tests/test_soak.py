"""The soak test's CI mode: ``python bench/soak.py --ci`` (one minute of mixed load, both eras, both transports).

One run, two verdicts: every request got exactly one reply and every HTTP
status was documented (test_soak_replies); no server's memory, descriptors
or task count grew over the second half of the run (test_soak_growth).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def soak_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("soak") / "soak.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--ci", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=280,
    )
    assert out.exists(), f"the soak wrote no result (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["exit_status"] = proc.returncode
    return result


def test_soak_replies(soak_run: dict[str, Any]) -> None:
    """Nothing lost, duplicated or stray; every documented check held; the load really ran."""
    growth = [p for p in soak_run["problems"] if "over the second half" in p]
    other = [p for p in soak_run["problems"] if p not in growth]
    assert other == [], other
    assert soak_run["lost"] == 0 and soak_run["duplicated"] == 0 and soak_run["stray"] == 0
    assert soak_run["answered"] == soak_run["sent"]
    ops = soak_run["operations"]
    for kind in ("call", "large", "cancelled", "listen", "list-change", "raw-bad", "raw-cancel",
                 "raw-legacy-call", "session-abandoned", "session-deleted", "http-bad"):
        assert ops.get(kind, 0) > 0, f"the soak never did {kind!r}: {ops}"
    assert set(soak_run["servers"]) == {"http", "stdio-client", "stdio-raw"}
    for name, server in soak_run["servers"].items():
        assert server["samples"] >= 20, (name, server)
        assert min(server["tasks"]) >= 1, (name, server)  # soak_debug answered


@pytest.mark.xfail(
    strict=False,
    reason="open (issue 13): under the soak's mix the HTTP server's RSS still rose 42 MiB/min (and once its "
    "asyncio tasks 60/min) over the second half of the 1-minute CI run after the session-buffer fix; "
    "the 30-minute run of bench/README.md, 'Soak (30 minutes)', did not finish (the legacy HTTP client's "
    "closing DELETE got no reply), so whether it levels off is still unknown",
)
def test_soak_growth(soak_run: dict[str, Any]) -> None:
    growth = [p for p in soak_run["problems"] if "over the second half" in p]
    assert growth == []
    assert soak_run["exit_status"] == 0
