"""What an OAuth endpoint reads from a request: the form, HTTP Basic client credentials, a bounded body.

Shared by the servers of the auth package (the local issuer, `dev._app`; the
proxy, `proxy._http`), so the rules are written once:

* a form or query is ``application/x-www-form-urlencoded`` pairs; a parameter
  given twice makes it invalid (RFC 6749 sections 3.1 and 3.2);
* HTTP Basic credentials are ``base64(id ":" secret)`` in UTF-8, each half
  form-urldecoded (RFC 6749 section 2.3.1);
* a body is read up to ``limit`` bytes and no further: past it, None.

Each function raises ValueError for what does not parse; the caller answers
it as its endpoint must.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qsl, unquote_plus

__all__ = ["MAX_FORM_BYTES", "RepeatedParameter", "form_pairs", "basic_credentials", "read_body"]

#: The largest form an endpoint reads.
MAX_FORM_BYTES = 65536


class RepeatedParameter(ValueError):
    """A form or query that gives one parameter twice."""


def form_pairs(text: str) -> dict[str, str]:
    """The parameters of ``text``; ValueError if they do not parse, `RepeatedParameter` if one is given twice."""
    pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text))  # ValueError when malformed
    out = dict(pairs)
    if len(out) != len(pairs):
        raise RepeatedParameter("a parameter is given more than once")
    return out


def basic_credentials(header: bytes | None) -> tuple[str, str] | None:
    """(client id, secret) from an ``Authorization: Basic`` header; None without one; ValueError if it does not parse."""
    if header is None:
        return None
    scheme, _, value = header.decode("latin-1").partition(" ")
    if scheme.lower() != "basic":
        raise ValueError("the Authorization header is not HTTP Basic")
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise ValueError("the Authorization header is not base64 UTF-8") from None
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        raise ValueError("HTTP Basic credentials without a colon")
    return unquote_plus(client_id), unquote_plus(secret)


async def read_body(receive: Callable[[], Awaitable[dict[str, Any]]], limit: int = MAX_FORM_BYTES) -> bytes | None:
    """The request body (what came before a disconnect), or None past ``limit`` bytes (nothing more is kept)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)
