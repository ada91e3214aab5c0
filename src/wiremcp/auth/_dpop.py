"""The client's side of DPoP (RFC 9449): one key, the servers' nonces, a fresh proof per request.

Rules it keeps:

* ``dpop=True`` always binds tokens, ``False`` never; ``"auto"`` binds them
  when the authorization server lists the key's algorithm (ES256) in
  ``dpop_signing_alg_values_supported``, and not when it lists none;
* one P-256 key per client, made when first needed; a token stored with the
  key it is bound to (``dpop_key``, PEM) brings that key back (`adopt`),
  unless DPoP is off; an unreadable stored key is logged and a new one made;
* a proof is fresh per request (``htm``, ``htu``, ``jti``, ``iat``, and
  ``ath`` with the access token: `_jose.dpop_proof`) and carries the nonce
  last seen from that origin;
* ``DPoP-Nonce`` headers are kept per origin (scheme and host, lower case),
  from the authorization server and the MCP server alike.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlsplit

from ._discovery import ServerMetadata
from ._jose import PrivateKey, default_algorithm, dpop_proof, generate_key, load_private_key, private_key_pem

__all__ = ["DPoPKey", "origin"]

log = logging.getLogger("wiremcp.auth")


def origin(url: str) -> str:
    """The origin of ``url``, lower case: what a DPoP nonce belongs to."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class DPoPKey:
    """One client's DPoP key and the nonces servers gave it."""

    def __init__(self) -> None:
        self._key: PrivateKey | None = None
        self._nonces: dict[str, str] = {}

    def key(self) -> PrivateKey:
        """The key, made the first time it is needed."""
        if self._key is None:
            self._key = generate_key()
        return self._key

    def pem(self) -> str:
        """The key in PEM, to be stored with the tokens it binds."""
        return private_key_pem(self.key())

    def wanted(self, mode: bool | Literal["auto"], metadata: ServerMetadata) -> bool:
        """Whether a token request to this authorization server binds the token, ``mode`` being ``OAuthClient.dpop``."""
        if mode is True:
            return True
        if mode is False:
            return False
        algs = metadata.get_list("dpop_signing_alg_values_supported") or []
        return default_algorithm(self.key()) in algs if algs else False

    def adopt(self, token: Mapping[str, Any], mode: bool | Literal["auto"]) -> None:
        """Use the DPoP key a stored token is bound to (unless ``mode`` is ``False``: DPoP off)."""
        pem = token.get("dpop_key")
        if isinstance(pem, str) and mode is not False:
            try:
                self._key = load_private_key(pem)
            except ValueError:
                log.info("the stored DPoP key is unreadable: a new one will be made")

    def note_nonce(self, url: str, nonce: str) -> None:
        """A ``DPoP-Nonce`` from ``url``'s origin: the next proof there carries it."""
        self._nonces[origin(url)] = nonce

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request (with ``ath`` when it carries ``access_token``)."""
        return dpop_proof(self.key(), method, url, nonce=self._nonces.get(origin(url)), access_token=access_token)
