"""Provider presets: an `Upstream` for GitHub, Google, Microsoft Entra ID, Auth0, Okta, Keycloak, WorkOS or any OIDC provider.

Each preset knows its provider's endpoints, the scopes to ask, the kind of
token that says who signed in and where the provider puts the subject, the
email and the roles or groups (`_identity.ClaimMap`):

=========  ====================================  ===========  ==========================================
preset     who signed in                         subject      roles / groups
=========  ====================================  ===========  ==========================================
github     ``/user`` with the opaque token       ``id``       none (``"*"`` maps every user)
google     OIDC ``userinfo`` (opaque token)      ``sub``      ``hd`` (the Workspace domain)
entra      ID token (v2.0, one tenant)           ``oid``      ``roles``, ``groups``
auth0      ID token (+ API access token)         ``sub``      a namespaced claim, ``permissions``
okta       ID token                              ``sub``      ``groups``
keycloak   ID token                              ``sub``      ``realm_access.roles``, ``groups``
workos     ID token + access token (JWT)         ``sub``      ``role``, ``roles``, ``permissions``
oidc       ID token                              ``sub``      ``roles_claims`` given
=========  ====================================  ===========  ==========================================

``role_scopes`` maps those roles to the MCP server's scopes (``"*"``: every
user); without it every scope a client asks is granted. Every endpoint can
be overridden (``issuer``, ``authorization_endpoint``, ``token_endpoint``,
``jwks_uri``, ``user_endpoint``, ``revocation_endpoint``): the tests point
them at a local provider shaped like the real one. `upstream_from_settings`
builds the same from ``WIREMCP_AUTH_*`` settings (docs/auth-providers.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._config import Upstream, read_metadata
from ._identity import ClaimMap, SignedClaims, UpstreamIdentity, UserEndpointVerifier, role_table

__all__ = [
    "PRESETS", "auth0", "entra", "github", "google", "keycloak", "oidc", "okta", "upstream_from_settings", "workos",
]

ENDPOINTS = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "user_endpoint", "revocation_endpoint")
RoleScopes = Mapping[str, "Iterable[str] | str"] | None
#: Entra's multi-tenant names: their ID tokens name each user's own tenant, which one issuer cannot check.
_ENTRA_SHARED = ("common", "organizations", "consumers")


def _endpoints(defaults: dict[str, str | None], overrides: Mapping[str, str | None]) -> dict[str, str | None]:
    unknown = set(overrides) - set(ENDPOINTS)
    if unknown:
        raise TypeError(f"unknown endpoint override(s): {', '.join(sorted(unknown))}; known: {', '.join(ENDPOINTS)}")
    return {**defaults, **overrides}


def _upstream(ends: dict[str, str | None], *, client_id: str, client_secret: str, scopes: Iterable[str],
              identify: UpstreamIdentity, **fields: Any) -> Upstream:
    issuer, authorize, token = ends["issuer"], ends["authorization_endpoint"], ends["token_endpoint"]
    assert issuer and authorize and token
    return Upstream(issuer=issuer, authorization_endpoint=authorize, token_endpoint=token, client_id=client_id,
                    client_secret=client_secret, scopes=tuple(scopes), revocation_endpoint=ends.get("revocation_endpoint"),
                    identify=identify, **fields)


def _id_token(ends: Mapping[str, str | None], client_id: str, leeway: float) -> SignedClaims:
    issuer, jwks = ends["issuer"], ends["jwks_uri"]
    assert issuer and jwks
    return SignedClaims(issuer=issuer, jwks_uri=jwks, audience=client_id, leeway=leeway)


def github(*, client_id: str, client_secret: str, role_scopes: RoleScopes = None,
           scopes: Iterable[str] = ("read:user", "user:email"), **endpoints: str | None) -> Upstream:
    """GitHub (an OAuth app or a GitHub App): opaque tokens; the user is ``GET /user``'s numeric ``id``."""
    ends = _endpoints({
        "issuer": "https://github.com",
        "authorization_endpoint": "https://github.com/login/oauth/authorize",
        "token_endpoint": "https://github.com/login/oauth/access_token",
        "user_endpoint": "https://api.github.com/user",
        "revocation_endpoint": None,
    }, endpoints)
    user = ends["user_endpoint"]
    assert user
    identify = UpstreamIdentity(
        ClaimMap(subject="id", email=("email",), role_scopes=role_table(role_scopes)),
        user_endpoint=UserEndpointVerifier(user, subject="id", headers={
            "accept": "application/vnd.github+json", "x-github-api-version": "2022-11-28"}),
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify,
                     token_auth_method="client_secret_post")


def google(*, client_id: str, client_secret: str, role_scopes: RoleScopes = None,
           scopes: Iterable[str] = ("openid", "email", "profile"), **endpoints: str | None) -> Upstream:
    """Google (OpenID Connect): opaque access tokens, the user from ``userinfo``; ``hd`` is the Workspace domain."""
    ends = _endpoints({
        "issuer": "https://accounts.google.com",
        "authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth",
        "token_endpoint": "https://oauth2.googleapis.com/token",
        "user_endpoint": "https://openidconnect.googleapis.com/v1/userinfo",
        "revocation_endpoint": "https://oauth2.googleapis.com/revoke",
    }, endpoints)
    user = ends["user_endpoint"]
    assert user
    identify = UpstreamIdentity(
        ClaimMap(subject="sub", email=("email",), roles=("hd",), role_scopes=role_table(role_scopes)),
        user_endpoint=UserEndpointVerifier(user, subject="sub"),
    )
    # access_type=offline: a refresh token, kept by the proxy (Google returns one on consent only)
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify,
                     authorize_params={"access_type": "offline", "prompt": "consent"})


def entra(*, client_id: str, client_secret: str, tenant: str, role_scopes: RoleScopes = None,
          scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"),
          authority: str = "https://login.microsoftonline.com", leeway: float = 60.0, **endpoints: str | None) -> Upstream:
    """Microsoft Entra ID (v2.0 endpoints, one tenant): the ID token's ``oid``, ``roles`` and ``groups``."""
    if tenant in _ENTRA_SHARED:
        raise ValueError(f"tenant: give your directory (tenant) id, not {tenant!r}: the ID token's issuer names the user's tenant")
    base = f"{authority}/{tenant}"
    ends = _endpoints({
        "issuer": f"{base}/v2.0",
        "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
        "token_endpoint": f"{base}/oauth2/v2.0/token",
        "jwks_uri": f"{base}/discovery/v2.0/keys",
        "revocation_endpoint": None,
    }, endpoints)
    identify = UpstreamIdentity(
        ClaimMap(subject="oid", email=("email", "preferred_username"), roles=("roles", "groups"),
                 role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway),
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify)


def auth0(*, client_id: str, client_secret: str, domain: str, audience: str | None = None,
          roles_claim: str | None = None, role_scopes: RoleScopes = None,
          scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"), leeway: float = 60.0,
          **endpoints: str | None) -> Upstream:
    """Auth0: the ID token (roles in the namespaced ``roles_claim`` an Action adds), and with ``audience`` the
    API's JWT access token (its ``permissions``, with RBAC on)."""
    base = f"https://{domain}"
    ends = _endpoints({
        "issuer": base + "/",
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/oauth/token",
        "jwks_uri": base + "/.well-known/jwks.json",
        "revocation_endpoint": base + "/oauth/revoke",
    }, endpoints)
    issuer, jwks = ends["issuer"], ends["jwks_uri"]
    assert issuer and jwks
    access = SignedClaims(issuer=issuer, jwks_uri=jwks, audience=audience, leeway=leeway,
                          what="access token") if audience else None
    roles = ((roles_claim,) if roles_claim else ()) + ("permissions",)
    identify = UpstreamIdentity(
        ClaimMap(subject="sub", email=("email",), roles=roles, role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway), access_token=access,
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify,
                     authorize_params={"audience": audience} if audience else {})


def okta(*, client_id: str, client_secret: str, domain: str, authorization_server: str | None = "default",
         groups_claim: str = "groups", role_scopes: RoleScopes = None,
         scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"), leeway: float = 60.0,
         **endpoints: str | None) -> Upstream:
    """Okta: a custom authorization server (``default`` unless named; None: the org one); the ID token's ``groups``."""
    issuer = f"https://{domain}" + (f"/oauth2/{authorization_server}" if authorization_server else "")
    base = issuer + ("/v1" if authorization_server else "/oauth2/v1")
    ends = _endpoints({
        "issuer": issuer,
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "jwks_uri": base + "/keys",
        "revocation_endpoint": base + "/revoke",
    }, endpoints)
    identify = UpstreamIdentity(
        ClaimMap(subject="sub", email=("email",), roles=(groups_claim,), role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway),
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify)


def keycloak(*, client_id: str, client_secret: str, base_url: str, realm: str, role_scopes: RoleScopes = None,
             scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"), leeway: float = 60.0,
             **endpoints: str | None) -> Upstream:
    """Keycloak: the realm's ID token, its realm roles (``realm_access.roles``) and ``groups``."""
    issuer = f"{base_url.rstrip('/')}/realms/{realm}"
    base = issuer + "/protocol/openid-connect"
    ends = _endpoints({
        "issuer": issuer,
        "authorization_endpoint": base + "/auth",
        "token_endpoint": base + "/token",
        "jwks_uri": base + "/certs",
        "revocation_endpoint": base + "/revoke",
    }, endpoints)
    identify = UpstreamIdentity(
        ClaimMap(subject="sub", email=("email",), roles=("realm_access.roles", "groups"),
                 role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway),
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify)


def workos(*, client_id: str, client_secret: str, domain: str, audience: str | None = None,
           role_scopes: RoleScopes = None, scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"),
           leeway: float = 60.0, **endpoints: str | None) -> Upstream:
    """WorkOS AuthKit (``domain``: ``your-app.authkit.app``): the ID token, and the JWT access token's
    ``role``, ``roles`` and ``permissions`` (its audience: ``audience``, by default the client id)."""
    base = f"https://{domain}"
    ends = _endpoints({
        "issuer": base,
        "authorization_endpoint": base + "/oauth2/authorize",
        "token_endpoint": base + "/oauth2/token",
        "jwks_uri": base + "/oauth2/jwks",
        "revocation_endpoint": None,
    }, endpoints)
    issuer, jwks = ends["issuer"], ends["jwks_uri"]
    assert issuer and jwks
    identify = UpstreamIdentity(
        ClaimMap(subject="sub", email=("email",), roles=("role", "roles", "permissions"),
                 role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway),
        access_token=SignedClaims(issuer=issuer, jwks_uri=jwks, audience=audience or client_id, leeway=leeway,
                                  what="access token"),
    )
    # WorkOS Connect's token endpoint takes the client id and secret in the form (its API reference).
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify,
                     token_auth_method="client_secret_post")


def oidc(*, client_id: str, client_secret: str, issuer: str, roles_claims: Iterable[str] = (),
         subject_claim: str = "sub", role_scopes: RoleScopes = None,
         scopes: Iterable[str] = ("openid", "profile", "email", "offline_access"), leeway: float = 60.0,
         **endpoints: str | None) -> Upstream:
    """Any OpenID Connect provider: the ID token; the endpoints not given are read from its discovery document."""
    ends = _endpoints({"issuer": issuer}, endpoints)
    needed = ("authorization_endpoint", "token_endpoint", "jwks_uri")
    if any(not ends.get(name) for name in needed):
        found = read_metadata(ends["issuer"] or issuer)
        for name in (*needed, "revocation_endpoint"):
            if name not in ends and isinstance(found.get(name), str):
                ends[name] = found[name]
    ends.setdefault("revocation_endpoint", None)
    identify = UpstreamIdentity(
        ClaimMap(subject=subject_claim, email=("email",), roles=tuple(roles_claims), role_scopes=role_table(role_scopes)),
        id_token=_id_token(ends, client_id, leeway),
    )
    return _upstream(ends, client_id=client_id, client_secret=client_secret, scopes=scopes, identify=identify)


PRESETS: dict[str, Callable[..., Upstream]] = {"github": github, "google": google, "entra": entra, "auth0": auth0, "okta": okta,
           "keycloak": keycloak, "workos": workos, "oidc": oidc}


def parse_role_scopes(text: str) -> dict[str, list[str]]:
    """``"admin=notes:read notes:write; reader=notes:read"`` as a role -> scopes table."""
    table: dict[str, list[str]] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        role, sep, scopes = part.partition("=")
        if not sep or not role.strip():
            raise ValueError(f"WIREMCP_AUTH_ROLE_SCOPES: {part.strip()!r} is not role=scope scope ...")
        table[role.strip()] = scopes.split()
    return table


#: The settings each preset reads beyond the client id and secret: setting -> keyword.
_PRESET_SETTINGS = {
    "WIREMCP_AUTH_TENANT": "tenant",
    "WIREMCP_AUTH_DOMAIN": "domain",
    "WIREMCP_AUTH_AUTHORIZATION_SERVER": "authorization_server",
    "WIREMCP_AUTH_BASE_URL": "base_url",
    "WIREMCP_AUTH_REALM": "realm",
    "WIREMCP_AUTH_AUDIENCE": "audience",
    "WIREMCP_AUTH_ROLES_CLAIM": "roles_claim",
}
#: Endpoint overrides: setting -> keyword.
_ENDPOINT_SETTINGS = {
    "WIREMCP_AUTH_PROXY_UPSTREAM": "issuer",
    "WIREMCP_AUTH_PROXY_UPSTREAM_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "WIREMCP_AUTH_PROXY_UPSTREAM_TOKEN_ENDPOINT": "token_endpoint",
    "WIREMCP_AUTH_PROXY_UPSTREAM_JWKS_URI": "jwks_uri",
    "WIREMCP_AUTH_PROXY_UPSTREAM_USER_ENDPOINT": "user_endpoint",
    "WIREMCP_AUTH_PROXY_UPSTREAM_REVOCATION_ENDPOINT": "revocation_endpoint",
}


def upstream_from_settings(environ: Mapping[str, str] | None = None) -> Upstream:
    """The `Upstream` the ``WIREMCP_AUTH_*`` settings describe (docs/auth-providers.md lists them).

    ``WIREMCP_AUTH_PROVIDER`` names the preset; ``WIREMCP_AUTH_PROXY_CLIENT_ID`` and
    ``WIREMCP_AUTH_PROXY_CLIENT_SECRET`` the proxy's client there; then the preset's
    own settings (``WIREMCP_AUTH_TENANT``...), ``WIREMCP_AUTH_ROLE_SCOPES``,
    ``WIREMCP_AUTH_PROXY_UPSTREAM_SCOPES`` and the ``WIREMCP_AUTH_PROXY_UPSTREAM_*`` endpoint overrides.
    """
    env = os.environ if environ is None else environ
    name = env.get("WIREMCP_AUTH_PROVIDER", "").strip().lower()
    if name not in PRESETS:
        raise ValueError(f"WIREMCP_AUTH_PROVIDER: one of {', '.join(PRESETS)}, not {name!r}")
    kwargs: dict[str, Any] = {
        "client_id": env.get("WIREMCP_AUTH_PROXY_CLIENT_ID", ""),
        "client_secret": env.get("WIREMCP_AUTH_PROXY_CLIENT_SECRET", ""),
    }
    for setting, keyword in {**_PRESET_SETTINGS, **_ENDPOINT_SETTINGS}.items():
        if env.get(setting):
            kwargs[keyword] = env[setting]
    if name == "oidc":
        kwargs.setdefault("issuer", "")
        roles = kwargs.pop("roles_claim", None)
        if roles:
            kwargs["roles_claims"] = roles.split()
    if env.get("WIREMCP_AUTH_ROLE_SCOPES"):
        kwargs["role_scopes"] = parse_role_scopes(env["WIREMCP_AUTH_ROLE_SCOPES"])
    if env.get("WIREMCP_AUTH_PROXY_UPSTREAM_SCOPES"):
        kwargs["scopes"] = env["WIREMCP_AUTH_PROXY_UPSTREAM_SCOPES"].split()
    if env.get("WIREMCP_AUTH_LEEWAY") and name != "github" and name != "google":
        kwargs["leeway"] = float(env["WIREMCP_AUTH_LEEWAY"])
    try:
        return PRESETS[name](**kwargs)
    except TypeError as exc:
        raise ValueError(f"WIREMCP_AUTH_PROVIDER={name}: {exc}") from None
