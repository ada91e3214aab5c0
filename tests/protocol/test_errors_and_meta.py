"""MCP's error codes and their data, the era of each revision, the per-request log level, extension names.

basic/index.mdx, "Error Codes": -32020 header mismatch, -32021 with
``data.requiredCapabilities``, -32022 with ``data.supported`` and
``data.requested``; server/resources.mdx: a missing resource is -32602 with
``data.uri``. basic/versioning.mdx: 2026-07-28 is modern, 2025-11-25 and
earlier legacy. server/utilities/logging.mdx: no ``notifications/message``
for a request that set no ``logLevel``, and only at or above the level it
set. extensions/overview.mdx: an identifier is ``vendor-prefix/name``.
"""

from __future__ import annotations

import pytest

from wiremcp.jsonrpc import InvalidParams
from wiremcp.protocol import (
    LATEST,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    MODERN_VERSIONS,
    Era,
    HeaderMismatch,
    MissingClientCapability,
    ResourceNotFound,
    UnsupportedProtocolVersion,
    era_of,
    parse_request_meta,
)
from wiremcp.protocol.extensions import check_identifier, missing_extension
from wiremcp.protocol.meta import CLIENT_CAPABILITIES, PROTOCOL_VERSION, RequestMeta


def test_unsupported_version_names_both_and_lists_the_supported_ones() -> None:
    error = UnsupportedProtocolVersion("2099-01-01", (v for v in ("2026-07-28", "2025-11-25")))
    assert error.code == -32022
    assert error.message == "Unsupported protocol version '2099-01-01'; this server supports 2026-07-28, 2025-11-25"
    assert error.data == {"supported": ["2026-07-28", "2025-11-25"], "requested": "2099-01-01"}
    assert error.requested == "2099-01-01"
    assert error.supported == ["2026-07-28", "2025-11-25"]


def test_a_missing_capability_lists_what_is_required() -> None:
    required = {"sampling": {}, "elicitation": {"form": {}}}
    error = MissingClientCapability(required)
    assert error.code == -32021
    assert error.message == "This request needs client capabilities the client did not declare: elicitation, sampling"
    assert error.data == {"requiredCapabilities": required}
    assert error.required is required
    assert MissingClientCapability(required, "custom").message == "custom"


def test_a_header_mismatch_carries_its_message() -> None:
    error = HeaderMismatch("Mcp-Method says tools/list, the body says tools/call")
    assert error.code == -32020
    assert error.message == "Mcp-Method says tools/list, the body says tools/call"


def test_a_missing_resource_is_invalid_params_naming_the_uri() -> None:
    error = ResourceNotFound("file:///nope")
    assert isinstance(error, InvalidParams)
    assert error.code == -32602
    assert error.message == "Resource not found: file:///nope"
    assert error.data == {"uri": "file:///nope"}
    assert error.uri == "file:///nope"


def test_missing_extension_names_the_extension_and_why() -> None:
    error = missing_extension("io.modelcontextprotocol/tasks", "this tool runs as a task")
    assert error.code == -32021
    assert error.message == (
        "Missing required client capability: the extension 'io.modelcontextprotocol/tasks' (this tool runs as a task)"
    )
    assert error.data == {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


def test_each_revision_has_its_era() -> None:
    assert LATEST in MODERN_VERSIONS
    for version in MODERN_VERSIONS:
        assert era_of(version) is Era.MODERN
    assert {"2025-11-25", "2025-06-18", "2025-03-26"} <= set(LEGACY_VERSIONS)
    for version in LEGACY_VERSIONS:
        assert era_of(version) is Era.LEGACY
    for unknown in ("2024-10-07", "2026-07-29", "", "latest"):
        assert era_of(unknown) is None


def meta_with(level: str | None) -> RequestMeta:
    raw = {PROTOCOL_VERSION: LATEST, CLIENT_CAPABILITIES: {}}
    if level is not None:
        raw["io.modelcontextprotocol/logLevel"] = level
    return parse_request_meta({"_meta": raw}, MODERN_VERSIONS)


def test_no_log_message_for_a_request_that_set_no_level() -> None:
    meta = meta_with(None)
    assert meta.log_level is None
    assert not any(meta.wants_log(level) for level in LOG_LEVELS)


@pytest.mark.parametrize("threshold", LOG_LEVELS)
def test_log_messages_at_or_above_the_level_the_request_set(threshold: str) -> None:
    meta = meta_with(threshold)
    rank = LOG_LEVELS.index(threshold)
    assert [meta.wants_log(level) for level in LOG_LEVELS] == [i >= rank for i in range(len(LOG_LEVELS))]


@pytest.mark.parametrize(
    "params, message",
    [
        (None, "Invalid params: the request has no params; every request must carry params._meta with "
               f"'{PROTOCOL_VERSION}' and '{CLIENT_CAPABILITIES}'"),
        ({}, "Invalid params: params._meta is missing; every request must carry params._meta with "
             f"'{PROTOCOL_VERSION}' and '{CLIENT_CAPABILITIES}'"),
    ],
)
def test_a_request_without_meta_is_told_what_every_request_carries(params: dict[str, object] | None, message: str) -> None:
    with pytest.raises(InvalidParams) as info:
        parse_request_meta(params, MODERN_VERSIONS)
    assert info.value.message == message


@pytest.mark.parametrize("identifier", ["com.example/my-extension", "io.modelcontextprotocol/tasks", "a/b"])
def test_an_extension_identifier_is_vendor_prefix_slash_name(identifier: str) -> None:
    assert check_identifier(identifier) == identifier


@pytest.mark.parametrize("identifier", ["tasks", "/tasks", "com.example/", "a/b/c", "com.example/my extension", "a/b\n"])
def test_other_identifiers_are_refused_naming_them(identifier: str) -> None:
    with pytest.raises(ValueError) as info:
        check_identifier(identifier)
    assert str(info.value) == (
        f"an extension identifier is 'vendor-prefix/extension-name' (e.g. 'com.example/my-extension'), not {identifier!r}"
    )


def test_an_identifier_that_is_not_a_string_is_a_type_error() -> None:
    with pytest.raises(TypeError) as info:
        check_identifier(42)
    assert str(info.value) == "an extension identifier is a string like 'com.example/my-extension', not 42"
