"""The proxy's records on a `KeyValueStore`, sealed with the server's key (AES-256-GCM).

Rules it keeps:

* every record is a JSON object sealed with AES-256-GCM under a key derived
  from the proxy's secret (HMAC-SHA256 with a fixed label), a fresh 96-bit
  nonce each time, and the record's slot name as associated data: a sealed
  value copied to another slot does not open;
* slot names never hold a secret or a person's identifier: codes, refresh
  tokens, states and user names are HMAC'd (keyed with a second derived key)
  before they become part of a key; client ids are public and HMAC'd too, so
  that one shape fits all;
* `take` reads and deletes (single-use codes and states). On a store shared
  by several workers the two steps are not one atomic operation; the window
  is a round trip, and codes are also bound to the client, its PKCE verifier
  and its redirect URI;
* a record that does not open (another key, tampering) reads as absent.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import TYPE_CHECKING, Any

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

if TYPE_CHECKING:
    from ...server.storage import KeyValueStore

__all__ = ["SealedStore", "derive"]

PREFIX = "wiremcp.oauthproxy:"


def derive(secret: bytes, label: bytes) -> bytes:
    """32 bytes for ``label`` from ``secret`` (HMAC-SHA256; one purpose per label)."""
    return hmac.new(secret, b"wiremcp oauth proxy " + label, hashlib.sha256).digest()


class SealedStore:
    """Sealed JSON records by (kind, identifiers) on ``kv``."""

    def __init__(self, kv: KeyValueStore, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("the proxy's key must be at least 16 bytes")
        self.kv = kv
        self._aead = AESGCM(derive(secret, b"store encryption"))
        self._names = derive(secret, b"store names")

    def slot(self, kind: str, *idents: str) -> str:
        """The store key of a record: the kind, then each identifier HMAC'd."""
        parts = [hmac.new(self._names, i.encode(), hashlib.sha256).hexdigest()[:40] for i in idents]
        return PREFIX + kind + ":" + ":".join(parts)

    def _seal(self, slot: str, record: dict[str, Any]) -> str:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, orjson.dumps(record), slot.encode())
        return base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def _open(self, slot: str, value: Any) -> dict[str, Any] | None:
        if not isinstance(value, str):
            return None
        try:
            raw = base64.urlsafe_b64decode(value.encode("ascii"))
            opened = orjson.loads(self._aead.decrypt(raw[:12], raw[12:], slot.encode()))
        except (ValueError, InvalidTag, orjson.JSONDecodeError):
            return None
        return opened if isinstance(opened, dict) else None

    async def put(self, kind: str, idents: tuple[str, ...], record: dict[str, Any], ttl: float | None) -> None:
        slot = self.slot(kind, *idents)
        await self.kv.set(slot, self._seal(slot, record), ttl=ttl)

    async def get(self, kind: str, *idents: str) -> dict[str, Any] | None:
        slot = self.slot(kind, *idents)
        return self._open(slot, await self.kv.get(slot))

    async def take(self, kind: str, *idents: str) -> dict[str, Any] | None:
        """The record, deleted as it is read (single use)."""
        slot = self.slot(kind, *idents)
        value = await self.kv.get(slot)
        if value is None or not await self.kv.delete(slot):
            return None  # absent, or another request took it first
        return self._open(slot, value)

    async def delete(self, kind: str, *idents: str) -> bool:
        return await self.kv.delete(self.slot(kind, *idents))

    async def slots(self, kind: str, *idents: str) -> list[str]:
        """The store keys under (kind, idents...): e.g. every grant of one user and client."""
        return await self.kv.keys(self.slot(kind, *idents) + ":")

    async def get_slot(self, slot: str) -> dict[str, Any] | None:
        return self._open(slot, await self.kv.get(slot))

    async def delete_slot(self, slot: str) -> bool:
        return await self.kv.delete(slot)
