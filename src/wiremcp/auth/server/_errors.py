"""One exception for every refused token, with a reason code (RFC 6750 section 3.1).

`AuthError.reason` says why, in words a log and a test can match; `status`
and `error` are what the HTTP answer carries (401 ``invalid_token`` or no
error code at all for a missing token, 401 ``use_dpop_nonce`` for a DPoP
proof without this server's nonce, 403 ``insufficient_scope``, 400
``invalid_request``, 503 when the authorization server cannot be reached).
Messages never echo the token or any of its claims' values beyond what the
server itself configured: a token is a credential, and error texts end up in
logs (security-considerations.mdx, "Token Theft").
"""

from __future__ import annotations

from typing import Literal

__all__ = ["AuthError", "Reason", "STATUS_BY_REASON"]

Reason = Literal[
    "missing",  # no credentials at all: 401 without an error code (RFC 6750 section 3.1)
    "malformed",  # not a JWT / not a token68 / unreadable claims
    "expired",
    "not_yet_valid",  # nbf (or iat) in the future
    "wrong_audience",  # aud does not name this resource
    "wrong_issuer",
    "bad_signature",
    "unknown_key",  # no key in the issuer's JWKS for the token's kid
    "bad_algorithm",  # alg outside the allow-list ("none", HS*, ...)
    "inactive",  # introspection said active: false
    "invalid_dpop",  # DPoP proof missing, invalid or not matching the token (RFC 9449)
    "use_dpop_nonce",  # the DPoP proof lacks this server's current nonce (RFC 9449 section 9)
    "insufficient_scope",
    "invalid_request",  # two credentials, token in the query string, ...
    "unavailable",  # the authorization server (metadata, JWKS, introspection) cannot be reached
]

#: The HTTP status for each reason.
STATUS_BY_REASON: dict[str, int] = {
    "insufficient_scope": 403,
    "invalid_request": 400,
    "unavailable": 503,
}


class AuthError(Exception):
    """A request's credentials were refused; ``reason`` says why (see `Reason`)."""

    def __init__(self, reason: Reason, message: str, *, scopes: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.reason: Reason = reason
        self.message = message
        #: For ``insufficient_scope``: every scope the operation needs.
        self.scopes = scopes

    @property
    def status(self) -> int:
        """The HTTP status the refusal gets (401 unless the reason names another, e.g. 403 for scope)."""
        return STATUS_BY_REASON.get(self.reason, 401)

    @property
    def error(self) -> str | None:
        """The RFC 6750 ``error`` code, or None (a request without credentials gets none)."""
        if self.reason == "missing":
            return None
        if self.reason == "insufficient_scope":
            return "insufficient_scope"
        if self.reason == "invalid_request":
            return "invalid_request"
        if self.reason == "unavailable":
            return None
        if self.reason == "use_dpop_nonce":
            return "use_dpop_nonce"
        return "invalid_token"

    def __repr__(self) -> str:
        return f"AuthError({self.reason!r}, {self.message!r})"
