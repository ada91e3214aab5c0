"""The attacks of security_best_practices.mdx, "Confused Deputy Problem", against the OAuth proxy.

The set-up is that of test_proxy_flow.py (oidc-provider upstream with one pre-registered client,
examples/oauth_proxy.py, headless Chromium as the person):

* **a second client riding on the upstream consent**: once the person has signed in for one MCP
  client, the upstream provider lets the proxy's client through without asking; another MCP
  client (dynamically registered, so anyone's) still gets the proxy's consent page naming it, and
  nothing reaches its redirect URI until the person approves. A refusal goes back as
  ``access_denied``; an approval is then remembered for that client;
* **a redirect URI one character off** (or with a slash added) gets an error page, never a
  redirect; at the token endpoint a code is refused for another redirect URI;
* **a stolen state**: an attacker's own sign-in, up to the upstream callback, opened in the
  person's browser, is refused (the state is bound to the attacker's browser), and the
  attacker's pending sign-in is not consumed by the attempt; the consent form of another browser
  is refused too.

And revocation while a token is fresh: the next call is refused for it alone, the refresh too,
and a new sign-in of that client meets the consent page again.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest

pytest.importorskip("jwt")

import httpx  # noqa: E402
import jwt  # noqa: E402

import wiremcp  # noqa: E402
from wiremcp.auth import MemoryTokenStore, OAuthClient  # noqa: E402
from wiremcp.testing.chromium import Chromium, Page  # noqa: E402

from ._harness import (  # noqa: E402
    ChromiumLogin, HandClient, ProxiedServer, Sink, approve, mcp_post, open_chromium, proxied_stack, refresh, sign_in,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack(node: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxiedServer]:
    for _, server in proxied_stack(node, tmp_path_factory.mktemp("proxy")):
        yield server


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    yield from open_chromium()


async def first_client(page: Page, server: ProxiedServer) -> str:
    """The person signs in for the wiremcp client (consent, upstream login); its client id."""
    login = ChromiumLogin(page, [approve, sign_in])
    auth = OAuthClient(client_name="notes-cli", redirect_handler=login, store=MemoryTokenStore())
    try:
        async with wiremcp.Client.http(server.mcp, auth=auth) as client:
            assert (await client.call_tool("whoami", {})).structured_content["subject"] == "alice"
        return str((auth._client_info or {})["client_id"])
    finally:
        await login.aclose()
        await auth.aclose()


def page_text(page: Page) -> Any:
    return page.evaluate("document.body.innerText")


def test_a_second_client_gets_its_own_consent_page(stack: ProxiedServer, chromium: Chromium) -> None:
    seen: dict[str, Any] = {}

    async def go() -> None:
        sink = await Sink().start()
        try:
            async with Page(chromium) as page:
                seen["first"] = await first_client(page, stack)
                # the upstream provider now lets the proxy's client through at once; the other
                # MCP client still meets the proxy's consent page, and its redirect URI gets nothing
                other = HandClient(stack.url, sink.url, "other-app")
                seen["other"] = other.client_id
                await page.goto(other.authorize_url())
                await page.wait_for("!!document.querySelector('#approve')")
                seen["shown"] = await page.evaluate("document.querySelector('#client-id').textContent")
                seen["hits_before"] = list(sink.hits)
                # refused: access_denied with its state, and still nothing of the upstream sign-in
                await page.click("#deny")
                await page.wait_for("!!document.querySelector('#ok')")
                seen["denied"] = parse_qs(urlsplit(sink.hits[-1]).query)
                # approved: back with a code, no upstream login form on the way (the upstream consent)
                await page.goto(other.authorize_url())
                await approve(page)
                await page.wait_for(f"location.href.startsWith({sink.url!r}) && !!document.querySelector('#ok')")
                code = parse_qs(urlsplit(sink.hits[-1]).query)["code"][0]
                seen["token"] = other.redeem(code).json()
                # remembered: the next authorization of the same client needs no page at all
                again = len(sink.hits)
                await page.goto(other.authorize_url())
                await page.wait_for(f"location.href.startsWith({sink.url!r}) && !!document.querySelector('#ok')")
                seen["again"] = sink.hits[again:]
        finally:
            await sink.close()

    asyncio.run(go())
    assert seen["shown"] == seen["other"] != seen["first"]
    assert seen["hits_before"] == []
    assert seen["denied"]["error"] == ["access_denied"] and "code" not in seen["denied"]
    assert seen["denied"]["iss"] == [stack.url]
    claims = jwt.decode(seen["token"]["access_token"], options={"verify_signature": False})
    assert claims["sub"] == "alice" and claims["client_id"] == seen["other"] and claims["aud"] == stack.mcp
    assert len(seen["again"]) == 1 and "code=" in seen["again"][0]


@pytest.mark.parametrize("change", ["last character", "slash added"])
def test_a_redirect_uri_off_by_one_character_is_never_redirected_to(stack: ProxiedServer, chromium: Chromium, change: str) -> None:
    seen: dict[str, Any] = {}

    async def go() -> None:
        sink = await Sink().start()
        try:
            client = HandClient(stack.url, sink.url, "exact")
            wrong = sink.url[:-1] + "c" if change == "last character" else sink.url + "/"
            async with httpx.AsyncClient() as http:
                answer = await http.get(client.authorize_url(redirect_uri=wrong))
                seen["status"], seen["location"] = answer.status_code, answer.headers.get("location")
            async with Page(chromium) as page:
                await page.goto(client.authorize_url(redirect_uri=wrong))
                seen["page"] = await page_text(page)
                # the right one gets the consent page, and a code; redeemed for the wrong one, refused
                await page.goto(client.authorize_url())
                await approve(page)
                await sign_in(page, "carol")
                await page.wait_for("!!document.querySelector('#ok')")
            code = parse_qs(urlsplit(sink.hits[-1]).query)["code"][0]
            client.redirect_uri = wrong
            seen["redeemed"] = client.redeem(code).json()
            seen["hits"] = list(sink.hits)
        finally:
            await sink.close()

    asyncio.run(go())
    assert seen["status"] == 400 and seen["location"] is None
    assert "Wrong redirect URI" in seen["page"]
    assert len(seen["hits"]) == 1  # the correct authorization only
    assert seen["redeemed"]["error"] == "invalid_grant"


async def attacker_callback(http: httpx.AsyncClient, stack: ProxiedServer, client: HandClient) -> str:
    """The attacker's own sign-in (consent, upstream login as mallory), stopped at the proxy's callback URL."""
    consent = await http.get(client.authorize_url())
    txn = re.search(r'name=txn value="([^"]+)"', consent.text)
    csrf = re.search(r'name=csrf value="([^"]+)"', consent.text)
    assert txn and csrf, consent.text
    answer = await http.post(stack.url + "/oauth/consent", data={"txn": txn[1], "csrf": csrf[1], "decision": "approve"})
    for _ in range(12):
        location = urljoin(str(answer.url), answer.headers["location"]) if "location" in answer.headers else None
        if location is not None and location.startswith(stack.url + "/oauth/callback"):
            return location
        if location is not None:
            answer = await http.get(location)
        elif "id=login" in answer.text:
            answer = await http.post(str(answer.url), data={"login": "mallory"})
        else:
            raise AssertionError(answer.text)
    raise AssertionError("no callback")


def test_a_stolen_state_is_refused_in_another_browser(stack: ProxiedServer, chromium: Chromium) -> None:
    seen: dict[str, Any] = {}

    async def go() -> None:
        sink = await Sink().start()
        try:
            client = HandClient(stack.url, sink.url, "mallory-app")
            seen["sink"] = sink.url
            async with httpx.AsyncClient() as attacker:
                callback = await attacker_callback(attacker, stack, client)
                async with Page(chromium) as page:
                    await page.goto(callback)
                    seen["victim"] = await page_text(page)
                seen["hits_after_victim"] = list(sink.hits)
                # the attacker's own browser still completes it: the attempt consumed nothing
                own = await attacker.get(callback)
                seen["own"] = own.status_code, own.headers.get("location", "")
                # a consent form posted from another browser (no binding cookie) is refused
                consent = await attacker.get(client.authorize_url())
                form = dict(re.findall(r'name=(txn|csrf) value="([^"]+)"', consent.text))
            async with httpx.AsyncClient() as elsewhere:
                posted = await elsewhere.post(stack.url + "/oauth/consent", data={**form, "decision": "approve"})
                seen["elsewhere"] = posted.status_code, posted.headers.get("location")
        finally:
            await sink.close()

    asyncio.run(go())
    assert "Sign-in started elsewhere" in seen["victim"]
    assert seen["hits_after_victim"] == []
    assert seen["own"][0] == 303 and seen["own"][1].startswith(seen["sink"] + "?") and "code=" in seen["own"][1]
    assert seen["elsewhere"] == (400, None)


def test_after_revocation_the_client_is_refused_and_asked_again(stack: ProxiedServer, chromium: Chromium) -> None:
    """The person revokes the client on the consents page while its token is still fresh: the next call
    is refused (the grant is gone), the refresh too, and a new sign-in meets the consent page again."""
    seen: dict[str, Any] = {}

    async def again(page: Page) -> None:
        await page.wait_for("!!document.querySelector('#approve')")
        seen["asked_again"] = True
        await page.click("#deny")

    async def go() -> None:
        async with Page(chromium) as page:
            login = ChromiumLogin(page, [approve, lambda p: sign_in(p, "dave")])
            auth = OAuthClient(client_name="revoked-app", redirect_handler=login, store=MemoryTokenStore())
            try:
                async with wiremcp.Client.http(stack.mcp, auth=auth) as client:
                    seen["before"] = (await client.call_tool("whoami", {})).structured_content
                    seen["token"] = dict(auth._token or {})
                    cid = (auth._client_info or {})["client_id"]
                    await page.goto(stack.url + "/oauth/consents")
                    await page.click(f"#revoke-{cid}")
                    await page.wait_for("!!document.querySelector('#none')")
                    seen["raw"] = mcp_post(stack.mcp, seen["token"]["access_token"])
                    seen["refresh"] = refresh(stack.url, cid, seen["token"]["refresh_token"]).json()
                    login.steps = [again]
                    try:
                        await client.call_tool("whoami", {})
                    except Exception as exc:  # the client's own error for a denied authorization
                        seen["after"] = exc
            finally:
                await login.aclose()
                await auth.aclose()

    asyncio.run(go())
    assert seen["before"]["subject"] == "dave"
    assert seen["token"]["expires_at"] - time.time() > 60  # still fresh: refused for the revocation alone
    raw = seen["raw"]
    assert raw.status_code == 401 and "revoked" in raw.headers["www-authenticate"]
    assert seen["refresh"]["error"] == "invalid_grant"
    assert seen.get("asked_again") and "access_denied" in str(seen["after"])
