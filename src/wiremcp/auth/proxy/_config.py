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
* `read_metadata` (used by `Upstream.discover` and the `oidc` preset) reads
  the provider's metadata (RFC 8414, then OpenID Connect Discovery) for the
  endpoints not given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..server._discovery import check_fetchable, metadata_urls
from ..server._token import TokenVerifier

if TYPE_CHECKING:
    from ._identity import Identity

__all__ = ["Upstream", "read_metadata"]


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
        """``Upstream`` with the endpoints read from ``issuer``'s metadata (`read_metadata`, in a thread)."""
        import asyncio

        metadata = await asyncio.to_thread(read_metadata, issuer)
        known = {
            name: metadata[name]
            for name in ("authorization_endpoint", "token_endpoint", "revocation_endpoint")
            if isinstance(metadata.get(name), str)
        }
        return cls(issuer=issuer, **{**known, **fields})


def read_metadata(issuer: str, *, timeout: float = 10) -> dict[str, Any]:
    """``issuer``'s metadata: RFC 8414, then OpenID Connect Discovery, in `metadata_urls`' order.

    The one discovery of an upstream provider (`Upstream.discover` and the `oidc` preset): the first
    document that answers 200 with this very ``issuer`` in it; any other answer tries the next place.
    """
    import httpx

    check_fetchable(issuer, "issuer")
    with httpx.Client(timeout=timeout) as client:
        for url in metadata_urls(issuer):
            response = client.get(url)
            if response.status_code != 200:
                continue
            try:
                doc = response.json()
            except ValueError:
                continue
            if isinstance(doc, dict) and doc.get("issuer") == issuer:
                return doc
    raise ValueError(f"no authorization server metadata (RFC 8414 or OpenID Connect Discovery) for {issuer}")
