"""Discovery URL order (2026-07-28 authorization-server-discovery.mdx) and PRM resource matching (RFC 9728 3.3)."""

from __future__ import annotations

import pytest

from wiremcp.auth import metadata_urls, prm_urls, resource_matches


def test_prm_urls_path_based_before_root():
    assert prm_urls("https://example.com/public/mcp") == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]


def test_prm_urls_server_at_root():
    assert prm_urls("https://example.com") == ["https://example.com/.well-known/oauth-protected-resource"]
    assert prm_urls("https://example.com/") == ["https://example.com/.well-known/oauth-protected-resource"]


def test_prm_urls_drop_query_and_keep_port():
    assert prm_urls("http://localhost:8080/mcp?x=1")[0] == "http://localhost:8080/.well-known/oauth-protected-resource/mcp"


def test_metadata_urls_issuer_with_path():
    assert metadata_urls("https://auth.example.com/tenant1") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_metadata_urls_issuer_without_path():
    assert metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    "resource, server, ok",
    [
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", True),
        ("https://mcp.example.com", "https://mcp.example.com/mcp", True),  # root PRM for a server under a path
        ("https://mcp.example.com/", "https://mcp.example.com/mcp", True),
        ("HTTPS://MCP.example.com/mcp", "https://mcp.example.com/mcp", True),  # scheme and host without case
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp", True),  # default port
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mc", "https://mcp.example.com/mcp", False),  # not on a segment boundary
        ("https://mcp.example.com/mcp/sub", "https://mcp.example.com/mcp", False),  # a child is not this server
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp", False),
        ("mcp.example.com/mcp", "https://mcp.example.com/mcp", False),
        ("https://mcp.example.com/MCP", "https://mcp.example.com/mcp", False),  # paths compare with case
    ],
)
def test_resource_matches(resource, server, ok):
    assert resource_matches(resource, server) is ok
