"""An OAuth proxy: an authorization server facade for MCP clients in front of one upstream provider.

`OAuthProxy` (``_proxy``) is the authorization server MCP clients see; it
signs people in at the `Upstream` provider (``_config``) with its one
pre-registered client and issues its own tokens. docs/auth-proxy.md shows it
in use; each module states the rules it keeps:

* ``_flow``: authorize, per-client consent, the upstream callback;
* ``_tokens``: the token and revocation endpoints, the verifier of its tokens;
* ``_registration``: dynamic client registration (RFC 7591);
* ``_pages``: the consent and consents pages;
* ``_store``: the records, sealed with the server's key on its store;
* ``_http``: the ASGI plumbing;
* ``_presets``: GitHub, Google, Entra ID, Auth0, Okta, Keycloak, WorkOS and
  generic OIDC upstreams, also from ``WIREMCP_AUTH_*`` settings
  (docs/auth-providers.md); ``_identity``: the verified claims, mapped to a
  user, an email and scopes.

Loaded only by a server that uses it (``import wiremcp.auth.proxy``).
"""

from __future__ import annotations

from ._config import Upstream
from ._identity import ClaimMap, Identity, SignedClaims, UpstreamIdentity, UserEndpointVerifier
from ._presets import auth0, entra, github, google, keycloak, oidc, okta, upstream_from_settings, workos
from ._proxy import OAuthProxy

__all__ = [
    "ClaimMap", "Identity", "OAuthProxy", "SignedClaims", "Upstream", "UpstreamIdentity", "UserEndpointVerifier",
    "auth0", "entra", "github", "google", "keycloak", "oidc", "okta", "upstream_from_settings", "workos",
]
