"""End to end over a real stdio server: a malformed notification gets no reply, only a warning on stderr.

Spec: JSON-RPC 2.0 §4.1; MCP 2026-07-28 basic/index.mdx (Notifications: the
receiver MUST NOT send a response) and basic/transports/stdio.mdx (stderr
is for logging).
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import call

pytestmark = pytest.mark.slow

BAD_NOTIFICATIONS = [
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": None},
    {"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5},
    {"jsonrpc": "1.0", "method": "notifications/initialized"},
    {"method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": 7},
    {"jsonrpc": "2.0", "method": "notifications/x", "error": {"code": 1, "message": "m"}},
]


def test_malformed_notifications_get_no_reply_and_a_warning(sample: Any) -> None:
    for note in BAD_NOTIFICATIONS:
        sample.send(note)
    # Synchronisation point: lines are handled in order, so the first line out must be this reply.
    reply = sample.ask(call(1, "echo", {"text": "after"}))
    assert reply["id"] == 1 and reply["result"]["content"][0]["text"] == "after"
    code, rest, err = sample.finish()
    assert code == 0 and rest == b""  # nothing else was ever written
    warnings = [line for line in err.splitlines() if "ignored a malformed notification" in line]
    assert len(warnings) == len(BAD_NOTIFICATIONS), err
    assert "(notifications/cancelled): Invalid Request: 'params' must be an object, not an array" in warnings[0]
    assert "(no method)" in warnings[6]
