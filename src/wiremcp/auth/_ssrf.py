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
  100.100.100.200) are refused even then;
* an IPv6 address that carries an IPv4 address is checked as the IPv4
  address(es) it carries, by every rule here (`embedded_ipv4`): IPv4-mapped
  (``::ffff:0:0/96``), IPv4-translated (``::ffff:0:0:0/96``),
  IPv4-compatible (``::/96`` but ``::`` and ``::1``), NAT64 with the
  well-known prefix (``64:ff9b::/96``), 6to4 (``2002::/16``) and Teredo
  (``2001::/32``: its server and its client). The local-use NAT64 prefix
  (``64:ff9b:1::/48``), whose layout depends on the network, is refused;
* the special-purpose ranges of the IANA registries that are not globally
  reachable, or that no fetch should reach, are refused first, whatever the
  settings (`SPECIAL_NETWORKS`): this network, the IETF protocol
  assignments (192.0.0.0/24), documentation, benchmarking, reserved,
  broadcast, multicast, discard-only, ORCHID, SRv6 SIDs, site-local. The
  list is written out here: Python's ``is_global`` tables differ by version
  (3.11 calls 192.0.0.8 and 3fff::1 global);
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


IP = ipaddress.IPv4Address | ipaddress.IPv6Address

_NETWORKS = ipaddress.ip_network
#: Refused whatever the settings: IANA special-purpose ranges no fetch of the OAuth client should reach.
SPECIAL_NETWORKS = tuple(
    _NETWORKS(n)
    for n in (
        "0.0.0.0/8", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
        "224.0.0.0/4", "240.0.0.0/4", "255.255.255.255/32",
        "::/128", "::ffff:0:0/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16",
        "3fff::/20", "5f00::/16", "fec0::/10", "ff00::/8",
    )
)
#: The private networks ``allow_private_networks`` opens (link-local included; the metadata addresses never).
PRIVATE_NETWORKS = tuple(
    _NETWORKS(n)
    for n in (
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "fc00::/7", "fe80::/10",
    )
)
_COMPATIBLE = _NETWORKS("::/96")
_TRANSLATED = _NETWORKS("::ffff:0:0:0/96")
_NAT64 = _NETWORKS("64:ff9b::/96")
_TEREDO = _NETWORKS("2001::/32")


def embedded_ipv4(ip: IP) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 address(es) an IPv6 address carries (mapped, translated, compatible, NAT64, 6to4, Teredo); () if none."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return ()
    low = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in _TRANSLATED or ip in _NAT64:
        return (low,)
    if ip in _COMPATIBLE and int(ip) > 1:
        return (low,)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip in _TEREDO and ip.teredo is not None:
        return ip.teredo
    return ()


def _ip(text: str) -> IP | None:
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
        carried = embedded_ipv4(ip)
        if carried:  # the packets go to the IPv4 address(es) inside: those are what is checked
            for inner in carried:
                self._check_ip(inner, url, what, f"{ip}, which carries {inner}")
            return
        self._check_ip(ip, url, what, str(ip))

    def _check_ip(self, ip: IP, url: str, what: str, shown: str) -> None:
        if ip in METADATA_ADDRESSES:
            raise AuthError(what, f"{url!r} resolves to the cloud metadata address {shown}: refused")
        if ip.is_loopback:
            if not self.server_is_loopback:
                raise AuthError(what, f"{url!r} resolves to loopback ({shown}) but the MCP server is not local: refused")
            return
        if any(ip in network for network in SPECIAL_NETWORKS):
            raise AuthError(what, f"{url!r} resolves to a special-purpose address ({shown}): refused")
        private = any(ip in network for network in PRIVATE_NETWORKS)
        if not private and ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_unspecified):
            return
        if private and self.allow_private_networks:
            return
        raise AuthError(
            what, f"{url!r} resolves to a private, link-local or reserved address ({shown}): refused "
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

