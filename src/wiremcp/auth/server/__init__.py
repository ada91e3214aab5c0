"""The resource server side of MCP authorization (basic/authorization/, 2026-07-28).

    from wiremcp.auth.server import JWTVerifier, ResourceServer

    auth = ResourceServer(
        JWTVerifier(issuer="https://auth.example.com", resource="https://mcp.example.com/mcp"),
        resource="https://mcp.example.com/mcp",
        authorization_servers=["https://auth.example.com"],
        required_scopes=["mcp"],
    )
    server = wiremcp.Server("files", auth=auth)   # served over HTTP: every request needs a token

Each module opens with the rules it keeps: ``_token`` (`AccessToken`, the
`TokenVerifier` protocol), ``_errors`` (`AuthError` and its reasons),
``_jwt`` (RFC 9068), ``_introspection`` (RFC 7662), ``_dpop`` (RFC 9449),
``_discovery`` (issuer metadata, key sets and their rotation),
``_resource`` (`ResourceServer`: metadata, challenges, scopes). Needs
``pyjwt[crypto]`` and httpx (the ``[auth]`` extra); imported only by
servers that use it.
"""

from ._discovery import canonical_uri
from ._dpop import DPoPNonces, ReplayCache, jwk_thumbprint
from ._errors import AuthError, Reason
from ._introspection import IntrospectionVerifier
from ._jwt import DEFAULT_ALGORITHMS, DEFAULT_LEEWAY, JWTVerifier
from ._resource import METADATA_WELL_KNOWN, ResourceServer
from ._token import AccessToken, DPoPProof, TokenVerifier

__all__ = [
    "AccessToken",
    "AuthError",
    "DPoPNonces",
    "DPoPProof",
    "IntrospectionVerifier",
    "JWTVerifier",
    "METADATA_WELL_KNOWN",
    "Reason",
    "ReplayCache",
    "ResourceServer",
    "TokenVerifier",
    "DEFAULT_ALGORITHMS",
    "DEFAULT_LEEWAY",
    "canonical_uri",
    "jwk_thumbprint",
]
