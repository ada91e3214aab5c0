"""Sealed ``requestState`` for multi round-trip requests (basic/patterns/mrtr.mdx).

The state travels through the client, so it is attacker-controlled input
(mrtr.mdx, Server Requirements 4-5). `StateSealer` protects it with
HMAC-SHA256 and binds it to:

* an expiry (``ttl`` seconds; rejected after it lapses),
* the originating request: the method and a digest of its salient
  parameters (tool or prompt name and arguments, or the resource URI),
  so a state cannot be replayed on a different request,
* optionally the authenticated principal.

Wire form: ``base64url(payload) "." base64url(tag)``, payload being compact
JSON. The payload is integrity-protected, not encrypted: it holds what the
same client already sent (its earlier input responses). Several keys may be
given: the first signs, all verify, so keys can be rotated; instances that
share a key can serve each other's retries.
"""

from __future__ import annotations

import base64
import os
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

import orjson

from ..jsonrpc import InvalidParams

if TYPE_CHECKING:
    import hmac

# hashlib and hmac (OpenSSL: about 2 ms of import) are imported on first use:
# a server that never seals a requestState never needs them (cold start).

__all__ = ["StateSealer", "request_digest", "DEFAULT_STATE_TTL", "STATE_KEY_ENV"]

#: Seconds a requestState stays valid: long enough for a person to answer a form.
DEFAULT_STATE_TTL = 600
#: Environment variable holding the key (hex or any string) shared by all instances.
STATE_KEY_ENV = "WIREMCP_STATE_KEY"
_VERSION = 1


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_digest(method: str, salient: Any) -> str:
    """A short digest of what identifies a request (method + salient params)."""
    import hashlib

    raw = orjson.dumps([method, salient], option=orjson.OPT_SORT_KEYS)
    return _b64(hashlib.sha256(raw).digest()[:16])


def _mac(key: bytes, body: bytes) -> hmac.HMAC:
    import hashlib
    import hmac

    return hmac.new(key, body, hashlib.sha256)


def _key_bytes(key: str | bytes) -> bytes:
    return key if isinstance(key, bytes) else key.encode("utf-8")


class StateSealer:
    """Seals and opens ``requestState`` strings."""

    def __init__(
        self,
        keys: Iterable[str | bytes] | None = None,
        *,
        ttl: float = DEFAULT_STATE_TTL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        key_list = [_key_bytes(k) for k in keys] if keys is not None else []
        if not key_list:
            env = os.environ.get(STATE_KEY_ENV)
            # No key configured: a random one for this process. Retries then
            # only work against the same process (set WIREMCP_STATE_KEY to share).
            key_list = [env.encode() if env else os.urandom(32)]  # what secrets.token_bytes does
        if any(len(k) < 16 for k in key_list):
            raise ValueError("a requestState key must be at least 16 bytes")
        self._keys = key_list
        self.ttl = ttl
        self._clock = clock

    def seal(self, digest: str, data: Any, principal: str | None = None) -> str:
        payload: dict[str, Any] = {"v": _VERSION, "d": digest, "x": int(self._clock() + self.ttl), "s": data}
        if principal is not None:
            payload["p"] = principal
        body = orjson.dumps(payload)
        tag = _mac(self._keys[0], body).digest()
        return f"{_b64(body)}.{_b64(tag)}"

    def open(self, state: Any, digest: str, principal: str | None = None) -> Any:
        """The sealed data, or raise -32602 saying why the state is refused."""
        if type(state) is not str:
            raise InvalidParams("Invalid params: requestState must be a string")
        body_text, dot, tag_text = state.partition(".")
        try:
            body = _unb64(body_text)
            tag = _unb64(tag_text)
        except (ValueError, TypeError):
            body = tag = b""
        import hmac

        if not dot or not body or not any(hmac.compare_digest(_mac(k, body).digest(), tag) for k in self._keys):
            raise InvalidParams("Invalid params: requestState failed verification (it was altered or not issued here)")
        payload = orjson.loads(body)
        if payload.get("v") != _VERSION:
            raise InvalidParams("Invalid params: requestState has an unknown version")
        if payload.get("x", 0) < self._clock():
            raise InvalidParams("Invalid params: requestState has expired; send the request again without it")
        if payload.get("d") != digest:
            raise InvalidParams("Invalid params: requestState belongs to a different request")
        if payload.get("p") != principal:
            raise InvalidParams("Invalid params: requestState was issued to a different principal")
        return payload.get("s")
