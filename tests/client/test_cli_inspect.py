"""``wiremcp inspect | call | read | prompt`` end to end, as a user runs them.

Spec: server/discover.mdx, server/tools.mdx, server/resources.mdx,
server/prompts.mdx (what is shown); basic/transports/stdio.mdx (the target
process).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from _helpers import ROOT, SAMPLE, TESTS

pytestmark = pytest.mark.slow

SCRIPTED = str(TESTS / "servers" / "scripted.py")


def wiremcp(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "wiremcp", *args], capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_inspect_a_server_file() -> None:
    """The inspector shows era, server info, capabilities and the tools with their parameters."""
    done = wiremcp("inspect", SAMPLE)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "sample 9.9.9" in out and "era: modern, protocol version 2026-07-28" in out
    assert "add(a: integer, b?: integer)" in out and "Add two integers." in out
    assert "\x1b[" not in out  # plain when piped


def test_call_with_a_stdio_command_after_dashes() -> None:
    done = wiremcp("call", "add", '{"a": 20, "b": 22}', "--", sys.executable, "-m", "wiremcp", "run", SAMPLE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"


def test_call_tool_error_exit_status() -> None:
    """A tool execution error (isError) is printed and gives exit status 1."""
    done = wiremcp("call", SAMPLE, "fail", '{"message": "broken"}')
    assert done.returncode == 1 and "broken" in done.stdout


def test_protocol_error_exit_status() -> None:
    done = wiremcp("call", SAMPLE, "no_such_tool")
    assert done.returncode == 1 and "error -32602" in done.stdout


def test_wire_shows_every_envelope() -> None:
    """--wire prints each envelope with direction and timing."""
    done = wiremcp("call", "--wire", SAMPLE, "echo", '{"text": "hi"}')
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("→ sent") == 2 and done.stdout.count("← received") == 2
    assert '"method": "tools/call"' in done.stdout


def test_read_prompt_and_inspect_sections() -> None:
    """resources/read, prompts/get and the resource/prompt sections of inspect."""
    target = ["--", sys.executable, SCRIPTED]
    done = wiremcp("read", "mem://a", *target)
    assert done.returncode == 0 and done.stdout.strip() == "content of mem://a"
    done = wiremcp("prompt", "greet", "who=Ada", *target)
    assert done.returncode == 0 and "hello Ada" in done.stdout
    done = wiremcp("inspect", *target)
    assert done.returncode == 0, done.stderr
    assert "mem://a" in done.stdout and "mem://{x}" in done.stdout and "greet(who?)" in done.stdout


def test_usage_errors() -> None:
    assert wiremcp("call", SAMPLE, "echo", "{not json").returncode == 2
    done = wiremcp("inspect", "--", "/no/such/command-xyz")
    assert done.returncode == 2 and "cannot start" in done.stderr
