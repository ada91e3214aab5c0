"""Redirect handlers: the authorization URL check, the headless one, the loopback listener over real HTTP."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from wiremcp.auth import AuthError, LoopbackRedirect, check_authorization_url
from wiremcp.auth._redirect import callback_params


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "vbscript:msgbox", "myapp://cb",
        "https://u:p@as.example.com/a", "https:///x",
        "http://as.example.com/authorize",  # http only for loopback
        "http://10.0.0.1/authorize",
        "https://as.example.com/a b", "https://as.example.com/a\nb", "https://as.example.com/a\tb",  # shell-splittable
        "https://as.example.com/\x00", "https://as.example.com/\x7f",
    ],
)
def test_authorization_url_refused(url):
    with pytest.raises(AuthError, match="authorization request"):
        check_authorization_url(url)


def test_authorization_url_allowed():
    check_authorization_url("https://as.example.com/authorize?client_id=x")
    check_authorization_url("http://localhost:9000/authorize")
    check_authorization_url("http://127.0.0.1:9000/authorize?x=%20y")
    check_authorization_url("http://[::1]:9000/authorize")


def test_callback_params_first_value_wins():
    assert callback_params("http://127.0.0.1:1/callback?code=a&state=s&code=b&iss=https%3A%2F%2Fas") == {
        "code": "a",
        "state": "s",
        "iss": "https://as",
    }


def test_loopback_redirect_over_real_http():
    async def go():
        opened: list[str] = []
        pages: list[httpx.Response] = []

        def browser(url: str) -> None:  # runs in a thread, blocking, like a browser command
            opened.append(url)
            httpx.get(redirect.replace("/callback", "/favicon.ico"))
            pages.append(httpx.get(redirect + "?code=abc&state=xyz&iss=https%3A%2F%2Fas.example.com"))

        handler = LoopbackRedirect(open_browser=browser, timeout=10)
        redirect = await handler.redirect_uri()
        assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
        assert handler.port != 0  # an ephemeral port was bound
        params = await handler.authorize("https://as.example.com/authorize?x=1", None)  # type: ignore[arg-type]
        for _ in range(100):  # the browser thread reads the page after the handler got its answer
            if pages:
                break
            await asyncio.sleep(0.05)
        await handler.aclose()
        return opened, params, pages[0]

    opened, params, page = asyncio.run(go())
    assert opened == ["https://as.example.com/authorize?x=1"]
    assert params == {"code": "abc", "state": "xyz", "iss": "https://as.example.com"}
    assert page.status_code == 200 and b"abc" not in page.content


def test_loopback_redirect_refuses_a_bad_url_before_opening_anything():
    opened: list[str] = []
    handler = LoopbackRedirect(open_browser=opened.append)
    with pytest.raises(AuthError):
        asyncio.run(handler.authorize("javascript:alert(1)", None))  # type: ignore[arg-type]
    assert opened == []


async def _get(url: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.get(url, timeout=10)


def test_loopback_listener_binds_127_0_0_1_and_takes_one_callback():
    """Localhost redirect URI impersonation defences on our side: a loopback-only listener on an
    ephemeral port; nothing is accepted while no authorization is in progress, nor on another path,
    nor after the first callback."""

    async def go():
        handler = LoopbackRedirect(open_browser=lambda url: None, timeout=10)
        redirect = await handler.redirect_uri()
        host, port = handler._server.sockets[0].getsockname()[:2]  # type: ignore[union-attr]
        assert host == "127.0.0.1" and port == handler.port and port != 0
        early = await _get(redirect + "?code=early&state=s")  # no authorization in progress
        task = asyncio.ensure_future(handler.authorize("https://as.example.com/authorize", None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        wrong = await _get(redirect.replace("/callback", "/other") + "?code=wrong&state=s")
        first = await _get(redirect + "?code=first&state=s")
        params = await task
        late = await _get(redirect + "?code=late&state=s")  # a second callback changes nothing
        await handler.aclose()
        return early, wrong, first, late, params

    early, wrong, first, late, params = asyncio.run(go())
    assert (early.status_code, wrong.status_code, first.status_code, late.status_code) == (404, 404, 200, 404)
    assert params == {"code": "first", "state": "s"}


def test_loopback_listener_times_out():
    async def go():
        handler = LoopbackRedirect(open_browser=lambda url: None, timeout=0.2)
        try:
            with pytest.raises(AuthError, match="no answer on the redirect URI within 0.2 s"):
                await handler.authorize("https://as.example.com/authorize", None)  # type: ignore[arg-type]
        finally:
            await handler.aclose()

    asyncio.run(go())


def test_loopback_listener_ignores_a_callback_with_another_state():
    """Issue 23, defect 6c: the first ``/callback`` ended the login whatever its ``state``, so a local
    page (or process) that knows the port could answer first and spoil the login. A callback whose
    ``state`` is not the authorization request's is answered 400 and the listener keeps waiting."""

    async def go():
        handler = LoopbackRedirect(open_browser=lambda url: None, timeout=10)
        redirect = await handler.redirect_uri()
        task = asyncio.ensure_future(
            handler.authorize("https://as.example.com/authorize?client_id=c&state=the-right-one&code_challenge=x", None)  # type: ignore[arg-type]
        )
        await asyncio.sleep(0)
        forged = await _get(redirect + "?code=attacker&state=guessed")
        missing = await _get(redirect + "?code=attacker")
        error = await _get(redirect + "?error=access_denied&state=guessed")
        other_path = await _get(redirect + "x?code=attacker&state=the-right-one")
        assert not task.done()
        right = await _get(redirect + "?code=good&state=the-right-one&iss=https%3A%2F%2Fas.example.com")
        params = await task
        await handler.aclose()
        return forged, missing, error, other_path, right, params

    forged, missing, error, other_path, right, params = asyncio.run(go())
    for page in (forged, missing, error):
        assert page.status_code == 400
        assert b"does not match" in page.content and b"attacker" not in page.content
    assert other_path.status_code == 404
    assert right.status_code == 200
    assert params == {"code": "good", "state": "the-right-one", "iss": "https://as.example.com"}
