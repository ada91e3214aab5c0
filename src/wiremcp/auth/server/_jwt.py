"""`JWTVerifier`: JWT access tokens (RFC 9068) checked against the issuer's published keys.

The checks, in order (the first that fails decides the `AuthError` reason):

1. the token is a compact JWS (three base64url parts, a JSON object header
   and payload, no ``crit``; see `_jws`) -- ``malformed``;
2. ``alg`` is in the allow-list -- ``bad_algorithm``. The allow-list holds
   asymmetric algorithms only: ``none`` and the ``HS*`` family are refused
   at construction, so a public key can never be used as an HMAC secret;
3. ``typ``, when present, is ``at+jwt`` or ``application/at+jwt`` (RFC 9068
   section 2.1; ``JWT`` is accepted unless ``require_at_jwt``) -- ``malformed``;
4. the issuer publishes a key for ``kid`` (`JWKS`: an unknown ``kid``
   fetches the set again, rate-limited) -- ``unknown_key``; the key's own
   ``alg``, when it has one, must equal the token's -- ``bad_algorithm``;
5. the signature verifies -- ``bad_signature``;
6. ``iss`` is the configured issuer, compared exactly -- ``wrong_issuer``;
7. ``aud`` (a string or a list) contains this resource's canonical URI
   (scheme and host compared case-insensitively) -- ``wrong_audience``.
   A token for another resource is never accepted (security_best_practices,
   "Token Passthrough");
8. ``exp`` is present and not past, ``nbf`` and ``iat`` not in the future,
   each with ``leeway`` seconds of clock skew -- ``expired`` /
   ``not_yet_valid``;
9. the DPoP binding (`wiremcp.auth.server._dpop`) -- ``invalid_dpop``.

Scopes come from ``scope`` (space-separated) or ``scp`` (a list).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ._discovery import JWKS, DEFAULT_JWKS_MAX_AGE, DEFAULT_JWKS_MIN_REFRESH, Fetcher, canonical_uri, check_fetchable, metadata_endpoint
from ._dpop import DEFAULT_DPOP_ALGORITHMS, ReplayCache, check_binding
from ._errors import AuthError
from ._jws import parse, verify_signature
from ._token import AccessToken, DPoPProof, scopes_of

if TYPE_CHECKING:
    import httpx

__all__ = ["JWTVerifier", "DEFAULT_ALGORITHMS", "DEFAULT_LEEWAY"]

#: Asymmetric JWS algorithms accepted unless configured otherwise (RFC 9068 section 4: RS256 at least).
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
#: Seconds of clock skew tolerated on exp, nbf and iat.
DEFAULT_LEEWAY = 60.0
_AT_JWT = ("at+jwt", "application/at+jwt")


def allowed_algorithms(algorithms: Iterable[str]) -> tuple[str, ...]:
    """The allow-list, refusing ``none`` and symmetric algorithms (ValueError)."""
    out = tuple(algorithms)
    if not out:
        raise ValueError("algorithms must name at least one JWS algorithm")
    for alg in out:
        if alg.lower() == "none" or alg.upper().startswith("HS"):
            raise ValueError(f"{alg!r} is not allowed for access tokens: use an asymmetric algorithm")
    return out


def audiences(claims: dict[str, Any]) -> list[str]:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list):
        return [a for a in aud if isinstance(a, str)]
    return []


def names_resource(claims: dict[str, Any], resource: str) -> bool:
    """Whether ``aud`` contains ``resource`` (already canonical)."""
    for aud in audiences(claims):
        try:
            if canonical_uri(aud) == resource:
                return True
        except ValueError:
            continue
    return False


class JWTVerifier:
    """Verify RFC 9068 JWT access tokens issued by ``issuer`` for ``resource`` (see the module docs).

    >>> verifier = JWTVerifier(issuer="https://auth.example.com", resource="https://mcp.example.com/mcp")

    ``jwks_uri`` skips discovery; otherwise it is read from the issuer's
    metadata on first use (RFC 8414, then OpenID Connect Discovery).
    """

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        jwks_uri: str | None = None,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = DEFAULT_LEEWAY,
        require_at_jwt: bool = False,
        dpop_algorithms: Iterable[str] = DEFAULT_DPOP_ALGORITHMS,
        jwks_max_age: float = DEFAULT_JWKS_MAX_AGE,
        jwks_min_refresh_interval: float = DEFAULT_JWKS_MIN_REFRESH,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_fetchable(issuer, "issuer")
        if jwks_uri is not None:
            check_fetchable(jwks_uri, "jwks_uri")
        self.issuer = issuer
        self.resource = canonical_uri(resource)
        self.algorithms = allowed_algorithms(algorithms)
        self.dpop_algorithms = allowed_algorithms(dpop_algorithms)
        self.leeway = leeway
        self.require_at_jwt = require_at_jwt
        self._jwks_uri = jwks_uri
        self._clock = clock
        self._fetcher = Fetcher(http_client)
        self.jwks = JWKS(
            self._locate_jwks, self._fetcher, max_age=jwks_max_age, min_refresh_interval=jwks_min_refresh_interval
        )
        self.replay = ReplayCache()
        # Parsed keys by (kid, alg), with the JWK they came from: loading a key costs more than
        # checking a signature with it, so it is done once per key (a new key set, new objects).
        self._parsed: dict[tuple[str | None, str], tuple[dict[str, Any], Any]] = {}

    async def _locate_jwks(self) -> str:
        if self._jwks_uri is None:
            self._jwks_uri = await metadata_endpoint(self._fetcher, self.issuer, "jwks_uri")
        return self._jwks_uri

    async def aclose(self) -> None:
        """Close the HTTP session used to fetch the keys (JWKS)."""
        await self._fetcher.aclose()

    async def verify(self, token: str, *, dpop: DPoPProof | None = None, method: str = "POST", url: str = "") -> AccessToken:
        """Check the JWT's signature, type, issuer, audience and times (RFC 9068); the AccessToken, or AuthError."""
        header, claims, signing_input, signature = parse(token)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise AuthError("bad_algorithm", "the access token's signing algorithm is not accepted")
        typ = header.get("typ")
        if typ is None:
            typ_ok = not self.require_at_jwt
        elif not isinstance(typ, str):
            typ_ok = False
        else:
            typ_ok = typ.lower() in _AT_JWT or (typ.upper() == "JWT" and not self.require_at_jwt)
        if not typ_ok:
            raise AuthError("malformed", "the token's typ is not at+jwt: it is not an access token")
        kid = header.get("kid")
        kid = kid if isinstance(kid, str) else None
        jwk = await self.jwks.key(kid)
        if "alg" in jwk and jwk["alg"] != alg:
            raise AuthError("bad_algorithm", "the token's alg is not the one its key is published for")
        slot = (kid, alg)
        cached = self._parsed.get(slot)
        if cached is not None and cached[0] is jwk:
            key = cached[1]
        else:
            import jwt

            try:
                key = jwt.PyJWK(jwk, algorithm=alg).key
            except jwt.PyJWTError:
                raise AuthError("bad_algorithm", "the token's alg does not fit the issuer's key") from None
            if len(self._parsed) >= 64:
                self._parsed.clear()
            self._parsed[slot] = (jwk, key)
        if not verify_signature(alg, key, signing_input, signature):
            raise AuthError("bad_signature", "the access token's signature does not verify")
        if claims.get("iss") != self.issuer:
            raise AuthError("wrong_issuer", f"the access token was not issued by {self.issuer}")
        if not names_resource(claims, self.resource):
            raise AuthError("wrong_audience", f"the access token is not for this resource ({self.resource})")
        now = self._clock()
        check_times(claims, now, self.leeway)
        cnf = claims.get("cnf")
        cnf = cnf if isinstance(cnf, dict) else None
        check_binding(
            token, cnf, dpop, method=method, url=url or self.resource,
            algorithms=self.dpop_algorithms, replay=self.replay, leeway=self.leeway,
        )
        return token_from_claims(claims, cnf)


def check_times(claims: dict[str, Any], now: float, leeway: float, *, require_exp: bool = True) -> None:
    exp = claims.get("exp")
    if exp is None:
        if require_exp:
            raise AuthError("malformed", "the access token has no exp claim")
    elif not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise AuthError("malformed", "the access token's exp is not a number")
    elif exp <= now - leeway:
        raise AuthError("expired", "the access token has expired")
    for name in ("nbf", "iat"):
        value = claims.get(name)
        if value is None:
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise AuthError("malformed", f"the access token's {name} is not a number")
        if value > now + leeway:
            raise AuthError("not_yet_valid", f"the access token is not valid yet ({name} is in the future)")


def token_from_claims(claims: dict[str, Any], cnf: dict[str, Any] | None) -> AccessToken:
    sub = claims.get("sub")
    client_id = claims.get("client_id")
    if not isinstance(client_id, str):
        azp = claims.get("azp")
        client_id = azp if isinstance(azp, str) else None
    exp = claims.get("exp")
    return AccessToken(
        subject=sub if isinstance(sub, str) else None,
        client_id=client_id,
        scopes=scopes_of(claims),
        claims=claims,
        expires_at=float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None,
        cnf=cnf,
    )
