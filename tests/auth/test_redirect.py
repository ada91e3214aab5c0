"""Redirect handlers: the authorization URL check, the headless one, the loopback listener over real HTTP."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from wiremcp.auth import AuthError, LoopbackRedirect, check_authorization_url
from wiremcp.auth._redirect import callback_params


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "file:///etc/passwd", "data:text/html,x", "myapp://cb", "https://u:p@as.example.com/a", "https:///x"]
)
def test_authorization_url_refused(url):
    with pytest.raises(AuthError, match="authorization request"):
        check_authorization_url(url)


def test_authorization_url_allowed():
    check_authorization_url("https://as.example.com/authorize?client_id=x")
    check_authorization_url("http://localhost:9000/authorize")


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
