"""Sealed ``requestState`` for multi round-trip requests (basic/patterns/mrtr.mdx).

The state travels through the client, so it is attacker-controlled input
(mrtr.mdx, Server Requirements 4-5). `StateSealer` protects it with
HMAC-SHA256.

Wire form: ``base64url(payload) "." base64url(tag)``, unpadded, payload
being compact JSON ``{"v", "d", "x", "s"[, "p"]}``; the tag is the full
32-byte HMAC-SHA256 of the payload bytes under the first key.

What `open` guarantees when it returns the sealed data (and what it does
not):

* **Integrity and origin**: the payload is byte for byte what a holder of
  one of the keys sealed. The tag is compared in constant time
  (`hmac.compare_digest`) against the full 32-byte MAC under each key; an
  empty, truncated, extended or re-encoded tag or payload (padding, the
  standard ``+/`` alphabet, stray characters: anything but the one
  canonical unpadded base64url text) is refused before any comparison.
* **Freshness**: the state was sealed less than ``ttl`` seconds ago (per the
  sealing server's clock). Within that time it can be replayed: the seal
  does not make a state single-use.
* **Request binding**: it was issued for the same method and the same
  salient parameters (tool or prompt name and arguments, or the resource
  URI; `request_digest`), so it cannot be carried to a different request.
* **Caller binding**: when it was sealed for an authenticated principal
  (the server passes the access token's issuer and subject:
  `wiremcp.server._mrtr.caller`), it opens only for that same principal,
  and a state sealed without one opens only without one. Only a digest of
  the principal is kept in the payload. Without authentication (stdio)
  there is no caller to bind.
* **Size**: the data sealed is at most ``max_size`` bytes of JSON (default
  256 KiB, `DEFAULT_MAX_STATE_SIZE`); sealing more raises -32602 instead of
  issuing a state that large, and a state longer than any this sealer can
  issue is refused before it is decoded.
* **Not confidentiality**: the payload is signed, not encrypted. It holds
  what the same client already sent (its earlier input responses), which
  the client can read back.

Every refusal is -32602 (`InvalidParams`) with a message saying which rule
failed. Several keys may be given (``WIREMCP_STATE_KEY``: separated by
commas): the first signs, all verify, so keys can be rotated (add the new
key second everywhere, then move it first, then drop the old one);
instances that share a key can serve each other's retries.
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

__all__ = ["StateSealer", "request_digest", "DEFAULT_STATE_TTL", "DEFAULT_MAX_STATE_SIZE", "STATE_KEY_ENV"]

#: Seconds a requestState stays valid: long enough for a person to answer a form.
DEFAULT_STATE_TTL = 600
#: Environment variable holding the keys (any strings of 16+ bytes, comma-separated) shared by all instances.
STATE_KEY_ENV = "WIREMCP_STATE_KEY"
#: Bytes of sealed data (the answers gathered so far, as JSON) one state may carry.
DEFAULT_MAX_STATE_SIZE = 256 * 1024
_VERSION = 1
_TAG_SIZE = 32  # HMAC-SHA256
#: The payload's fields other than the sealed data: version, digest, expiry, principal digest.
_ENVELOPE = 128
_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes | None:
    """The bytes of a canonical unpadded base64url text, else ``None`` (never a second spelling)."""
    if not text or len(text) % 4 == 1 or not _ALPHABET.issuperset(text):
        return None
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    # Unused low bits must be zero: "QQ" and "QR" must not both stand for b"A".
    return data if _b64(data) == text else None


def _b64_length(size: int) -> int:
    return (4 * size + 2) // 3


def principal_digest(principal: str) -> str:
    """What the payload keeps of a principal: a digest, not the subject itself."""
    import hashlib

    return _b64(hashlib.sha256(principal.encode("utf-8")).digest()[:16])


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
        max_size: int = DEFAULT_MAX_STATE_SIZE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``max_size``: bytes of sealed data (as JSON) one state may carry."""
        key_list = [_key_bytes(k) for k in keys] if keys is not None else []
        if not key_list:
            env = os.environ.get(STATE_KEY_ENV)
            if env:
                key_list = [k.strip().encode() for k in env.split(",")]
        #: True when the keys were configured (and so can be shared by several processes).
        self.configured = bool(key_list)
        if not key_list:
            # No key configured: a random one for this process. Retries then
            # only work against the same process (set WIREMCP_STATE_KEY to share).
            key_list = [os.urandom(32)]  # what secrets.token_bytes does
        if any(len(k) < 16 for k in key_list):
            raise ValueError("a requestState key must be at least 16 bytes")
        if max_size < 0:
            raise ValueError("max_size must not be negative")
        self._keys = key_list
        self.ttl = ttl
        self.max_size = max_size
        self._clock = clock

    @property
    def max_state_length(self) -> int:
        """The longest state string this sealer can issue (longer ones are refused unread)."""
        return _b64_length(self.max_size + _ENVELOPE) + 1 + _b64_length(_TAG_SIZE)

    def seal(self, digest: str, data: Any, principal: str | None = None) -> str:
        """A state carrying ``data``; -32602 when ``data`` is over ``max_size`` bytes of JSON."""
        sealed = orjson.dumps(data)
        if len(sealed) > self.max_size:
            raise InvalidParams(
                f"Invalid params: the input responses gathered for this request are {len(sealed)} bytes, "
                f"over this server's requestState limit of {self.max_size} bytes; answer with less"
            )
        payload: dict[str, Any] = {"v": _VERSION, "d": digest, "x": int(self._clock() + self.ttl), "s": orjson.Fragment(sealed)}
        if principal is not None:
            payload["p"] = principal_digest(principal)
        body = orjson.dumps(payload)
        tag = _mac(self._keys[0], body).digest()
        return f"{_b64(body)}.{_b64(tag)}"

    def open(self, state: Any, digest: str, principal: str | None = None) -> Any:
        """The sealed data, or raise -32602 saying why the state is refused."""
        if type(state) is not str:
            raise InvalidParams("Invalid params: requestState must be a string")
        if len(state) > self.max_state_length:
            raise InvalidParams(
                f"Invalid params: requestState is {len(state)} characters, longer than any this server issues"
            )
        body_text, dot, tag_text = state.partition(".")
        body = _unb64(body_text) if dot else None
        tag = _unb64(tag_text) if dot else None
        if body is None or tag is None or len(tag) != _TAG_SIZE:
            raise InvalidParams(
                "Invalid params: requestState is malformed (not the payload and the full tag, "
                "each in unpadded base64url); it was altered or not issued here"
            )
        import hmac

        if not any(hmac.compare_digest(_mac(k, body).digest(), tag) for k in self._keys):
            raise InvalidParams("Invalid params: requestState failed verification (it was altered or not issued here)")
        payload = orjson.loads(body)
        if type(payload) is not dict or payload.get("v") != _VERSION:
            raise InvalidParams("Invalid params: requestState has an unknown version")
        if payload.get("x", 0) < self._clock():
            raise InvalidParams("Invalid params: requestState has expired; send the request again without it")
        if payload.get("d") != digest:
            raise InvalidParams("Invalid params: requestState belongs to a different request")
        expected = None if principal is None else principal_digest(principal)
        if payload.get("p") != expected:
            raise InvalidParams("Invalid params: requestState was issued to a different principal")
        return payload.get("s")
