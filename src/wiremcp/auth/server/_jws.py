"""Compact JWS (RFC 7515) taken apart strictly, and its signature checked with a parsed key.

`parse` splits a token into its three base64url segments (RFC 7515 section
7.1; characters outside the base64url alphabet, padding or a wrong length
are refused), decodes the header and the payload as JSON objects (orjson:
invalid UTF-8, NaN or trailing data are refused) and refuses a ``crit``
header: no JWS extension is understood here (section 4.1.11). The
signature is checked by PyJWT's algorithm objects with a key parsed once
(`verify_signature`), so the cost per token is one signature check and two
small JSON decodes.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache
from typing import Any

import orjson

from ._errors import AuthError, Reason

__all__ = ["parse", "verify_signature"]

_B64URL = re.compile(rb"[A-Za-z0-9_-]*")


def _segment(raw: bytes, what: str, reason: Reason) -> bytes:
    if not _B64URL.fullmatch(raw) or len(raw) % 4 == 1:
        raise AuthError(reason, f"the {what} is not base64url")
    try:
        return base64.urlsafe_b64decode(raw + b"=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        raise AuthError(reason, f"the {what} is not base64url") from None


def _object(data: bytes, what: str, reason: Reason) -> dict[str, Any]:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    if type(value) is not dict:
        raise AuthError(reason, f"the {what} is not a JSON object")
    return value


def parse(token: str, *, what: str = "access token", reason: Reason = "malformed") -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    """``(header, claims, signing input, signature)`` of a compact JWS; `AuthError` if malformed."""
    try:
        raw = token.encode("ascii")
    except UnicodeEncodeError:
        raise AuthError(reason, f"the {what} is not a compact JWS") from None
    parts = raw.split(b".")
    if len(parts) != 3:
        raise AuthError(reason, f"the {what} is not a compact JWS") from None
    header = _object(_segment(parts[0], f"{what}'s header", reason), f"{what}'s header", reason)
    if "crit" in header:
        raise AuthError(reason, f"the {what} names critical extensions this server does not support")
    claims = _object(_segment(parts[1], f"{what}'s payload", reason), f"{what}'s payload", reason)
    signature = _segment(parts[2], f"{what}'s signature", reason)
    return header, claims, raw[: len(parts[0]) + 1 + len(parts[1])], signature


@lru_cache(maxsize=None)
def _algorithm(alg: str) -> Any:
    import jwt

    return jwt.get_algorithm_by_name(alg)


def verify_signature(alg: str, key: Any, signing_input: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``alg``'s signature of ``signing_input`` under ``key`` (a parsed key)."""
    try:
        return bool(_algorithm(alg).verify(signing_input, key, signature))
    except Exception:  # noqa: BLE001 - a key of the wrong type, a signature of the wrong size: not valid
        return False
