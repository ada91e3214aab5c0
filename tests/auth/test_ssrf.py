"""The SSRF guard (security_best_practices.mdx, "Server-Side Request Forgery"): schemes, loopback,
private and metadata addresses after DNS resolution, redirects, bounded bodies."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from wiremcp.auth import AuthError, URLGuard
from wiremcp.auth._http import Fetcher


def resolver_to(*addresses: str):
    calls: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        calls.append(host)
        return list(addresses)

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def check(guard: URLGuard, url: str) -> None:
    asyncio.run(guard.check(url, "test step"))


REMOTE = "https://mcp.example.com/mcp"
LOCAL = "http://127.0.0.1:8000/mcp"


def test_public_https_is_allowed():
    check(URLGuard(REMOTE, resolver=resolver_to("93.184.216.34")), "https://auth.example.com/.well-known/x")


@pytest.mark.parametrize("url", ["http://auth.example.com/x", "ftp://auth.example.com/x", "file:///etc/passwd", "javascript:alert(1)"])
def test_only_https_for_remote(url):
    with pytest.raises(AuthError, match="test step"):
        check(URLGuard(REMOTE, resolver=resolver_to("93.184.216.34")), url)


def test_dns_to_loopback_refused_for_a_remote_server():
    guard = URLGuard(REMOTE, resolver=resolver_to("127.0.0.1"))
    with pytest.raises(AuthError, match="loopback"):
        check(guard, "https://sneaky.example.com/x")


def test_dns_to_loopback_allowed_for_a_loopback_server():
    check(URLGuard(LOCAL, resolver=resolver_to("127.0.0.1")), "https://dev.example.test/x")
    check(URLGuard(LOCAL), "http://localhost:9000/.well-known/oauth-authorization-server")
    check(URLGuard(LOCAL), "http://127.0.0.1:9000/token")


def test_http_loopback_refused_for_a_remote_server():
    with pytest.raises(AuthError, match="MCP server is not"):
        check(URLGuard(REMOTE), "http://localhost:9000/token")


@pytest.mark.parametrize("url", ["https://localhost/x", "https://app.localhost/x", "https://127.0.0.1/x", "https://[::1]/x"])
def test_https_loopback_refused_for_a_remote_server(url):
    with pytest.raises(AuthError, match="loopback"):
        check(URLGuard(REMOTE, resolver=resolver_to("93.184.216.34")), url)


def test_cloud_metadata_refused_even_when_private_networks_are_allowed():
    for allow in (False, True):
        guard = URLGuard(REMOTE, allow_private_networks=allow, resolver=resolver_to("169.254.169.254"))
        with pytest.raises(AuthError, match="metadata"):
            check(guard, "https://metadata.example.com/latest")
    with pytest.raises(AuthError, match="metadata"):
        check(URLGuard(REMOTE, allow_private_networks=True), "https://169.254.169.254/latest/meta-data")


@pytest.mark.parametrize("address", ["10.1.2.3", "192.168.0.10", "172.16.5.5", "169.254.1.1", "fd12::1", "fe80::1", "100.64.0.1", "::ffff:10.0.0.1"])
def test_private_and_link_local_refused_unless_allowed(address):
    guard = URLGuard(REMOTE, resolver=resolver_to(address))
    with pytest.raises(AuthError, match="private"):
        check(guard, "https://intranet.example.com/x")
    check(URLGuard(REMOTE, allow_private_networks=True, resolver=resolver_to(address)), "https://intranet.example.com/x")


def test_every_resolved_address_is_checked():
    guard = URLGuard(REMOTE, resolver=resolver_to("93.184.216.34", "10.0.0.7"))
    with pytest.raises(AuthError, match="10.0.0.7"):
        check(guard, "https://mixed.example.com/x")


@pytest.mark.parametrize("address", ["0.0.0.0", "224.0.0.1", "240.0.0.1"])
def test_unspecified_multicast_reserved_always_refused(address):
    with pytest.raises(AuthError):
        check(URLGuard(REMOTE, allow_private_networks=True, resolver=resolver_to(address)), "https://x.example.com/")


def test_ip_literals_are_checked_without_dns():
    resolve = resolver_to("93.184.216.34")
    with pytest.raises(AuthError):
        check(URLGuard(REMOTE, resolver=resolve), "https://10.0.0.1/x")
    with pytest.raises(AuthError):
        check(URLGuard(REMOTE, resolver=resolve), "https://[::1]/x")
    assert resolve.calls == []  # type: ignore[attr-defined]


def test_credentials_and_fragments_refused():
    guard = URLGuard(REMOTE, resolver=resolver_to("93.184.216.34"))
    with pytest.raises(AuthError, match="credentials"):
        check(guard, "https://user:pw@auth.example.com/x")
    with pytest.raises(AuthError, match="fragment"):
        check(guard, "https://auth.example.com/x#y")


def fetcher(handler, resolver, max_body=1 << 20) -> Fetcher:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Fetcher(URLGuard(REMOTE, resolver=resolver), http_client=client, max_body=max_body)


def test_redirect_hops_are_checked():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "https://internal.example.com/secret"})

    answers = {"public.example.com": ["93.184.216.34"], "internal.example.com": ["10.0.0.5"]}

    async def resolve(host: str, port: int) -> list[str]:
        return answers[host]

    async def go():
        with pytest.raises(AuthError, match="10.0.0.5"):
            await fetcher(handler, resolve).request("GET", "https://public.example.com/start", "test step")

    asyncio.run(go())


def test_redirect_limit():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": "/again"})

    async def go():
        with pytest.raises(AuthError, match="redirects"):
            await fetcher(handler, resolver_to("93.184.216.34")).request("GET", "https://a.example.com/x", "test step")

    asyncio.run(go())


def test_bounded_body():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"x" * 5000)

    async def go():
        f = fetcher(handler, resolver_to("93.184.216.34"), max_body=4096)
        with pytest.raises(AuthError, match="more than 4096 bytes"):
            await f.request("GET", "https://a.example.com/big", "test step")

    asyncio.run(go())


def test_a_silent_server_times_out():
    """Each request is bounded in time: a server that accepts and never answers is an error."""

    async def go():
        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(1 << 16)
            await asyncio.sleep(30)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        fetch = Fetcher(URLGuard(LOCAL), timeout=0.3)
        try:
            with pytest.raises(AuthError, match="test step.*Timeout"):
                await fetch.request("GET", f"http://127.0.0.1:{port}/.well-known/x", "test step")
        finally:
            await fetch.aclose()
            server.close()

    asyncio.run(go())


# -- issue 23, defect 6a: IPv6 forms that carry an internal IPv4 address, special-purpose ranges --------

#: (address, what it reaches): refused for a remote MCP server, whether private networks are allowed or not.
ALWAYS_REFUSED = [
    # NAT64, well-known prefix (RFC 6052): 64:ff9b::/96 + the IPv4 address in the last 32 bits
    ("64:ff9b::7f00:1", "127.0.0.1"),
    ("64:ff9b::127.0.0.1", "127.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
    ("64:ff9b::6464:64c8", "100.100.100.200"),
    ("64:ff9b::0.0.0.0", "0.0.0.0"),
    # NAT64, local-use prefix (RFC 8215): never decodable without the network's prefix length
    ("64:ff9b:1::7f00:1", "local-use NAT64"),
    ("64:ff9b:1:7f00:1::", "local-use NAT64"),
    # 6to4 (RFC 3056): 2002:V4ADDR::/48
    ("2002:a9fe:a9fe::", "169.254.169.254"),
    ("2002:7f00:1::1", "127.0.0.1"),
    ("2002:a9fe:a9fe:1:2:3:4:5", "169.254.169.254"),
    # IPv4-compatible (deprecated, RFC 4291 section 2.5.5.1), IPv4-mapped, IPv4-translated (RFC 2765)
    ("::127.0.0.1", "127.0.0.1"),
    ("::7f00:1", "127.0.0.1"),
    ("::169.254.169.254", "169.254.169.254"),
    ("::ffff:127.0.0.1", "127.0.0.1"),
    ("::ffff:169.254.169.254", "169.254.169.254"),
    ("::ffff:0:127.0.0.1", "127.0.0.1"),
    ("::ffff:0:a9fe:a9fe", "169.254.169.254"),
    # Teredo (RFC 4380): 2001:0:SERVER:flags:port:~CLIENT; the client here is 127.0.0.1
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo to 127.0.0.1"),
    ("2001:0:7f00:1:8000:63bf:3fff:fdd2", "Teredo via server 127.0.0.1"),
    # IANA IPv4 special-purpose registry
    ("0.0.0.0", "this host"),
    ("0.1.2.3", "this network"),
    ("192.0.0.8", "IPv4 dummy address"),
    ("192.0.0.1", "IETF protocol assignments"),
    ("192.0.0.170", "NAT64 discovery"),
    ("192.0.2.1", "TEST-NET-1"),
    ("198.18.0.1", "benchmarking"),
    ("198.51.100.7", "TEST-NET-2"),
    ("203.0.113.9", "TEST-NET-3"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "limited broadcast"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    # IANA IPv6 special-purpose registry
    ("::", "unspecified"),
    ("100::1", "discard-only"),
    ("2001:2::1", "benchmarking"),
    ("2001:10::1", "ORCHID"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation (2024)"),
    ("5f00::1", "SRv6 SIDs"),
    ("fec0::1", "site-local (deprecated)"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    # the metadata addresses themselves
    ("169.254.169.254", "metadata"),
    ("fd00:ec2::254", "metadata"),
    ("100.100.100.200", "metadata"),
]

#: Private networks: refused unless ``allow_private_networks``, also when carried in an IPv6 form.
PRIVATE = [
    "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "169.254.1.1", "fd12::1", "fe80::1",
    "64:ff9b::a00:1", "64:ff9b::192.168.1.1", "2002:a00:1::", "2002:c0a8:101::1", "::10.0.0.1",
    "::ffff:10.0.0.1", "::ffff:0:a00:1", "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo, client 10.0.0.1
]

#: Public addresses, and IPv6 forms that carry a public IPv4 address: allowed.
PUBLIC = [
    "93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946", "2001:4860:4860::8888",
    "64:ff9b::5db8:d822", "64:ff9b::8.8.8.8", "2002:5db8:d822::", "2002:808:808::1", "::ffff:93.184.216.34",
    "2001:0:4136:e378:8000:63bf:a247:29dd",  # Teredo: server 65.54.227.120, client 93.184.216.34
]


@pytest.mark.parametrize("allow", [False, True], ids=["default", "private-allowed"])
@pytest.mark.parametrize(("address", "reaches"), ALWAYS_REFUSED, ids=[a for a, _ in ALWAYS_REFUSED])
def test_special_and_embedded_internal_addresses_are_refused(address: str, reaches: str, allow: bool) -> None:
    resolve = resolver_to(address)
    with pytest.raises(AuthError, match="refused"):
        check(URLGuard(REMOTE, allow_private_networks=allow, resolver=resolve), "https://rebound.example.com/x")
    literal = f"https://[{address}]/x" if ":" in address else f"https://{address}/x"
    with pytest.raises(AuthError, match="refused"):
        check(URLGuard(REMOTE, allow_private_networks=allow, resolver=resolve), literal)


@pytest.mark.parametrize("address", PRIVATE)
def test_private_addresses_in_every_form_need_allow_private_networks(address: str) -> None:
    with pytest.raises(AuthError, match="refused"):
        check(URLGuard(REMOTE, resolver=resolver_to(address)), "https://intranet.example.com/x")
    check(URLGuard(REMOTE, allow_private_networks=True, resolver=resolver_to(address)), "https://intranet.example.com/x")


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_in_every_form_are_allowed(address: str) -> None:
    check(URLGuard(REMOTE, resolver=resolver_to(address)), "https://auth.example.com/x")


@pytest.mark.parametrize("address", ["64:ff9b::7f00:1", "2002:7f00:1::", "::127.0.0.1", "::ffff:0:7f00:1"])
def test_embedded_loopback_follows_the_loopback_rule(address: str) -> None:
    """A loopback MCP server may send the client to loopback in any form; a remote one may not."""
    check(URLGuard(LOCAL, resolver=resolver_to(address)), "https://dev.example.test/x")
    with pytest.raises(AuthError, match="loopback"):
        check(URLGuard(REMOTE, resolver=resolver_to(address)), "https://dev.example.test/x")


def test_the_refusal_names_the_embedded_address() -> None:
    with pytest.raises(AuthError, match=r"64:ff9b::a9fe:a9fe.*169\.254\.169\.254"):
        check(URLGuard(REMOTE, resolver=resolver_to("64:ff9b::a9fe:a9fe")), "https://x.example.com/")
