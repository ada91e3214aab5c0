"""The public API of `wiremcp.server`, as httpx keeps its own: the exact list, and small.

`wiremcp.server` is what a server author writes against, so it stays at most
45 names (issue 25: "a public API a user can hold in their head"). What a
transport, a task store, an MCP App or a forwarding proxy needs beyond it lives
in a namespace of its own (`transport`, `tasks`, `apps`, `forward`, `schema`,
`transform`, `depends`, `middleware`, `openapi`, `storage`),
and each public name is exported by exactly one of them. A name added to or
taken from any of these lists is a change to the API: change this test with it.
"""

from __future__ import annotations

import importlib

import pytest

#: wiremcp.server: what a server author needs every day.
SERVER = [
    "Server",
    "DEFAULT_LIST_TTL_MS",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "Context",
    "Emit",
    "Headers",
    "InsufficientScope",
    "ClientRequestFailed",
    "Field",
    "Header",
    "SchemaError",
    "Content",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
    "text",
    "image",
    "audio",
    "embedded_resource",
    "resource_link",
    "Resource",
    "UriTemplate",
    "TemplateError",
    "Prompt",
    "user",
    "assistant",
    "message",
    "Completer",
    "Completion",
    "Elicited",
    "Elicit",
    "Sample",
    "Roots",
    "Resolve",
    "Lifespan",
    "LifespanFactory",
    "Middleware",
    "Invocation",
    "Next",
    "Mount",
]

#: The namespaces beside it, each for one kind of reader.
NAMESPACES = {
    "wiremcp.server.transport": [
        "ServerConnection",
        "ConnectionState",
        "Era",
        "request_era",
        "carries_protocol_meta",
        "Held",
        "Notified",
        "DEFERRED",
        "FusedCall",
        "Call",
        "CallState",
        "PostedCall",
        "Write",
        "Reply",
        "reply_ok",
        "reply_failed",
        "settle",
        "reply_cancelled",
        "ServerBusy",
        "SERVER_BUSY",
        "CallerBusy",
        "CALLER_BUSY",
        "OutgoingRequests",
        "LegacySession",
        "DEFAULT_MAX_SESSION_SUBSCRIPTIONS",
        "DEFAULT_MAX_SUBSCRIPTION_URI",
        "Workers",
        "drain",
        "DEFAULT_SHUTDOWN_GRACE",
        "current_headers",
        "current_auth",
        "current_peer",
        "Peer",
    ],
    "wiremcp.server.tasks": [
        "TaskStore",
        "TaskRecord",
        "TaskStoreError",
        "MemoryTaskStore",
        "SQLiteTaskStore",
        "default_task_db_path",
    ],
    "wiremcp.server.apps": ["UI_EXTENSION", "UI_MIME_TYPE", "RESOURCE_URI_META_KEY", "UiCsp", "Visibility", "supports_apps"],
    "wiremcp.server.forward": ["Upstream", "Ask", "Forwarder", "RESUME_KEY", "reporting_context"],
    "wiremcp.server.schema": ["compile_validator", "SchemaWarning"],
    "wiremcp.server.transform": ["Arg", "TransformOptions", "TransformedTool", "Output"],
    "wiremcp.server.depends": ["Depends", "Scope"],
    "wiremcp.server.openapi": ["from_openapi", "from_fastapi", "RouteMap", "Kind", "HeadersSource"],
    "wiremcp.server.storage": [
        "KeyValueStore",
        "MemoryStore",
        "SQLiteStore",
        "RedisStore",
        "default_storage_path",
        "SessionState",
        "StateUnavailable",
        "StorageError",
        "StorageFull",
        "InvalidKey",
        "ValueTooLarge",
        "DEFAULT_SESSION_TTL",
        "MAX_KEY_BYTES",
        "MAX_VALUE_BYTES",
        "MAX_LIST",
    ],
    "wiremcp.server.middleware": [
        "RateLimit",
        "RateLimited",
        "RateStore",
        "MemoryRateStore",
        "DEFAULT_MAX_KEYS",
        "ResponseCache",
        "Timing",
        "RequestLog",
        "ErrorHandling",
        "caller_key",
        "private_key",
    ],
}


def test_the_server_api_is_exactly_the_intended_list():
    import wiremcp.server

    assert wiremcp.server.__all__ == SERVER


def test_the_server_api_is_at_most_45_names():
    import wiremcp.server

    assert len(wiremcp.server.__all__) <= 45, len(wiremcp.server.__all__)


@pytest.mark.parametrize("name", sorted(NAMESPACES))
def test_each_namespace_exports_exactly_its_list(name):
    module = importlib.import_module(name)
    assert module.__all__ == NAMESPACES[name]
    assert module.__doc__ and len(module.__doc__.splitlines()) > 3, f"{name} explains what it is for"


def test_each_public_name_has_exactly_one_home():
    homes: dict[str, list[str]] = {}
    for namespace, names in [("wiremcp.server", SERVER), *NAMESPACES.items()]:
        for name in names:
            homes.setdefault(name, []).append(namespace)
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


@pytest.mark.parametrize("name", sorted(NAMESPACES))
def test_a_namespace_is_not_reachable_from_the_server_api(name):
    """`wiremcp.server.settle` is gone: the contract is imported from its namespace, not beside the user API."""
    import wiremcp.server

    for moved in NAMESPACES[name]:
        with pytest.raises(AttributeError):
            getattr(wiremcp.server, moved)
