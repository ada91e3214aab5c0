"""The SSRF guard: which URLs the OAuth client may fetch (security_best_practices.mdx, "Server-Side
Request Forgery"; 2026-07-28 authorization/security-considerations.mdx, "Communication Security").

Every URL the client fetches while discovering, registering or requesting
tokens comes from a server it does not trust (``resource_metadata``,
``authorization_servers``, metadata endpoints, redirects). Rules it keeps:

* ``https`` only. ``http`` is allowed for a loopback host (``localhost``,
  127.0.0.0/8, ::1) and only when the MCP server itself is on loopback: a
  local development setup may run everything on 127.0.0.1, a remote server
  may not send the client to it;
* after DNS resolution every address is checked: loopback follows the rule
  above; private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local
  (169.254/16, fe80::/10, which holds the cloud metadata address
  169.254.169.254), carrier-grade NAT, unspecified, multicast and reserved
  addresses are refused unless ``allow_private_networks`` is set; the
  well-known metadata addresses (169.254.169.254, fd00:ec2::254,
  100.100.100.200) are refused even then. IPv4-mapped IPv6 addresses are
  checked as the IPv4 address they carry;
* the check runs again on every redirect hop (the fetcher never lets the
  HTTP library follow redirects on its own);
* a URL with credentials (``user:pass@``) or a fragment is refused.

Limit: the check resolves the name and the HTTP library resolves it again
to connect, so a DNS server that answers differently within that window
(rebinding) is not stopped here; deployments that need that guarantee put
an egress proxy in front.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from ._errors import AuthError

__all__ = ["URLGuard", "Resolver", "is_loopback_host", "METADATA_ADDRESSES"]

#: Resolves a host name to its IP addresses (as text).
Resolver = Callable[[str, int], Awaitable[list[str]]]

#: Cloud instance metadata endpoints: never fetched, whatever the settings.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)


async def _system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` (and names under it) and loopback IP literals."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    ip = _ip(host.strip("[]"))
    return ip is not None and ip.is_loopback


class URLGuard:
    """Checks URLs against the rules above for one MCP server."""

    def __init__(
        self,
        server_url: str,
        *,
        allow_private_networks: bool = False,
        resolver: Resolver | None = None,
    ) -> None:
        host = urlsplit(server_url).hostname or ""
        self.server_is_loopback = is_loopback_host(host)
        self.allow_private_networks = allow_private_networks
        self._resolve = resolver or _system_resolver

    def check_syntax(self, url: str, what: str) -> tuple[str, int]:
        """Scheme, host and form only (no DNS); returns (host, port)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise AuthError(what, f"not a valid URL: {url!r} ({exc})") from None
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http") or not host:
            raise AuthError(what, f"only https URLs may be fetched, not {url!r}")
        if parts.username is not None or parts.password is not None:
            raise AuthError(what, f"a URL with credentials in it is refused: {parts.scheme}://…@{host}")
        if parts.fragment:
            raise AuthError(what, f"a URL with a fragment is refused: {url!r}")
        if parts.scheme == "http":
            if not is_loopback_host(host):
                raise AuthError(what, f"plain http is allowed only for loopback hosts, not {url!r}")
            if not self.server_is_loopback:
                raise AuthError(what, f"{url!r} is on loopback but the MCP server is not: refused")
        return host, port or (443 if parts.scheme == "https" else 80)

    def check_address(self, text: str, url: str, what: str) -> None:
        """AuthError for an address ``url`` resolved to unless it is public (or loopback, private, if allowed)."""
        ip = _ip(text)
        if ip is None:
            raise AuthError(what, f"{url!r} resolved to something that is not an IP address")
        if ip in METADATA_ADDRESSES:
            raise AuthError(what, f"{url!r} resolves to the cloud metadata address {ip}: refused")
        if ip.is_loopback:
            if not self.server_is_loopback:
                raise AuthError(what, f"{url!r} resolves to loopback ({ip}) but the MCP server is not local: refused")
            return
        if ip.is_global and not ip.is_multicast:
            return
        if self.allow_private_networks and (ip.is_private or ip.is_link_local or ip in _CGNAT):
            if not (ip.is_unspecified or ip.is_multicast or ip.is_reserved):
                return
        raise AuthError(
            what, f"{url!r} resolves to a private, link-local or reserved address ({ip}): refused "
            "(OAuthClient(allow_private_networks=True) allows private networks)"
        )

    async def check(self, url: str, what: str) -> None:
        """Syntax, then every address the host resolves to."""
        host, port = self.check_syntax(url, what)
        literal = _ip(host.strip("[]"))
        if literal is not None:
            addresses = [str(literal)]
        elif is_loopback_host(host):
            # "localhost": the name itself is loopback (RFC 6761 section 6.3)
            if not self.server_is_loopback:
                raise AuthError(what, f"{url!r} is on loopback but the MCP server is not: refused")
            return
        else:
            try:
                addresses = await self._resolve(host, port)
            except OSError as exc:
                raise AuthError(what, f"cannot resolve {host!r}: {exc}") from None
            if not addresses:
                raise AuthError(what, f"{host!r} resolves to no address")
        for address in addresses:
            self.check_address(address, url, what)


_CGNAT = ipaddress.ip_network("100.64.0.0/10")
