"""A local authorization server for development and tests: ``wiremcp auth dev``, `wiremcp.testing.local_issuer`.

**Development only.** It signs JWT access tokens (RFC 9068) with a generated
key for any subject, client and scopes asked of it, and a resource server
verifies them the way it verifies any issuer's: RFC 8414 metadata at
``{issuer}/.well-known/oauth-authorization-server``, the key set at its
``jwks_uri``. Its metadata and tokens say ``development_only: true``.

Rules it keeps (each module states its own):

* `DevIssuer` (``_issuer``): the key, the metadata, the key set, minting, the
  token endpoint's logic; pure, no I/O;
* `issuer_app` (``_app``): those over HTTP, as an ASGI app;
* `bind`, `serve`, `serve_in_thread` (``_serve``): on uvicorn, on loopback
  only unless forced;
* `save`, `load` (``_state``): the key kept between runs in a per-user 0700
  directory, the file 0600.

docs/auth.md, "A local issuer for development", shows it in use.
"""

from __future__ import annotations

from ._app import issuer_app
from ._issuer import DEFAULT_CLIENT, DEFAULT_LIFETIME, DEFAULT_SCOPES, DEFAULT_SUBJECT, DevIssuer
from ._serve import NotLoopback, bind, is_loopback, serve, serve_in_thread, url_of
from ._state import load, save, state_file

__all__ = [
    "DevIssuer",
    "DEFAULT_CLIENT",
    "DEFAULT_LIFETIME",
    "DEFAULT_SCOPES",
    "DEFAULT_SUBJECT",
    "issuer_app",
    "NotLoopback",
    "bind",
    "is_loopback",
    "serve",
    "serve_in_thread",
    "url_of",
    "load",
    "save",
    "state_file",
]
