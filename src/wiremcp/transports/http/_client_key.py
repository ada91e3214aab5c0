"""Whom a per-client cap counts: the authenticated principal, else the client's address.

The per-client caps (``max_sessions_per_client``, ``max_listens_per_client``)
share a server among its clients. Rules kept here:

* a request the resource server authenticated (``current_auth`` is set by
  `_auth.AuthGate` before the app reads the key) is counted against its
  principal, (issuer, subject, client id): two users behind one address (a
  reverse proxy, a NAT) each get their own share, and one user's share does
  not grow with the addresses they come from;
* any other request is counted against the client's address as the ASGI
  server gives it (``scope["client"]``). Behind a reverse proxy that is the
  proxy's address, unless the proxy is trusted: ``serve_http(trusted_proxies=)``
  (``wiremcp run --trusted-proxy``, ``WIREMCP_TRUSTED_PROXIES``) has uvicorn
  replace it with the address the proxy names in ``X-Forwarded-For`` (uvicorn's
  own proxy-headers support; a header from anyone else is ignored);
* the two kinds of key never collide (each is prefixed with its kind).
"""

from __future__ import annotations

from ._asgi import Scope
from ._auth import principal

__all__ = ["client_key"]


def client_key(scope: Scope) -> str:
    """The key of the per-client caps for this request (module docs); ``"address "`` when nothing is known."""
    who = principal()
    if who is not None:
        issuer, subject, client_id = who
        return f"principal {issuer or ''}\x00{subject or ''}\x00{client_id or ''}"
    client = scope.get("client")
    return f"address {client[0] if client else ''}"
