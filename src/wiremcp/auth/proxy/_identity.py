"""Who signed in upstream: the claims the proxy trusts, and how they map to a user, an email and scopes.

Rules it keeps:

* claims come only from what the proxy verified itself: an ID token
  (`SignedClaims`: signature by the issuer's published keys, ``iss``
  exactly, ``aud`` naming the proxy's client, ``exp`` not past; OpenID
  Connect Core 3.1.3.7), a JWT access token checked the same way for the
  provider's API audience, or the provider's user endpoint answering the
  access token (`UserEndpointVerifier`: GitHub's ``/user``, an OIDC
  ``userinfo``). When two sources name a subject, they must agree;
* `ClaimMap` reads the subject (GitHub: the numeric ``id``, never the
  login, which a user can change), the email (not when the provider says
  ``email_verified: false``) and the roles or groups
  (dotted paths such as ``realm_access.roles``) and maps the roles to the
  MCP server's scopes with a table the deployment gives (``"*"``: every
  signed-in user). With a table, a user is granted only the scopes their
  roles map to; without one, every scope the client asked;
* `UserEndpointVerifier` caches each token's identity for its lifetime
  (the provider's expiry when it tells one, at most ``max_age`` seconds),
  in a bounded cache keyed by the token's SHA-256 (never the token); an
  expired entry, or a token the endpoint refuses, is asked again;
* the upstream tokens never leave the proxy: they are sent only to the
  provider's own endpoints (security_best_practices.mdx, "Token Passthrough").
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..server._discovery import JWKS, Fetcher, check_fetchable
from ..server._errors import AuthError
from ..server._jws import parse, verify_signature
from ..server._jwt import DEFAULT_ALGORITHMS, allowed_algorithms, audiences, check_times
from ..server._token import AccessToken, DPoPProof, scopes_of

__all__ = ["ClaimMap", "Identity", "SignedClaims", "UpstreamIdentity", "UserEndpointVerifier", "claim_at"]


def claim_at(claims: Mapping[str, Any], path: str) -> Any:
    """The claim at ``path``: a claim name, or a dotted path into nested objects (``realm_access.roles``).

    A claim whose whole name is ``path`` wins (namespaced claims such as
    ``https://example.com/roles`` hold dots).
    """
    if path in claims:
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


@dataclass(frozen=True)
class Identity:
    """A signed-in user as the proxy keeps them."""

    subject: str
    email: str | None = None
    roles: tuple[str, ...] = ()
    #: The MCP scopes the roles map to; None when the deployment gave no table.
    scopes: tuple[str, ...] | None = None

    def record(self) -> dict[str, Any]:
        """What the proxy keeps in the grant (the email, the roles, the scopes they map to)."""
        return {"email": self.email, "roles": list(self.roles), "scopes": None if self.scopes is None else list(self.scopes)}


@dataclass(frozen=True)
class ClaimMap:
    """Where a provider puts the subject, the email and the roles, and the roles' scopes."""

    subject: str = "sub"
    #: Claims tried in order for the email.
    email: tuple[str, ...] = ("email",)
    #: Claims (or dotted paths) holding roles or groups: strings or lists of strings.
    roles: tuple[str, ...] = ()
    #: Role or group -> the MCP scopes it grants; ``"*"`` applies to every user. None: no mapping.
    role_scopes: Mapping[str, tuple[str, ...]] | None = None

    def identify(self, claims: Mapping[str, Any]) -> Identity:
        """The `Identity` in verified ``claims``; `AuthError` when they name no subject."""
        sub = claim_at(claims, self.subject)
        if isinstance(sub, bool) or not isinstance(sub, (str, int)) or sub == "":
            raise AuthError("malformed", f"the upstream identity has no {self.subject} claim")
        email = next((v for v in (claim_at(claims, name) for name in self.email) if isinstance(v, str) and v), None)
        if claims.get("email_verified") is False:  # an address the provider has not verified is not passed on
            email = None
        roles = tuple(dict.fromkeys(r for path in self.roles for r in _strings(claim_at(claims, path))))
        scopes: tuple[str, ...] | None = None
        if self.role_scopes is not None:
            table = self.role_scopes
            scopes = tuple(dict.fromkeys(s for role in ("*", *roles) for s in table.get(role, ())))
        return Identity(subject=str(sub), email=email, roles=roles, scopes=scopes)


def role_table(table: Mapping[str, Iterable[str]] | None) -> Mapping[str, tuple[str, ...]] | None:
    """``role_scopes`` as given by a user (a scope string or a list per role), normalised."""
    if table is None:
        return None
    return {role: tuple(scopes.split() if isinstance(scopes, str) else scopes) for role, scopes in table.items()}


class SignedClaims:
    """The claims of a JWT signed by ``issuer`` (keys at ``jwks_uri``) for ``audience``; `AuthError` otherwise.

    Used for ID tokens (``audience`` is the proxy's client id) and for JWT
    access tokens whose audience is a provider-specific identifier rather
    than a URI (an Auth0 API identifier, an Entra application id).
    """

    def __init__(self, *, issuer: str, jwks_uri: str, audience: str, algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
                 leeway: float = 60.0, what: str = "ID token", clock: Callable[[], float] = time.time) -> None:
        check_fetchable(jwks_uri, "jwks_uri")
        self.issuer = issuer
        self.audience = audience
        self.algorithms = allowed_algorithms(algorithms)
        self.leeway = leeway
        self.what = what
        self._clock = clock
        self._fetcher = Fetcher()
        self.jwks = JWKS(self._jwks_uri, self._fetcher)
        self._uri = jwks_uri

    async def _jwks_uri(self) -> str:
        return self._uri

    async def check(self, token: str) -> dict[str, Any]:
        """The claims of ``token`` once its signature, issuer, audience and times are checked; `AuthError` otherwise."""
        header, claims, signing_input, signature = parse(token, what=self.what)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise AuthError("bad_algorithm", f"the {self.what}'s signing algorithm is not accepted")
        kid = header.get("kid")
        jwk = await self.jwks.key(kid if isinstance(kid, str) else None)
        import jwt

        try:
            key = jwt.PyJWK(jwk, algorithm=alg).key
        except jwt.PyJWTError:
            raise AuthError("bad_algorithm", f"the {self.what}'s alg does not fit the issuer's key") from None
        if not verify_signature(alg, key, signing_input, signature):
            raise AuthError("bad_signature", f"the {self.what}'s signature does not verify")
        if claims.get("iss") != self.issuer:
            raise AuthError("wrong_issuer", f"the {self.what} was not issued by {self.issuer}")
        if self.audience not in audiences(claims):
            raise AuthError("wrong_audience", f"the {self.what} is not for {self.audience}")
        check_times(claims, self._clock(), self.leeway)
        return claims

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._fetcher.aclose()


@dataclass
class _Entry:
    token: AccessToken
    until: float


class UserEndpointVerifier:
    """Opaque access tokens checked by asking the provider's user endpoint (GitHub ``/user``, OIDC ``userinfo``).

    A 200 JSON object is the token's identity (``subject`` names the claim
    holding the user's id); a 401 or 403 refutes the token (``inactive``);
    anything else is ``unavailable``. Answers are cached (see the module docs).
    """

    def __init__(self, url: str, *, subject: str = "sub", max_age: float = 300.0, max_entries: int = 10_000,
                 headers: Mapping[str, str] | None = None, clock: Callable[[], float] = time.time) -> None:
        check_fetchable(url, "user endpoint")
        self.url = url
        self.subject = subject
        self.max_age = max_age
        self.max_entries = max_entries
        self.headers = dict(headers or {})
        self._clock = clock
        self._fetcher = Fetcher()
        self._cache: OrderedDict[str, _Entry] = OrderedDict()
        #: How many times the endpoint was asked (observable for tests and metrics).
        self.requests = 0

    def __repr__(self) -> str:
        return f"UserEndpointVerifier({self.url!r})"

    def forget(self, token: str) -> None:
        """Drop ``token``'s cached identity (after a revocation)."""
        self._cache.pop(hashlib.sha256(token.encode()).hexdigest(), None)

    async def verify(self, token: str, *, dpop: DPoPProof | None = None, method: str = "GET", url: str = "") -> AccessToken:
        """The identity the user endpoint gives for ``token`` (cached, see the class docs); `AuthError` otherwise."""
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self._clock()
        entry = self._cache.get(key)
        if entry is not None:
            if entry.until > now:
                self._cache.move_to_end(key)
                return entry.token
            del self._cache[key]
        claims, expires_at = await self._ask(token)
        sub = claims.get(self.subject)
        if isinstance(sub, bool) or not isinstance(sub, (str, int)) or sub == "":
            raise AuthError("malformed", f"the user endpoint's answer has no {self.subject}")
        verified = AccessToken(subject=str(sub), client_id=None, scopes=scopes_of(claims), claims=claims, expires_at=expires_at)
        until = now + self.max_age if expires_at is None else min(now + self.max_age, expires_at)
        if until > now:
            self._cache[key] = _Entry(verified, until)
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return verified

    async def _ask(self, token: str) -> tuple[dict[str, Any], float | None]:
        import httpx

        self.requests += 1
        headers = {"accept": "application/json", **self.headers, "authorization": f"Bearer {token}"}
        try:
            response = await self._fetcher.client().get(self.url, headers=headers)
        except httpx.HTTPError as exc:
            raise AuthError("unavailable", f"the user endpoint cannot be reached ({type(exc).__name__})") from None
        if response.status_code in (401, 403):
            raise AuthError("inactive", "the provider refused the access token")
        try:
            claims = response.json() if response.status_code == 200 else None
        except ValueError:
            claims = None
        if type(claims) is not dict:
            raise AuthError("unavailable", f"the user endpoint answered {response.status_code}")
        return claims, _expiry(response.headers.get("github-authentication-token-expiration"))

    async def aclose(self) -> None:
        """Close the HTTP session."""
        await self._fetcher.aclose()


def _expiry(value: str | None) -> float | None:
    """GitHub's ``GitHub-Authentication-Token-Expiration`` header (``2026-01-01 00:00:00 UTC``) as a timestamp."""
    if not value:
        return None
    from datetime import datetime, timezone

    for fmt in ("%Y-%m-%d %H:%M:%S UTC", "%Y-%m-%d %H:%M:%S %z"):
        try:
            moment = datetime.strptime(value.strip(), fmt)
        except ValueError:
            continue
        return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()
    return None


@dataclass(frozen=True)
class UpstreamIdentity:
    """The identity behind an upstream token response (``Upstream.identify``): verified claims through `claims`."""

    claims: ClaimMap
    #: Checks ``id_token`` (a response without one is refused when this is set).
    id_token: SignedClaims | None = None
    #: Checks the access token when it is a JWT for the provider's API.
    access_token: SignedClaims | None = None
    #: Asks the provider's user endpoint with the access token.
    user_endpoint: UserEndpointVerifier | None = None

    async def __call__(self, response: Mapping[str, Any]) -> Identity:
        """The `Identity` behind an upstream token ``response`` (its tokens verified here)."""
        merged: dict[str, Any] = {}
        subjects: set[str] = set()

        def add(claims: Mapping[str, Any]) -> None:
            sub = claims.get("sub")
            if isinstance(sub, str):
                subjects.add(sub)
            merged.update(claims)

        access = response.get("access_token")
        if self.id_token is not None:
            id_token = response.get("id_token")
            if not isinstance(id_token, str):
                raise AuthError("malformed", "the upstream token response has no id_token: ask for the openid scope")
            add(await self.id_token.check(id_token))
        if self.access_token is not None and isinstance(access, str):
            add(await self.access_token.check(access))
        if self.user_endpoint is not None and isinstance(access, str):
            add((await self.user_endpoint.verify(access)).claims)
        if len(subjects) > 1:
            raise AuthError("malformed", "the upstream tokens name different subjects")
        if not merged:
            raise AuthError("malformed", "nothing verified says who signed in")
        return self.claims.identify(merged)
