"""Client identities and the grants other than the authorization code flow.

* `PreRegisteredClient`: credentials issued out of band, bound to one
  authorization server by its ``issuer`` (2026-07-28 client-registration.mdx,
  "Pre-registration", "Authorization Server Binding");
* `ClientCredentialsGrant`: the ``client_credentials`` grant for a client
  acting on its own behalf, authenticated by ``private_key_jwt`` or a client
  secret (extensions/auth/oauth-client-credentials.mdx);
* `JWTBearerGrant`: the RFC 7523 JWT-bearer grant with a workload identity
  token as the assertion (workload identity federation); a failure is final:
  never retried, never replaced by another grant;
* `EnterpriseGrant`: enterprise-managed authorization
  (extensions/auth/enterprise-managed-authorization.mdx): an RFC 8693 token
  exchange at the enterprise IdP turns the user's ID token into an ID-JAG,
  which the JWT-bearer grant trades for an access token at the MCP server's
  authorization server.

An assertion or ID token may be given as a string or as a callable (sync or
async) returning a fresh one each time it is needed.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Union

from ._jose import PrivateKey

__all__ = [
    "PreRegisteredClient",
    "ClientCredentialsGrant",
    "JWTBearerGrant",
    "EnterpriseGrant",
    "Grant",
    "TokenSource",
    "resolve_token",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "ID_JAG",
    "ID_TOKEN",
    "CLIENT_ASSERTION_TYPE",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

#: A token given as is, or a callable producing a fresh one.
TokenSource = Union[str, Callable[[], Union[str, Awaitable[str]]]]


async def resolve_token(source: TokenSource) -> str:
    if isinstance(source, str):
        return source
    value = source()
    if inspect.isawaitable(value):
        value = await value
    assert isinstance(value, str)
    return value


@dataclass
class PreRegisteredClient:
    """Client credentials issued out of band, bound to one authorization server by ``issuer`` (None: any)."""

    client_id: str
    client_secret: str | None = None
    #: The issuer the credentials belong to; None: any (the caller vouches for them).
    issuer: str | None = None
    #: ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt`` or ``none``;
    #: None: chosen from the authorization server's metadata.
    token_endpoint_auth_method: str | None = None
    #: For ``private_key_jwt``: a private key (PEM text or a loaded key).
    private_key: PrivateKey | str | None = None
    signing_algorithm: str | None = None


@dataclass
class ClientCredentialsGrant:
    """The ``client_credentials`` grant: a client acting on its own behalf, authenticated by ``private_key_jwt`` (``private_key``) or a client secret."""

    client_id: str
    client_secret: str | None = None
    private_key: PrivateKey | str | None = None
    signing_algorithm: str | None = None
    scopes: list[str] | None = None


@dataclass
class JWTBearerGrant:
    """The RFC 7523 JWT-bearer grant with a workload identity token as the assertion; a failure is final, never retried with another grant."""

    assertion: TokenSource
    client_id: str | None = None
    client_secret: str | None = None
    scopes: list[str] | None = None


@dataclass
class EnterpriseGrant:
    """Enterprise-managed authorization: the user's ID token exchanged at the enterprise IdP (RFC 8693) for an ID-JAG, then traded for an access token by the JWT-bearer grant."""

    idp_token_endpoint: str
    id_token: TokenSource
    client_id: str
    client_secret: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    scopes: list[str] | None = None


Grant = Union[ClientCredentialsGrant, JWTBearerGrant, EnterpriseGrant]
