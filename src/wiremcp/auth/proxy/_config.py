"""The upstream provider the proxy sends people to: its endpoints, the proxy's one client there.

Rules it keeps:

* the proxy is one pre-registered confidential client of the upstream
  provider (``client_id``, ``client_secret``, client_secret_basic); its
  redirect URI there is ``{proxy issuer}/oauth/callback``;
* endpoints are ``https`` (``http`` on a loopback host only), as for every
  other URL the auth package fetches;
* ``verifier`` is how the proxy learns who signed in: the upstream access
  token is verified as a resource server would (a `JWTVerifier` for JWT
  access tokens, an `IntrospectionVerifier` for opaque ones) and its
  ``sub`` is the user. The upstream tokens stay in the proxy's store: they
  are never given to an MCP client nor sent anywhere but upstream
  (security_best_practices.mdx, "Token Passthrough"). The presets
  (`_presets`) give ``identify`` instead: the whole token response checked
  (ID token, JWT access token or the provider's user endpoint) and mapped to
  a user, an email and the scopes their roles allow (`_identity`);
* `Upstream.discover` reads the provider's metadata (RFC 8414, then OpenID
  Connect Discovery) for the endpoints not given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..server._discovery import check_fetchable, metadata_urls
from ..server._token import TokenVerifier

if TYPE_CHECKING:
    from ._identity import Identity

__all__ = ["Upstream"]


@dataclass(frozen=True)
class Upstream:
    """An upstream OAuth / OpenID provider and the proxy's pre-registered client there."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    client_id: str
    client_secret: str = field(repr=False)
    #: Verifies the upstream access token; its subject is the user (unless ``identify`` is given).
    verifier: TokenVerifier | None = None
    #: The scopes asked upstream (e.g. ``["openid", "email"]``).
    scopes: tuple[str, ...] = ()
    #: The upstream resource indicator (RFC 8707) sent with the requests, if the provider wants one.
    resource: str | None = None
    revocation_endpoint: str | None = None
    #: Who signed in, from the upstream token response (`UpstreamIdentity`: the presets' subject,
    #: email and roles mapped to scopes); when given it replaces ``verifier``.
    identify: Callable[[Mapping[str, Any]], Awaitable[Identity]] | None = None
    #: How the proxy authenticates at the token endpoint (GitHub takes the secret in the form).
    token_auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    #: Extra authorization request parameters (Auth0's ``audience``, Google's ``access_type``).
    authorize_params: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("issuer", "authorization_endpoint", "token_endpoint"):
            check_fetchable(getattr(self, name), name)
        if self.revocation_endpoint is not None:
            check_fetchable(self.revocation_endpoint, "revocation_endpoint")
        if not self.client_id or not self.client_secret:
            raise ValueError("the proxy needs its pre-registered client_id and client_secret at the upstream provider")
        if self.verifier is None and self.identify is None:
            raise ValueError("give a verifier (or identify) to learn who signed in upstream")

    @classmethod
    async def discover(cls, issuer: str, **fields: Any) -> Upstream:
        """``Upstream`` with the endpoints read from ``issuer``'s metadata (RFC 8414 / OIDC Discovery)."""
        import httpx

        metadata: dict[str, Any] | None = None
        async with httpx.AsyncClient(timeout=10) as client:
            for url in metadata_urls(issuer):
                response = await client.get(url)
                if response.status_code == 200:
                    doc = response.json()
                    if isinstance(doc, dict) and doc.get("issuer") == issuer:
                        metadata = doc
                        break
        if metadata is None:
            raise ValueError(f"no authorization server metadata for {issuer}")
        known = {
            name: metadata[name]
            for name in ("authorization_endpoint", "token_endpoint", "revocation_endpoint")
            if isinstance(metadata.get(name), str)
        }
        return cls(issuer=issuer, **{**known, **fields})
