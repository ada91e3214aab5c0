"""The local issuer's authority: one signing key, its metadata, its key set and the tokens it mints.

Development and tests only (docs/auth.md, "A local issuer for development").
Rules it keeps:

* one asymmetric key (P-256, ES256 by default), generated or loaded; its
  ``kid`` is its RFC 7638 thumbprint, and the key set (`jwks`) holds only the
  public members;
* access tokens are RFC 9068 JWTs: header ``typ: at+jwt`` and ``kid``; claims
  ``iss`` (exactly the issuer), ``sub``, ``aud`` (the resource), ``client_id``,
  a space-separated ``scope``, ``iat``, ``exp``, a fresh ``jti``, and
  ``development_only: true``; no token is minted without an audience;
* the metadata (RFC 8414) names the issuer exactly, its ``jwks_uri`` and
  ``token_endpoint`` under it, and says ``development_only: true``;
* the token endpoint's logic (`token_response`) is pure: it takes the form and
  the client's credentials and returns a status and a JSON body. It grants
  ``client_credentials`` only, to a client presenting the issuer's secret
  (compared in constant time) under any client id; ``subject`` (an extension
  parameter) names the user the token is for, and without it ``sub`` is the
  client id, as RFC 9068 section 2.2 has it for the client credentials grant.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any, Iterable

from .._jose import PrivateKey, default_algorithm, generate_key, jwk_thumbprint, public_jwk, sign_jwt

__all__ = ["DevIssuer", "DEFAULT_SUBJECT", "DEFAULT_CLIENT", "DEFAULT_SCOPES", "DEFAULT_LIFETIME"]

DEFAULT_SUBJECT = "dev-user"
DEFAULT_CLIENT = "dev-client"
DEFAULT_SCOPES = ("mcp",)
#: Seconds a minted token lives unless asked otherwise.
DEFAULT_LIFETIME = 3600
#: The longest lifetime a token may be asked for (one day).
MAX_LIFETIME = 86400
METADATA_PATH = "/.well-known/oauth-authorization-server"
JWKS_PATH = "/jwks"
TOKEN_PATH = "/token"


class DevIssuer:
    """A minimal authorization server's authority: ``issuer`` URL, signing ``key``, token ``secret``.

    ``resource`` is the audience of tokens minted without one (e.g.
    ``http://127.0.0.1:8000/mcp``).
    """

    def __init__(
        self,
        issuer: str,
        *,
        key: PrivateKey | None = None,
        secret: str | None = None,
        resource: str | None = None,
    ) -> None:
        if not issuer or issuer.endswith("/"):
            raise ValueError(f"the issuer is a URL without a trailing slash, not {issuer!r}")
        self.issuer = issuer
        self.key: PrivateKey = key if key is not None else generate_key()
        self.secret = secret if secret is not None else secrets.token_urlsafe(32)
        self.resource = resource
        self.algorithm = default_algorithm(self.key)
        self._jwk = public_jwk(self.key)
        self.kid = jwk_thumbprint(self._jwk)

    def metadata(self) -> dict[str, Any]:
        """The RFC 8414 authorization server metadata."""
        return {
            "issuer": self.issuer,
            "jwks_uri": self.issuer + JWKS_PATH,
            "token_endpoint": self.issuer + TOKEN_PATH,
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "response_types_supported": [],
            "development_only": True,
        }

    def jwks(self) -> dict[str, Any]:
        """The public key set: the one key, with its ``kid``, ``alg`` and ``use``."""
        return {"keys": [{**self._jwk, "kid": self.kid, "alg": self.algorithm, "use": "sig"}]}

    def mint(
        self,
        *,
        scopes: Iterable[str] = DEFAULT_SCOPES,
        subject: str = DEFAULT_SUBJECT,
        client_id: str = DEFAULT_CLIENT,
        resource: str | None = None,
        lifetime: int = DEFAULT_LIFETIME,
    ) -> str:
        """A signed JWT access token for ``subject`` through ``client_id``, for ``resource`` (else the default)."""
        audience = resource or self.resource
        if not audience:
            raise ValueError("a token needs an audience: pass resource= (the MCP server's URL, e.g. http://127.0.0.1:8000/mcp)")
        if not 0 < lifetime <= MAX_LIFETIME:
            raise ValueError(f"lifetime is 1..{MAX_LIFETIME} seconds, not {lifetime}")
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience,
            "client_id": client_id,
            "scope": " ".join(_scope_words(scopes)),
            "development_only": True,
        }
        return sign_jwt(self.key, claims, algorithm=self.algorithm, headers={"typ": "at+jwt", "kid": self.kid}, lifetime=lifetime)

    def token_response(self, form: dict[str, str], client_id: str | None, client_secret: str | None) -> tuple[int, dict[str, Any]]:
        """The token endpoint (RFC 6749 section 4.4, RFC 8707): status and JSON body for a parsed form."""
        if client_id is None or client_secret is None:
            return 401, _error("invalid_client", "authenticate with the issuer's secret (client_secret_basic or client_secret_post)")
        if not hmac.compare_digest(client_secret.encode(), self.secret.encode()):
            return 401, _error("invalid_client", "the client secret is not this issuer's secret")
        if form.get("grant_type") != "client_credentials":
            return 400, _error("unsupported_grant_type", "this development issuer grants client_credentials only")
        resource = form.get("resource") or self.resource
        if not resource:
            return 400, _error("invalid_target", "name the MCP server in resource (RFC 8707)")
        scope = form.get("scope")
        scopes = scope.split() if scope is not None else list(DEFAULT_SCOPES)
        try:
            lifetime = int(form.get("lifetime", DEFAULT_LIFETIME))
            token = self.mint(
                scopes=scopes, subject=form.get("subject") or client_id, client_id=client_id, resource=resource, lifetime=lifetime
            )
        except ValueError as exc:
            return 400, _error("invalid_request", str(exc))
        body = {"access_token": token, "token_type": "Bearer", "expires_in": lifetime, "scope": " ".join(scopes)}
        return 200, body


def _scope_words(scopes: Iterable[str]) -> list[str]:
    words = [word for scope in scopes for word in scope.split()]
    for word in words:
        if not all(0x21 <= ord(c) <= 0x7E and c not in '"\\' for c in word):
            raise ValueError(f"not a scope token (RFC 6749 section 3.3): {word!r}")
    return words


def _error(code: str, description: str) -> dict[str, Any]:
    return {"error": code, "error_description": description}
