"""`IntrospectionVerifier`: opaque (or any) tokens checked by asking the issuer (RFC 7662).

The resource server authenticates to the introspection endpoint as a
client (``client_secret_basic`` by default, ``client_secret_post`` on
request) and posts ``token`` with ``token_type_hint=access_token``. The
answer is trusted only when it is a 200 JSON object, and then:

1. ``active`` must be ``true`` -- ``inactive``;
2. ``iss``, when present, must be the configured issuer -- ``wrong_issuer``;
3. ``aud`` must contain this resource's canonical URI -- ``wrong_audience``
   (a response without ``aud`` is refused too, unless
   ``require_audience=False``: the spec requires the audience check);
4. ``exp``, when present, not past; ``nbf`` not in the future -- ``expired``
   / ``not_yet_valid``;
5. the DPoP binding (``cnf.jkt``), as for JWTs.

Any other answer (an error status, not JSON) is ``unavailable`` (503): the
token's validity is unknown, not refuted. Nothing is cached: every request
asks (a deployment that wants a cache wraps the verifier).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal

from ._discovery import Fetcher, canonical_uri, check_fetchable, metadata_endpoint
from ._dpop import DEFAULT_DPOP_ALGORITHMS, ReplayCache, check_binding
from ._errors import AuthError
from ._jwt import DEFAULT_LEEWAY, allowed_algorithms, check_times, names_resource, token_from_claims
from ._token import AccessToken, DPoPProof

if TYPE_CHECKING:
    import httpx

__all__ = ["IntrospectionVerifier"]


class IntrospectionVerifier:
    """Verify tokens at the issuer's introspection endpoint (see the module docs)."""

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        client_id: str,
        client_secret: str,
        introspection_endpoint: str | None = None,
        auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic",
        require_audience: bool = True,
        leeway: float = DEFAULT_LEEWAY,
        dpop_algorithms: Iterable[str] = DEFAULT_DPOP_ALGORITHMS,
        http_client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_fetchable(issuer, "issuer")
        if introspection_endpoint is not None:
            check_fetchable(introspection_endpoint, "introspection_endpoint")
        if auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError("auth_method must be client_secret_basic or client_secret_post")
        self.issuer = issuer
        self.resource = canonical_uri(resource)
        self.client_id = client_id
        self._client_secret = client_secret
        self.auth_method = auth_method
        self.require_audience = require_audience
        self.leeway = leeway
        self.dpop_algorithms = allowed_algorithms(dpop_algorithms)
        self._endpoint = introspection_endpoint
        self._fetcher = Fetcher(http_client)
        self._clock = clock
        self.replay = ReplayCache()

    def __repr__(self) -> str:  # never the secret
        return f"IntrospectionVerifier(issuer={self.issuer!r}, resource={self.resource!r}, client_id={self.client_id!r})"

    async def _locate(self) -> str:
        if self._endpoint is None:
            self._endpoint = await metadata_endpoint(self._fetcher, self.issuer, "introspection_endpoint")
        return self._endpoint

    async def aclose(self) -> None:
        """Close the HTTP session used to reach the authorization server."""
        await self._fetcher.aclose()

    async def verify(self, token: str, *, dpop: DPoPProof | None = None, method: str = "POST", url: str = "") -> AccessToken:
        """Ask the introspection endpoint (RFC 7662) about ``token``; the AccessToken, or AuthError."""
        endpoint = await self._locate()
        form = {"token": token, "token_type_hint": "access_token"}
        auth: tuple[str, str] | None = None
        if self.auth_method == "client_secret_basic":
            auth = (self.client_id, self._client_secret)
        else:
            form["client_id"] = self.client_id
            form["client_secret"] = self._client_secret
        status, answer = await self._fetcher.post_form(endpoint, form, auth)
        if status != 200 or type(answer) is not dict:
            raise AuthError("unavailable", f"the introspection endpoint answered {status}")
        claims: dict[str, Any] = answer
        if claims.get("active") is not True:
            raise AuthError("inactive", "the access token is not active")
        iss = claims.get("iss")
        if iss is not None and iss != self.issuer:
            raise AuthError("wrong_issuer", f"the access token was not issued by {self.issuer}")
        if "aud" in claims or self.require_audience:
            if not names_resource(claims, self.resource):
                raise AuthError("wrong_audience", f"the access token is not for this resource ({self.resource})")
        check_times(claims, self._clock(), self.leeway, require_exp=False)
        cnf = claims.get("cnf")
        cnf = cnf if isinstance(cnf, dict) else None
        check_binding(
            token, cnf, dpop, method=method, url=url or self.resource,
            algorithms=self.dpop_algorithms, replay=self.replay, leeway=self.leeway,
        )
        return token_from_claims(claims, cnf)
