"""The token requests of the grants other than the authorization code (`_grants` holds their settings).

Rules it keeps:

* **client credentials** (OAuth 2.1 section 4.2): the grant's own client id
  and secret, or ``private_key_jwt`` when it has a key;
* **JWT bearer** (RFC 7523): the assertion (a string, or a callable that
  returns one) as it is;
* **enterprise** (ID-JAG): first RFC 8693 token exchange at the enterprise
  identity provider (the ID token in, an ID-JAG for the authorization
  server's issuer and the resource out; the IdP client authenticates with
  Basic when it has a secret), then the ID-JAG as a JWT bearer assertion;
  an answer that is not an ID-JAG is an `AuthError`;
* every request carries the ``resource`` (RFC 8707) and the scopes asked
  for, when there are any;
* an unknown grant is a `TypeError`;
* `grant_client`: who sends a grant's requests, at the token endpoint and
  at the revocation endpoint (`OAuthClient.logout`).
"""

from __future__ import annotations

from ._discovery import ServerMetadata
from ._errors import AuthError
from ._grants import (
    ID_JAG,
    ID_TOKEN,
    JWT_BEARER,
    TOKEN_EXCHANGE,
    ClientCredentialsGrant,
    EnterpriseGrant,
    Grant,
    JWTBearerGrant,
    resolve_token,
)
from ._http import Fetcher
from ._jose import load_private_key
from ._token_endpoint import TokenClient, basic_credentials

__all__ = ["grant_request", "grant_client", "token_exchange"]


async def grant_request(
    grant: Grant, fetch: Fetcher, metadata: ServerMetadata, resource: str, scopes: list[str]
) -> tuple[dict[str, str], TokenClient]:
    """The token request form of ``grant`` and who sends it (see the module docstring)."""
    if isinstance(grant, ClientCredentialsGrant):
        form = {"grant_type": "client_credentials", "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return form, grant_client(grant)
    if isinstance(grant, JWTBearerGrant):
        form = {"grant_type": JWT_BEARER, "assertion": await resolve_token(grant.assertion), "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return form, grant_client(grant)
    if isinstance(grant, EnterpriseGrant):
        jag = await token_exchange(grant, fetch, metadata, resource, scopes)
        form = {"grant_type": JWT_BEARER, "assertion": jag, "resource": resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return form, grant_client(grant)
    raise TypeError(f"unknown grant {grant!r}")


def grant_client(grant: Grant) -> TokenClient:
    """Who sends ``grant``'s requests to the authorization server (its token and revocation endpoints)."""
    if isinstance(grant, ClientCredentialsGrant):
        key = load_private_key(grant.private_key) if isinstance(grant.private_key, str) else grant.private_key
        return TokenClient(
            grant.client_id, grant.client_secret, "private_key_jwt" if key is not None else None, key, grant.signing_algorithm
        )
    return TokenClient(grant.client_id, grant.client_secret)


async def token_exchange(grant: EnterpriseGrant, fetch: Fetcher, metadata: ServerMetadata, resource: str, scopes: list[str]) -> str:
    """RFC 8693 at the enterprise IdP: ID token in, ID-JAG out."""
    step = "token exchange at the identity provider"
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "audience": metadata.issuer,
        "resource": resource,
        "subject_token": await resolve_token(grant.id_token),
        "subject_token_type": ID_TOKEN,
    }
    if scopes:
        form["scope"] = " ".join(scopes)
    headers: dict[str, str] = {}
    if grant.idp_client_id is not None:
        if grant.idp_client_secret:
            headers["Authorization"] = basic_credentials(grant.idp_client_id, grant.idp_client_secret)
        else:
            form["client_id"] = grant.idp_client_id
    resp = await fetch.request("POST", grant.idp_token_endpoint, step, data=form, headers=headers)
    if resp.status != 200:
        error, text = resp.oauth_error()
        raise AuthError(step, f"{grant.idp_token_endpoint} refused: {text}", error=error)
    doc = resp.json(step)
    token = doc.get("access_token")
    if doc.get("issued_token_type") != ID_JAG or not isinstance(token, str) or not token:
        raise AuthError(step, f"{grant.idp_token_endpoint} did not issue an ID-JAG")
    return token
