"""PKCE (RFC 7636) and the ``state`` value of an authorization request.

Rules it keeps:

* the code verifier is 64 characters from the unreserved set, made from 48
  random bytes (RFC 7636 section 4.1 asks for 43 to 128 characters and at
  least 256 bits of entropy);
* the only challenge method is ``S256``: BASE64URL(SHA256(ASCII(verifier)))
  without padding (section 4.2); ``plain`` is never used;
* ``state`` is 32 random bytes, base64url, compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = ["b64url", "code_verifier", "code_challenge", "new_state", "same_state"]


def b64url(data: bytes) -> str:
    """Base64url without padding (RFC 7515 section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def code_verifier() -> str:
    return b64url(secrets.token_bytes(48))


def code_challenge(verifier: str) -> str:
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_state() -> str:
    return b64url(secrets.token_bytes(32))


def same_state(expected: str, received: str | None) -> bool:
    return received is not None and hmac.compare_digest(expected.encode(), received.encode())
