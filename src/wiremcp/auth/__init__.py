"""OAuth 2.1 authorization for MCP over HTTP (2026-07-28 basic/authorization/).

This package is the client side; `wiremcp.auth.server` is the resource server
side (it verifies the access tokens clients present and serves the protected
resource metadata; docs/auth.md).

    from wiremcp import Client
    from wiremcp.auth import OAuthClient, LoopbackRedirect

    auth = OAuthClient(client_name="my-app", redirect_handler=LoopbackRedirect())
    async with Client.http("https://mcp.example.com/mcp", auth=auth) as client:
        print(await client.list_tools())

Imported only when authorization is used (a stdio server never loads it).
Needs the ``auth`` extra (httpx for the requests, PyJWT with cryptography
for private_key_jwt, DPoP and assertions): ``pip install 'wiremcp[auth]'``.

Modules: `_client` (`OAuthClient`, the flow), `_discovery` (RFC 9728 / RFC
8414 discovery), `_challenge` (``WWW-Authenticate``), `_pkce`, `_jose` (keys,
JWTs, DPoP proofs), `_grants` (client credentials, JWT bearer, enterprise),
`_redirect` (redirect handlers), `_revocation` (RFC 7009, for `OAuthClient.logout`),
`_storage` (token stores), `_ssrf` and
`_http` (guarded, bounded fetching), `_errors` (`AuthError`).
"""

from ._challenge import Challenge, bearer_challenge, parse_www_authenticate
from ._client import OAuthClient
from ._discovery import metadata_urls, prm_urls, resource_matches
from ._errors import AuthError
from ._grants import ClientCredentialsGrant, EnterpriseGrant, JWTBearerGrant, PreRegisteredClient
from ._jose import dpop_proof, generate_key, jwk_thumbprint, load_private_key, public_jwk, sign_jwt
from ._redirect import HeadlessRedirect, LoopbackRedirect, RedirectHandler, check_authorization_url
from ._revocation import Revocation
from ._ssrf import URLGuard
from ._storage import FileTokenStore, KeyringTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "OAuthClient",
    "AuthError",
    "Revocation",
    # client identity and grants
    "PreRegisteredClient",
    "ClientCredentialsGrant",
    "JWTBearerGrant",
    "EnterpriseGrant",
    # redirect handlers
    "RedirectHandler",
    "HeadlessRedirect",
    "LoopbackRedirect",
    "check_authorization_url",
    # token storage
    "TokenStore",
    "MemoryTokenStore",
    "FileTokenStore",
    "KeyringTokenStore",
    # pieces
    "Challenge",
    "parse_www_authenticate",
    "bearer_challenge",
    "prm_urls",
    "metadata_urls",
    "resource_matches",
    "URLGuard",
    # JOSE
    "generate_key",
    "load_private_key",
    "public_jwk",
    "jwk_thumbprint",
    "sign_jwt",
    "dpop_proof",
]
