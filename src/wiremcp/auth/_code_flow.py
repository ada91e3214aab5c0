"""The authorization code grant (OAuth 2.1 section 4.1): the request, the redirect, and the checks on its answer.

Rules it keeps:

* the authorization server must have an authorization and a token
  endpoint; one whose metadata came from a metadata document must list
  S256 in ``code_challenge_methods_supported`` (else PKCE cannot be
  verified, and the flow is refused before anything is sent); the
  authorization endpoint must be an https URL (loopback http allowed) that
  passes the SSRF guard's syntax check;
* PKCE S256 always, a fresh ``state``, the ``resource`` (RFC 8707) exactly
  as published, the scopes when there are any;
* the answer, in this order: ``iss`` (RFC 9207) equal to the recorded issuer
  by plain string comparison when present, and required when the server
  advertises ``authorization_response_iss_parameter_supported``; then
  ``state``; only then an ``error`` in the answer is acted on; a code must
  be there;
* what goes to the token endpoint: the code, the same redirect URI, the
  verifier and the resource.
"""

from __future__ import annotations

from urllib.parse import urlencode

from ._discovery import ServerMetadata
from ._errors import AuthError
from ._http import Fetcher
from ._pkce import code_challenge, code_verifier, new_state, same_state
from ._redirect import RedirectHandler, check_authorization_url

__all__ = ["authorization_endpoint", "authorization_code"]


def authorization_endpoint(metadata: ServerMetadata, fetch: Fetcher) -> str:
    """The authorization endpoint, once the server is fit for the code flow (see the module docstring)."""
    endpoint = metadata.authorization_endpoint
    if endpoint is None or metadata.token_endpoint is None:
        raise AuthError("authorization server metadata", f"{metadata.issuer!r} lists no authorization or token endpoint")
    if metadata.metadata_url is not None and "S256" not in (metadata.get_list("code_challenge_methods_supported") or []):
        raise AuthError(
            "authorization server metadata",
            f"{metadata.issuer!r} does not list S256 in code_challenge_methods_supported: PKCE cannot be verified, refused",
        )
    check_authorization_url(endpoint)
    fetch.guard.check_syntax(endpoint, "authorization request")
    return endpoint


async def authorization_code(
    handler: RedirectHandler,
    fetch: Fetcher,
    metadata: ServerMetadata,
    endpoint: str,
    client_id: str,
    redirect_uri: str,
    resource: str,
    scopes: list[str],
) -> dict[str, str]:
    """Send the user to ``endpoint`` through ``handler``; the token request form of the code that comes back."""
    verifier = code_verifier()
    state = new_state()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": code_challenge(verifier),
        "code_challenge_method": "S256",
        "resource": resource,
    }
    if scopes:
        params["scope"] = " ".join(scopes)
    url = endpoint + ("&" if "?" in endpoint else "?") + urlencode(params)
    answer = await handler.authorize(url, fetch)

    step = "authorization response"
    iss = answer.get("iss")
    if iss is not None and iss != metadata.issuer:
        raise AuthError(step, f"iss {iss!r} is not the recorded issuer {metadata.issuer!r} (RFC 9207): refused")
    if iss is None and metadata.iss_supported:
        raise AuthError(step, f"{metadata.issuer!r} advertises the iss parameter but the response has none (RFC 9207): refused")
    if not same_state(state, answer.get("state")):
        raise AuthError(step, "the state parameter does not match the request: refused")
    if "error" in answer:
        desc = (answer.get("error_description") or "")[:200]
        raise AuthError(step, f"the authorization server answered {answer['error']!r}" + (f": {desc}" if desc else ""), error=answer["error"])
    code = answer.get("code")
    if not code:
        raise AuthError(step, "no authorization code in the response")
    return {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
        "resource": resource,
    }
