"""The proxy's HTTP plumbing: a parsed request and the answers it sends (ASGI).

Rules it keeps:

* a form body is ``application/x-www-form-urlencoded``, at most 64 KiB; a
  parameter given twice makes the request invalid (RFC 6749 section 3.1);
  so does a query parameter given twice;
* JSON answers carry ``Cache-Control: no-store``; HTML pages also carry a
  Content-Security-Policy without scripts, ``frame-ancestors 'none'`` and
  ``X-Frame-Options: DENY`` (a consent page must not be framed: clickjacking);
* cookies are ``HttpOnly``, ``SameSite=Lax`` (a top-level redirect back from
  the upstream provider still carries them), ``Path=/`` and ``Secure`` on an
  https issuer.
"""

from __future__ import annotations

from dataclasses import dataclass
from http.cookies import SimpleCookie, CookieError
from typing import Any, Awaitable, Callable

import orjson

from .._form import MAX_FORM_BYTES, RepeatedParameter, basic_credentials, form_pairs, read_body

__all__ = [
    "Request", "Scope", "Receive", "Send", "BadRequest", "read_request", "json_answer", "html_answer", "redirect", "cookie",
    "error_page_answer",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_HTML_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"cache-control", b"no-store"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


class BadRequest(Exception):
    """A request that does not parse (a message safe to show)."""


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    headers: dict[bytes, bytes]
    cookies: dict[str, str]
    json: dict[str, Any] | None = None

    def basic(self) -> tuple[str, str] | None:
        """(client id, secret) from HTTP Basic (each half form-urldecoded, RFC 6749 section 2.3.1)."""
        try:
            return basic_credentials(self.headers.get(b"authorization"))
        except ValueError as exc:
            raise BadRequest(str(exc)) from None


def _pairs(text: str) -> dict[str, str]:
    try:
        return form_pairs(text)
    except RepeatedParameter as exc:
        raise BadRequest(str(exc)) from None
    except ValueError:
        raise BadRequest("the parameters do not parse") from None


async def read_request(scope: Scope, receive: Receive) -> Request:
    headers: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        headers[name] = headers[name] + b"; " + value if name == b"cookie" and name in headers else value
    query = _pairs(scope.get("query_string", b"").decode("latin-1"))
    form: dict[str, str] = {}
    document: dict[str, Any] | None = None
    if scope["method"] == "POST":
        body = await read_body(receive)
        if body is None:
            raise BadRequest(f"the body is over {MAX_FORM_BYTES // 1024} KiB")
        kind = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if kind == b"application/x-www-form-urlencoded":
            try:
                form = _pairs(body.decode("utf-8"))
            except UnicodeDecodeError:
                raise BadRequest("the form is not UTF-8") from None
        elif kind == b"application/json":
            try:
                loaded = orjson.loads(body)
            except orjson.JSONDecodeError:
                raise BadRequest("the body is not JSON") from None
            if not isinstance(loaded, dict):
                raise BadRequest("the body is not a JSON object")
            document = loaded
    jar: dict[str, str] = {}
    raw = headers.get(b"cookie")
    if raw:
        try:
            parsed: SimpleCookie = SimpleCookie(raw.decode("latin-1"))
            jar = {k: m.value for k, m in parsed.items()}
        except CookieError:
            jar = {}
    return Request(scope["method"], scope["path"], query, form, headers, jar, document)


def cookie(name: str, value: str, *, secure: bool, max_age: int) -> tuple[bytes, bytes]:
    flags = f"{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}" + ("; Secure" if secure else "")
    return (b"set-cookie", flags.encode("latin-1"))


async def _send(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [*headers, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def json_answer(send: Send, status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *(extra or [])]
    await _send(send, status, headers, orjson.dumps(body))


async def html_answer(send: Send, status: int, page: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _send(send, status, [*_HTML_HEADERS, *(extra or [])], page.encode("utf-8"))


async def redirect(send: Send, url: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"location", url.encode("utf-8")), (b"cache-control", b"no-store"), *(extra or [])]
    await _send(send, 303, headers, b"")


async def error_page_answer(send: Send, status: int, title: str, message: str) -> None:
    from ._pages import error_page

    await html_answer(send, status, error_page(title, message))
