"""What a verified token says, and the interface of a verifier.

`AccessToken` is immutable and carries only what verification established:
the subject, the client, the granted scopes, every claim, the expiry and the
confirmation (``cnf``, RFC 7800; ``cnf.jkt`` binds the token to a DPoP key,
RFC 9449 section 6). A `TokenVerifier` is anything with the one ``verify``
coroutine: the built-ins are `JWTVerifier` (RFC 9068) and
`IntrospectionVerifier` (RFC 7662); a deployment may bring its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

__all__ = ["AccessToken", "DPoPProof", "TokenVerifier", "scopes_of"]


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A verified access token (``ctx.auth`` in a handler)."""

    #: ``sub``: the resource owner (for client_credentials tokens, usually the client).
    subject: str | None
    #: ``client_id``: the OAuth client the token was issued to.
    client_id: str | None
    #: The granted scopes (``scope`` split on spaces, or ``scp``).
    scopes: frozenset[str]
    #: Every claim of the token (JWT payload or introspection response).
    claims: Mapping[str, Any] = field(repr=False)
    #: ``exp`` as a POSIX timestamp, or None.
    expires_at: float | None = None
    #: ``cnf``, the confirmation (``{"jkt": ...}`` for a DPoP-bound token), or None.
    cnf: Mapping[str, Any] | None = None

    @property
    def issuer(self) -> str | None:
        """The ``iss`` claim, or None."""
        iss = self.claims.get("iss")
        return iss if isinstance(iss, str) else None


@dataclass(frozen=True, slots=True)
class DPoPProof:
    """The ``DPoP`` request header (RFC 9449 section 4): one compact JWS, still unverified."""

    jwt: str


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks one access token; raises `AuthError` (never returns an unverified token).

    ``dpop`` is the request's DPoP proof when it used the ``DPoP``
    authorization scheme; ``method`` and ``url`` are the request's HTTP method
    and target URI (what ``htm`` and ``htu`` must name).
    """

    async def verify(self, token: str, *, dpop: DPoPProof | None, method: str, url: str) -> AccessToken:
        """The AccessToken ``token`` stands for; AuthError when it is not valid for this resource."""


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """Scopes from ``scope`` (a space-separated string, RFC 9068 / RFC 8693) or ``scp`` (a list or string)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, str):
        return frozenset(scp.split())
    if isinstance(scp, list):
        return frozenset(s for s in scp if isinstance(s, str))
    return frozenset()
