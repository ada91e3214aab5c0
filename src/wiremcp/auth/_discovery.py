"""Discovery: protected resource metadata (RFC 9728) and authorization server metadata (RFC 8414,
OpenID Connect Discovery), as 2026-07-28 authorization-server-discovery.mdx orders them.

Rules it keeps:

* protected resource metadata (PRM) comes from the ``resource_metadata`` URL
  of the ``WWW-Authenticate`` challenge when there is one; otherwise from
  ``/.well-known/oauth-protected-resource/<path>`` and then
  ``/.well-known/oauth-protected-resource`` on the MCP server's origin
  (the path-based one is skipped when the server is at the root);
* the PRM ``resource`` must identify this MCP server (RFC 9728 section 3.3,
  RFC 8707): same scheme, host and port (scheme and host compared without
  case) and a path that is the server's path or a parent of it on a segment
  boundary. It is then used exactly as published as the ``resource``
  parameter (no URL normalization, no slash added). A mismatch stops the
  flow before any authorization request;
* ``authorization_servers`` must hold at least one issuer; the client uses
  the first (RFC 9728 section 7.6 leaves the choice to the client);
* authorization server metadata is tried at, for an issuer with a path
  ``/t``: ``/.well-known/oauth-authorization-server/t``,
  ``/.well-known/openid-configuration/t``, ``/t/.well-known/openid-configuration``;
  for an issuer without one: ``/.well-known/oauth-authorization-server``,
  ``/.well-known/openid-configuration``. The first 200 with a JSON object
  whose ``issuer`` is identical (plain string comparison) to the issuer the
  URL was built from is used; a document whose issuer differs is never used
  (RFC 8414 section 3.3);
* 2025-03-26 servers (no PRM at all): the authorization server is the MCP
  server's origin; its metadata at ``/.well-known/oauth-authorization-server``
  is used when present; otherwise the default endpoints ``/authorize``,
  ``/token`` and ``/register`` on that origin (2025-03-26
  basic/authorization.mdx, "Fallbacks for Servers without Metadata Discovery").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ._errors import AuthError
from ._http import Fetcher

__all__ = [
    "ProtectedResource",
    "ServerMetadata",
    "prm_urls",
    "metadata_urls",
    "resource_matches",
    "discover_resource",
    "discover_server",
    "legacy_server",
]


@dataclass
class ProtectedResource:
    resource: str
    authorization_servers: list[str]
    scopes_supported: list[str] | None
    document: dict[str, Any] = field(default_factory=dict)
    metadata_url: str | None = None
    legacy: bool = False  # no PRM: a 2025-03-26 server

    @property
    def issuer(self) -> str:
        return self.authorization_servers[0]


@dataclass
class ServerMetadata:
    issuer: str
    document: dict[str, Any]
    metadata_url: str | None

    def get_str(self, name: str) -> str | None:
        value = self.document.get(name)
        return value if isinstance(value, str) and value else None

    def get_list(self, name: str) -> list[str] | None:
        value = self.document.get(name)
        if not isinstance(value, list):
            return None
        return [v for v in value if isinstance(v, str)]

    @property
    def authorization_endpoint(self) -> str | None:
        return self.get_str("authorization_endpoint")

    @property
    def token_endpoint(self) -> str | None:
        return self.get_str("token_endpoint")

    @property
    def registration_endpoint(self) -> str | None:
        return self.get_str("registration_endpoint")

    @property
    def iss_supported(self) -> bool:
        return self.document.get("authorization_response_iss_parameter_supported") is True

    @property
    def cimd_supported(self) -> bool:
        return self.document.get("client_id_metadata_document_supported") is True


def _origin(url: str) -> tuple[str, str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc, parts.path


def prm_urls(server_url: str) -> list[str]:
    """The well-known PRM locations for a server URL, most specific first."""
    scheme, netloc, path = _origin(server_url)
    path = path.rstrip("/")
    root = urlunsplit((scheme, netloc, "/.well-known/oauth-protected-resource", "", ""))
    if not path:
        return [root]
    return [urlunsplit((scheme, netloc, "/.well-known/oauth-protected-resource" + path, "", "")), root]


def metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata locations for an issuer, in the spec's priority order."""
    scheme, netloc, path = _origin(issuer)
    path = path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((scheme, netloc, p, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at("/.well-known/oauth-authorization-server" + path),
        at("/.well-known/openid-configuration" + path),
        at(path + "/.well-known/openid-configuration"),
    ]


def resource_matches(resource: str, server_url: str) -> bool:
    """True when the PRM ``resource`` identifies the MCP server at ``server_url`` (itself or a parent path)."""
    try:
        r, s = urlsplit(resource), urlsplit(server_url)
        r_port, s_port = r.port, s.port
    except ValueError:
        return False
    if r.fragment or not r.scheme or not r.hostname:
        return False
    if r.scheme.lower() != s.scheme.lower() or (r.hostname or "").lower() != (s.hostname or "").lower():
        return False
    default = {"http": 80, "https": 443}.get(s.scheme.lower())
    if (r_port or default) != (s_port or default):
        return False
    rp, sp = r.path.rstrip("/"), s.path.rstrip("/")
    return sp == rp or sp.startswith(rp + "/")


def _prm_from(doc: dict[str, Any], url: str) -> ProtectedResource:
    resource = doc.get("resource")
    if not isinstance(resource, str) or not resource:
        raise AuthError("protected resource metadata", f"{url} has no 'resource'")
    servers = doc.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) and s for s in servers):
        raise AuthError("protected resource metadata", f"{url} lists no 'authorization_servers'")
    scopes = doc.get("scopes_supported")
    scopes_list = [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else None
    return ProtectedResource(resource, list(servers), scopes_list, doc, url)


async def discover_resource(fetch: Fetcher, server_url: str, metadata_url: str | None) -> ProtectedResource | None:
    """The PRM for the server, validated; None when the server publishes none (a 2025-03-26 server)."""
    step = "protected resource metadata"
    candidates = [metadata_url] if metadata_url else prm_urls(server_url)
    for url in candidates:
        resp = await fetch.request("GET", url, step)
        if resp.status != 200:
            if metadata_url:
                raise AuthError(step, f"{url} (from the WWW-Authenticate challenge) answered HTTP {resp.status}")
            continue
        prm = _prm_from(resp.json(step), url)
        if not resource_matches(prm.resource, server_url):
            raise AuthError(
                step, f"the metadata at {url} is for resource {prm.resource!r}, not for this server ({server_url}): refused"
            )
        return prm
    return None


async def discover_server(fetch: Fetcher, issuer: str) -> ServerMetadata:
    """Authorization server metadata for ``issuer``, with its ``issuer`` checked."""
    step = "authorization server metadata"
    problems: list[str] = []
    for url in metadata_urls(issuer):
        resp = await fetch.request("GET", url, step)
        if resp.status != 200:
            problems.append(f"{url}: HTTP {resp.status}")
            continue
        doc = resp.json(step)
        got = doc.get("issuer")
        if got != issuer:
            problems.append(f"{url}: issuer {got!r} is not {issuer!r}")
            continue
        return ServerMetadata(issuer, doc, url)
    raise AuthError(step, "no usable metadata for issuer " + repr(issuer) + " (" + "; ".join(problems) + ")")


async def legacy_server(fetch: Fetcher, server_url: str) -> ServerMetadata:
    """2025-03-26: the MCP server's origin is the authorization server; metadata, else default endpoints."""
    scheme, netloc, _ = _origin(server_url)
    base = urlunsplit((scheme, netloc, "", "", ""))
    url = base + "/.well-known/oauth-authorization-server"
    resp = await fetch.request("GET", url, "authorization server metadata")
    if resp.status == 200:
        doc = resp.json("authorization server metadata")
        issuer = doc.get("issuer")
        if isinstance(issuer, str) and issuer.rstrip("/") == base:
            return ServerMetadata(issuer, doc, url)
        raise AuthError("authorization server metadata", f"{url}: issuer {issuer!r} is not {base!r}")
    doc = {
        "issuer": base,
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "registration_endpoint": base + "/register",
    }
    return ServerMetadata(base, doc, None)
