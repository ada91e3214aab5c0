"""``wiremcp check`` on other SDKs' servers (peers of tests/peers.py, built on first use): what each really breaks.

docs/check.md ("Known findings") lists each finding with its cause; these tests keep that list true.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _servers import free_port, serving_http
from peers import node_peer, python_peer
from test_check_targets import OFFICIAL_HTTP, OFFICIAL_STDIO
from test_check_wire import DESKTOP_URL, check, report

HERE = Path(__file__).resolve().parent

#: a whole check of a foreign server (every probe, in several sessions) outlasts the default 120 s on a loaded machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

#: the TypeScript SDK's reference server drops invalid messages unanswered too, but answers a deeply nested request
EVERYTHING_STDIO = {
    "wire-rejects-bad-id", "wire-rejects-bad-jsonrpc", "wire-rejects-bad-params", "wire-rejects-batch", "wire-rejects-malformed-json",
}


#: over HTTP: fastmcp and the TypeScript SDK's Express app answer a request whatever its Host or Origin
REBINDING = {"security-host-check", "security-origin-check"}
#: the TypeScript SDK over HTTP answers an invalid message with -32700, and a batch with one reply per request
EVERYTHING_HTTP = {"wire-rejects-bad-id", "wire-rejects-bad-jsonrpc", "wire-rejects-bad-params", "wire-rejects-batch"} | REBINDING

#: arguments for server-everything's read-only tools that require some
EVERYTHING_CALLS = [
    "--call", 'echo={"message": "hi"}', "--call", 'get-annotated-message={"messageType": "error"}',
    "--call", 'get-structured-content={"location": "New York"}', "--call", 'get-sum={"a": 1, "b": 2}',
]


def test_a_fastmcp_4_server_breaks_what_the_official_sdk_breaks() -> None:
    python = python_peer("fastmcp-4.2.3")
    done = check("--json", "--", str(python), str(HERE / "fixtures" / "fastmcp_server.py"))
    out = report(done)
    assert {f["rule"] for f in out["findings"]} == OFFICIAL_STDIO, out["findings"]
    assert out["eras"] == ["modern", "legacy"]


@pytest.mark.skipif(sys.platform == "win32", reason="the npm bin shim is a POSIX script")
def test_server_everything_speaks_legacy_and_drops_invalid_messages() -> None:
    server = node_peer("server-everything-2026.8.31") / "node_modules" / ".bin" / "mcp-server-everything"
    done = check("--json", *EVERYTHING_CALLS, "--", str(server))
    out = report(done)
    assert {f["rule"] for f in out["findings"] if f["rule"] != "check-not-run"} == EVERYTHING_STDIO, out["findings"]
    assert out["eras"] == ["legacy"]
    # its read-only tools are called (those that need arguments with --call) and their results pass, but
    # trigger-long-running-operation, which takes longer than --timeout: a note, not a finding
    notes = [f["message"] for f in out["findings"] if f["rule"] == "check-not-run"]
    assert notes == ["schema-output-conforms: tools/call trigger-long-running-operation: no answer within 10 s"], notes
    assert {"schema-output-conforms", "schema-output-present", "schema-output-text"} <= set(out["rules"])


def test_a_fastmcp_4_server_over_http() -> None:
    python = python_peer("fastmcp-4.2.3")
    port = free_port()
    with serving_http([str(python), str(HERE / "fixtures" / "fastmcp_server.py"), "--http", str(port)], port) as url:
        done = check("--json", url)
    out = report(done)
    assert {f["rule"] for f in out["findings"]} == OFFICIAL_HTTP | REBINDING | DESKTOP_URL, out["findings"]
    assert out["eras"] == ["modern", "legacy"]


@pytest.mark.skipif(sys.platform == "win32", reason="the npm bin shim is a POSIX script")
def test_server_everything_over_http() -> None:
    server = node_peer("server-everything-2026.8.31") / "node_modules" / ".bin" / "mcp-server-everything"
    port = free_port()
    with serving_http([str(server), "streamableHttp"], port, {"PORT": str(port)}) as url:
        done = check("--json", *EVERYTHING_CALLS, url)
    out = report(done)
    assert {f["rule"] for f in out["findings"] if f["rule"] != "check-not-run"} == EVERYTHING_HTTP | DESKTOP_URL, out["findings"]
    assert out["eras"] == ["legacy"]
    notes = [f["message"] for f in out["findings"] if f["rule"] == "check-not-run"]
    assert notes == ["schema-output-conforms: tools/call trigger-long-running-operation: no answer within 10 s"], notes
