"""Token revocation (RFC 7009): what logging out asks of the authorization server.

Rules it keeps:

* only where the authorization server offers it: its metadata names a
  ``revocation_endpoint`` (RFC 8414 section 2); otherwise nothing is sent
  and the outcome says so;
* the refresh token first (``token_type_hint=refresh_token``), then the
  access token (``token_type_hint=access_token``): revoking the refresh
  token ends the grant at a server that follows RFC 7009 section 2.1, and
  a leaked access token is cut short where the server can revoke it;
* the client authenticates as it does at the token endpoint
  (`_token_endpoint.authenticate`): a public client sends its
  ``client_id`` in the body, a confidential one its secret or assertion;
  no DPoP proof (RFC 7009 defines none);
* HTTP 200 is success, whether or not the server knew the token (RFC 7009
  section 2.2). ``unsupported_token_type`` for the access token (a server
  that does not revoke self-contained JWT access tokens) is no failure when
  the refresh token was revoked; any other answer, or no answer, is a
  failure: one line naming the token, the endpoint and the server's error.
  A failure never stops the local tokens from being forgotten (the caller's
  part; `OAuthClient.logout`);
* tokens are never put in the outcome or in a log line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._discovery import ServerMetadata
from ._errors import AuthError
from ._http import Fetcher
from ._token_endpoint import TokenClient, authenticate

__all__ = ["Revocation", "revoke_tokens"]


@dataclass
class Revocation:
    """What logging out of one (issuer, resource) did at the authorization server."""

    issuer: str
    resource: str
    #: Whether the authorization server offers revocation (``revocation_endpoint`` in its metadata).
    offered: bool = False
    #: The kinds of token the server accepted to revoke: ``refresh_token``, ``access_token``.
    revoked: list[str] = field(default_factory=list)
    #: Why revocation failed (one line), or None.
    problem: str | None = None

    @property
    def ok(self) -> bool:
        """True unless revocation was offered and failed."""
        return self.problem is None


async def revoke_tokens(
    fetch: Fetcher, metadata: ServerMetadata, tokens: Mapping[str, Any], client: TokenClient, outcome: Revocation
) -> None:
    """Revoke ``tokens`` (a stored token entry) at ``metadata``'s revocation endpoint, recording in ``outcome``."""
    endpoint = metadata.get_str("revocation_endpoint")
    outcome.offered = endpoint is not None
    if endpoint is None:
        return
    problems: list[str] = []
    for hint in ("refresh_token", "access_token"):
        token = tokens.get(hint)
        if not isinstance(token, str) or not token:
            continue
        form = {"token": token, "token_type_hint": hint}
        headers: dict[str, str] = {}
        try:
            authenticate(form, headers, metadata, client)
            resp = await fetch.request("POST", endpoint, "token revocation", data=form, headers=headers)
        except AuthError as exc:
            problems.append(f"the {hint.replace('_', ' ')}: {exc.reason}")
            continue
        if resp.status == 200:
            outcome.revoked.append(hint)
            continue
        error, text = resp.oauth_error()
        if error == "unsupported_token_type" and hint == "access_token" and "refresh_token" in outcome.revoked:
            continue  # the grant is gone with its refresh token; the server keeps no list of JWTs to strike out
        problems.append(f"the {hint.replace('_', ' ')}: {endpoint} answered {text}")
    if problems:
        outcome.problem = "; ".join(problems)
