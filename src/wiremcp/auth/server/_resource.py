"""`ResourceServer`: what an MCP server protected by OAuth says and checks (RFC 9728, RFC 6750).

It holds the configuration (the resource's canonical URI, its authorization
servers, its scopes, a `TokenVerifier`) and the rules; the HTTP transport
(`wiremcp.transports.http._auth`) applies them to requests:

* the protected resource metadata document (RFC 9728 section 2): served at
  ``/.well-known/oauth-protected-resource`` followed by the resource's path
  (``metadata_path``; section 3.1) and at the root well-known URL;
  ``resource`` is the canonical URI tokens must name in ``aud``;
* credentials (RFC 6750 section 2.1, RFC 9449 section 7.1): exactly one
  ``Authorization`` header, scheme ``Bearer`` or ``DPoP`` (case-insensitive)
  followed by one token68; with ``DPoP``, exactly one ``DPoP`` header. A
  token in the query string is refused (authorization/index.mdx, "Access
  Token Usage"). No credentials: 401 without an error code;
* the token is verified by the verifier, then must carry every scope of
  ``required_scopes`` (403 ``insufficient_scope`` otherwise). Scopes that
  imply others (``scope_implies={"admin": ["mcp"]}``) are expanded first, so
  the token's `AccessToken.scopes` are its effective scopes
  (authorization/index.mdx: "Servers MUST account for scope hierarchies");
* ``WWW-Authenticate`` (RFC 6750 section 3, RFC 9728 section 5.1): always
  ``resource_metadata``; ``scope`` with the scopes the request needs;
  ``error`` and ``error_description`` once a token was presented. A request
  that used the DPoP scheme gets a ``DPoP`` challenge (with ``algs``)
  instead of ``Bearer``;
* with ``dpop_nonce=True`` (RFC 9449 section 9), a DPoP proof must carry a
  nonce this server gave out (`DPoPNonces`): without one, 401
  ``use_dpop_nonce``, and the transport sends `dpop_nonce` in ``DPoP-Nonce``;
  a request accepted with the previous window's nonce gets the current one
  in ``DPoP-Nonce`` on its answer, whatever its status (`fresh_nonce`).

The token is verified for this resource only and is never forwarded: a
handler that calls another service gets its own token for it
(security_best_practices.mdx, "Token Passthrough").
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit

from ._discovery import canonical_uri
from ._dpop import DEFAULT_DPOP_ALGORITHMS, DPoPNonces, proof_nonce
from ._errors import AuthError
from ._token import AccessToken, DPoPProof, TokenVerifier

__all__ = ["ResourceServer", "METADATA_WELL_KNOWN"]

METADATA_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 section 3.3 scope-token


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _scopes(value: Iterable[str] | None, what: str) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(value or ()))
    for scope in out:
        if not _SCOPE_TOKEN.fullmatch(scope):
            raise ValueError(f"{what}: {scope!r} is not a valid scope (RFC 6749 section 3.3)")
    return out


class ResourceServer:
    """An MCP server as an OAuth 2.1 resource server (see the module docs).

    >>> from wiremcp.auth.server import JWTVerifier
    >>> rs = ResourceServer(
    ...     JWTVerifier(issuer="https://auth.example.com", resource="https://mcp.example.com/mcp"),
    ...     resource="https://mcp.example.com/mcp",
    ...     authorization_servers=["https://auth.example.com"],
    ...     required_scopes=["mcp"],
    ... )
    >>> rs.metadata_path
    '/.well-known/oauth-protected-resource/mcp'
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Iterable[str],
        scopes_supported: Iterable[str] | None = None,
        required_scopes: Iterable[str] = (),
        scope_implies: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        dpop: bool = True,
        dpop_algorithms: Iterable[str] = DEFAULT_DPOP_ALGORITHMS,
        dpop_nonce: bool = False,
        dpop_nonce_secret: bytes | None = None,
        dpop_nonce_lifetime: float = 300.0,
        extra_metadata: Mapping[str, Any] | None = None,
        authorization_server_app: Any = None,
    ) -> None:
        self.verifier = verifier
        #: An authorization server served on this resource's origin (the OAuth proxy,
        #: `wiremcp.auth.proxy`): an ASGI app with ``handles(path)``; `MCPApp` gives it those paths.
        self.authorization_server_app = authorization_server_app
        self.resource = canonical_uri(resource)
        servers = list(authorization_servers)
        if not servers:
            # authorization-server-discovery.mdx: the document MUST list at least one.
            raise ValueError("authorization_servers must name at least one authorization server")
        self.authorization_servers = servers
        self.required_scopes = _scopes(required_scopes, "required_scopes")
        self.scopes_supported = _scopes(scopes_supported, "scopes_supported") if scopes_supported is not None else None
        self.scope_implies = {k: tuple(v) for k, v in (scope_implies or {}).items()}
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.dpop = dpop
        self.dpop_algorithms = tuple(dpop_algorithms)
        #: Server nonces for DPoP proofs (RFC 9449 section 9), or None.
        self.nonces = DPoPNonces(dpop_nonce_secret, lifetime=dpop_nonce_lifetime) if dpop and dpop_nonce else None
        self.extra_metadata = dict(extra_metadata or {})
        parts = urlsplit(self.resource)
        path = parts.path.rstrip("/")
        #: Where the metadata document is served (RFC 9728 section 3.1: inserted before the path).
        self.metadata_path = METADATA_WELL_KNOWN + path
        #: Its absolute URL, for ``resource_metadata`` in challenges.
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    # -- the metadata document ----------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The protected resource metadata document (RFC 9728 section 2)."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        if self.dpop:
            doc["dpop_signing_alg_values_supported"] = list(self.dpop_algorithms)
        doc.update(self.extra_metadata)
        return doc

    # -- checking a request -------------------------------------------------

    async def authenticate(
        self,
        authorization: list[str],
        dpop: list[str],
        *,
        method: str,
        query: str = "",
    ) -> AccessToken:
        """The verified token of a request, from its ``Authorization`` and ``DPoP`` header values.

        Raises `AuthError`; the token returned carries every ``required_scopes``.
        """
        if "access_token=" in query:
            raise AuthError("invalid_request", "access tokens must not be sent in the query string")
        if not authorization:
            raise AuthError("missing", "this resource needs an access token (Authorization: Bearer ...)")
        if len(authorization) > 1:
            raise AuthError("invalid_request", "the request carries more than one Authorization header")
        scheme, _, credentials = authorization[0].strip().partition(" ")
        credentials = credentials.strip(" ")
        kind = scheme.lower()
        if kind not in ("bearer", "dpop") or (kind == "dpop" and not self.dpop):
            raise AuthError("missing", "this resource accepts the Bearer authorization scheme only")
        if not _TOKEN68.fullmatch(credentials):
            raise AuthError("malformed", "the Authorization header does not carry one token")
        proof: DPoPProof | None = None
        if kind == "dpop":
            if len(dpop) != 1 or not dpop[0].strip():
                raise AuthError("invalid_dpop", "the DPoP scheme needs exactly one DPoP header with a proof")
            proof = DPoPProof(dpop[0].strip())
            if self.nonces is not None and not self.nonces.valid(proof_nonce(proof.jwt)):
                raise AuthError("use_dpop_nonce", "the DPoP proof must carry this server's nonce (DPoP-Nonce)")
        token = await self.verifier.verify(credentials, dpop=proof, method=method, url=self.resource)
        token = self.expand(token)
        missing = [s for s in self.required_scopes if s not in token.scopes]
        if missing:
            raise AuthError(
                "insufficient_scope",
                f"this resource needs the scope {' '.join(self.required_scopes)}",
                scopes=self.required_scopes,
            )
        return token

    def dpop_nonce(self) -> str | None:
        """The nonce to send in ``DPoP-Nonce`` now, or None when nonces are not used."""
        return self.nonces.current() if self.nonces is not None else None

    def fresh_nonce(self, dpop: list[str]) -> str | None:
        """The nonce to send with an accepted request's answer (RFC 9449 section 8): the current one
        when the proof in ``dpop`` (the ``DPoP`` header values) carried an older one still accepted,
        so that the client moves on before that one runs out; None when it is current or nonces are
        not used."""
        nonces = self.nonces
        if nonces is None or len(dpop) != 1:
            return None
        current = nonces.current()
        return None if proof_nonce(dpop[0].strip()) == current else current

    def expand(self, token: AccessToken) -> AccessToken:
        """``token`` with the scopes its scopes imply (``scope_implies``) added."""
        if not self.scope_implies:
            return token
        scopes = set(token.scopes)
        todo = list(scopes)
        while todo:
            for implied in self.scope_implies.get(todo.pop(), ()):
                if implied not in scopes:
                    scopes.add(implied)
                    todo.append(implied)
        return token if len(scopes) == len(token.scopes) else replace(token, scopes=frozenset(scopes))

    def needed_scopes(self, operation_scopes: Iterable[str]) -> tuple[str, ...]:
        """Every scope an operation needs: ``required_scopes`` and its own, in that order."""
        return tuple(dict.fromkeys((*self.required_scopes, *operation_scopes)))

    def challenge(self, error: AuthError, *, dpop_scheme: bool = False) -> str:
        """The ``WWW-Authenticate`` value answering ``error`` (see the module docs)."""
        params = [f"resource_metadata={_quoted(self.metadata_url)}"]
        scopes = error.scopes or self.required_scopes or self.scopes_supported or ()
        if scopes:
            params.append(f"scope={_quoted(' '.join(scopes))}")
        code = error.error
        if code is not None:
            params.append(f"error={_quoted(code)}")
            params.append(f"error_description={_quoted(error.message)}")
        if dpop_scheme:
            params.append(f"algs={_quoted(' '.join(self.dpop_algorithms))}")
            return "DPoP " + ", ".join(params)
        return "Bearer " + ", ".join(params)
