"""Extension negotiation (extensions/overview.mdx, "Negotiation"): the shared mechanism tasks and apps use."""

from __future__ import annotations

import pytest

from conftest import META
from wiremcp import Server
from wiremcp.jsonrpc import Request
from wiremcp.protocol import MissingClientCapability
from wiremcp.protocol.extensions import TASKS, client_declares, require_extension
from wiremcp.protocol.meta import parse_request_meta


def meta_with(extensions):
    caps = {} if extensions is None else {"extensions": extensions}
    return parse_request_meta({"_meta": {**META, "io.modelcontextprotocol/clientCapabilities": caps}}, ["2026-07-28"])


def test_server_discover_lists_declared_extensions():
    server = Server("x")
    assert "extensions" not in server.capabilities()
    server.declare_extension("com.example/thing", {"mode": "a"})
    server.declare_extension(TASKS)
    out = server.handle(Request(1, "server/discover", {"_meta": META}))
    assert out["capabilities"]["extensions"] == {"com.example/thing": {"mode": "a"}, TASKS: {}}
    # 2025-11-25 ServerCapabilities has no `extensions` member.
    assert "extensions" not in server.legacy_capabilities()
    server.remove_extension("com.example/thing")
    assert server.extensions == {TASKS: {}}


@pytest.mark.parametrize("bad", ["tasks", "/tasks", "io.x/", "io.x/a/b", "io x/a", 3])
def test_identifiers_are_checked(bad):
    with pytest.raises((ValueError, TypeError)):
        Server("x").declare_extension(bad)


def test_negotiated_per_request_only_when_both_sides_declare():
    server = Server("x")
    assert not server.negotiated(meta_with({TASKS: {}}), TASKS)  # the server does not declare it
    server.declare_extension(TASKS)
    assert server.negotiated(meta_with({TASKS: {}}), TASKS)
    assert not server.negotiated(meta_with(None), TASKS)
    assert not server.negotiated(meta_with({"other/x": {}}), TASKS)
    # malformed declarations count as "not declared" (graceful degradation), never as an error
    assert not server.negotiated(meta_with({TASKS: True}), TASKS)
    assert not client_declares({"extensions": []}, TASKS)


def test_require_extension_is_32021_naming_it():
    require_extension({"extensions": {TASKS: {}}}, TASKS)
    with pytest.raises(MissingClientCapability) as caught:
        require_extension({}, TASKS, "this tool always runs as a task")
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert TASKS in caught.value.message and "always runs as a task" in caught.value.message
