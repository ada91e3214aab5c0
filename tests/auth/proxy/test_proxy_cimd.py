"""Client ID metadata documents at the OAuth proxy (client-registration.mdx).

A client whose id is an https URL is known by the document at that URL, fetched over TLS (a
loopback HTTPS server with a certificate of the test's, `_tls`). In process: the document's
rules (client_id equal to its URL, redirect URIs, public clients only, https with a path, the
allowed hosts) and its caching. End to end: the wiremcp client with ``client_metadata_url`` signs
in through the proxy of examples/oauth_proxy.py in headless Chromium; the consent page shows the
document's host.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jwt")

import httpx  # noqa: E402

import wiremcp  # noqa: E402
from wiremcp.auth import MemoryTokenStore, OAuthClient  # noqa: E402
from wiremcp.auth.proxy import OAuthProxy, Upstream  # noqa: E402
from wiremcp.auth.server import JWTVerifier  # noqa: E402
from wiremcp.server.storage import MemoryStore  # noqa: E402
from wiremcp.testing.chromium import CHROMIUM, Chromium, Page  # noqa: E402

from ..server._oauth import free_port  # noqa: E402
from ._harness import ChromiumLogin, ProxiedServer, UpstreamProvider, approve, sign_in  # noqa: E402
from ._tls import DocumentServer  # noqa: E402

REDIRECT = "http://127.0.0.1:7777/callback"


@pytest.fixture
def documents(tmp_path: Path) -> Iterator[DocumentServer]:
    server = DocumentServer(tmp_path)
    try:
        yield server
    finally:
        server.close()


def make_proxy(documents: DocumentServer, **options: Any) -> OAuthProxy:
    upstream = Upstream(
        issuer="https://idp.example.com", authorization_endpoint="https://idp.example.com/auth",
        token_endpoint="https://idp.example.com/token", client_id="proxy", client_secret="s3cret",
        verifier=JWTVerifier(issuer="https://idp.example.com", resource="https://idp.example.com/api"),
    )
    trust = ssl.create_default_context(cafile=str(documents.cafile))
    return OAuthProxy(upstream, issuer="http://127.0.0.1:9", resource="http://127.0.0.1:9/mcp", scopes=["read"],
                      store=MemoryStore(), key=b"k" * 32, http_client=httpx.AsyncClient(verify=trust), **options)


def good(url: str) -> dict[str, Any]:
    return {"client_id": url, "client_name": "Doc App", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "token_endpoint_auth_method": "none"}


@pytest.mark.parametrize("change", [
    {"client_id": "https://127.0.0.1/elsewhere.json"},
    {"redirect_uris": ["http://evil.example.com/cb"]},
    {"redirect_uris": []},
    {"token_endpoint_auth_method": "client_secret_basic"},
    {"grant_types": ["client_credentials"]},
])
def test_a_document_that_breaks_a_rule_names_no_client(documents: DocumentServer, change: dict[str, Any]) -> None:
    url = documents.base + "/client.json"
    documents.documents["/client.json"] = {**good(url), **change}

    async def go() -> Any:
        proxy = make_proxy(documents)
        try:
            return await proxy.client(url)
        finally:
            await proxy.aclose()

    assert asyncio.run(go()) is None


def test_a_good_document_is_a_public_client_read_once(documents: DocumentServer) -> None:
    url = documents.base + "/client.json"
    documents.documents["/client.json"] = good(url)

    async def go() -> tuple[Any, Any, Any, Any]:
        proxy = make_proxy(documents)
        try:
            first = await proxy.client(url)
            second = await proxy.client(url)
            page = await httpx.AsyncClient(transport=httpx.ASGITransport(app=proxy)).get(  # type: ignore[arg-type]
                "http://127.0.0.1:9/oauth/authorize", params={
                    "response_type": "code", "client_id": url, "redirect_uri": REDIRECT, "code_challenge": "c" * 43,
                    "code_challenge_method": "S256"})
            return first, second, page.text, proxy.metadata()["client_id_metadata_document_supported"]
        finally:
            await proxy.aclose()

    first, second, page, advertised = asyncio.run(go())
    assert first == second and first["token_endpoint_auth_method"] == "none" and first["host"] == "127.0.0.1"
    assert documents.hits == ["/client.json"]  # cached
    assert "id=client-host>127.0.0.1<" in page and "Doc App" in page
    assert advertised is True


@pytest.mark.parametrize("url", ["{base}/", "{base}/client.json?x=1", "http://127.0.0.1:1/client.json"])
def test_a_client_id_that_is_not_a_document_url_is_unknown(documents: DocumentServer, url: str) -> None:
    async def go() -> Any:
        proxy = make_proxy(documents)
        try:
            return await proxy.client(url.format(base=documents.base))
        finally:
            await proxy.aclose()

    assert asyncio.run(go()) is None and documents.hits == []


def test_only_the_allowed_hosts_are_fetched(documents: DocumentServer) -> None:
    url = documents.base + "/client.json"
    documents.documents["/client.json"] = good(url)

    async def go() -> Any:
        proxy = make_proxy(documents, client_metadata_hosts=["apps.example.com"])
        try:
            return await proxy.client(url)
        finally:
            await proxy.aclose()

    assert asyncio.run(go()) is None and documents.hits == []


@pytest.mark.slow
def test_the_wiremcp_client_signs_in_with_a_metadata_document(node: str, tmp_path: Path, documents: DocumentServer) -> None:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: .ci/system-packages installs Debian's chromium")
    port = free_port()
    upstream = UpstreamProvider(node, tmp_path, f"http://127.0.0.1:{port}")
    chromium = None
    seen: dict[str, Any] = {}
    try:
        # the proxy trusts the document server's certificate (httpx reads SSL_CERT_FILE)
        server = ProxiedServer(upstream, port, tmp_path / "proxy.sqlite3", env={"SSL_CERT_FILE": str(documents.cafile)})
        chromium = Chromium()
        url = documents.base + "/notes-client.json"

        async def read(page: Page) -> None:
            await page.wait_for("!!document.querySelector('#approve')")
            seen["host"] = await page.evaluate("document.querySelector('#client-host').textContent")

        async def go() -> None:
            async with Page(chromium) as page:
                login = ChromiumLogin(page, [read, approve, sign_in])
                documents.documents["/notes-client.json"] = {
                    **good(url), "client_name": "notes by document", "redirect_uris": [await login.redirect_uri()]}
                auth = OAuthClient(client_metadata_url=url, redirect_handler=login, store=MemoryTokenStore())
                try:
                    async with wiremcp.Client.http(server.mcp, auth=auth) as client:
                        seen["whoami"] = (await client.call_tool("whoami", {})).structured_content
                finally:
                    await login.aclose()
                    await auth.aclose()

        try:
            asyncio.run(go())
        finally:
            server.stop()
    finally:
        if chromium is not None:
            chromium.close()
        upstream.stop()
    assert seen["host"] == "127.0.0.1"
    assert seen["whoami"] == {"subject": "alice", "client_id": url, "scopes": ["notes:read", "notes:write"]}
    assert documents.hits == ["/notes-client.json"]
