"""Whom a request comes from, for the ready-made middleware (rate limiting, private caching).

Rules kept here:

* an authenticated request (``call.auth``, the token the resource server
  verified) is its principal: (issuer, subject, client id), whatever address
  or session it comes from;
* otherwise, over HTTP, the client's address as the transport reports it
  (`wiremcp.protocol.telemetry.client_peer`; behind a trusted proxy, the
  address the proxy names: ``wiremcp run --trusted-proxy``); then a
  2025-11-25 session; a stdio server serves one client per process
  (``"local"``);
* `caller_key` always names someone (rate limiting needs a bucket); an HTTP
  request whose address the transport did not name (the ASGI server gave
  none, as on a Unix socket) is one shared anonymous caller, and that is
  logged once;
  `private_key` names only a caller that no other caller can share a key
  with (a principal, a legacy session, the stdio client), and is None for an
  anonymous HTTP request: a ``private`` result is never cached for it;
* the kinds never collide (each key is prefixed with its kind), and a key is
  never a secret (no token, no header value).
"""

from __future__ import annotations

import logging
from typing import Any

from ...protocol.telemetry import client_peer
from .._middleware import Invocation

__all__ = ["caller_key", "private_key"]

log = logging.getLogger("wiremcp.middleware")


def _principal(token: Any) -> str:
    issuer = getattr(token, "issuer", None) or ""
    subject = getattr(token, "subject", None) or ""
    client = getattr(token, "client_id", None) or ""
    return f"principal {issuer}\x00{subject}\x00{client}"


def _session(call: Invocation) -> str | None:
    if not call.legacy:
        return None
    session = call.meta.session
    if session is None:
        return None
    return f"session {getattr(session, 'id', None) or id(session)}"


def caller_key(call: Invocation) -> str:
    """The caller of ``call``: its principal, else its address (HTTP), else its session, else ``"local"``."""
    token = call.auth
    if token is not None:
        return _principal(token)
    peer = client_peer().get()
    if peer:
        return f"address {peer[0]}"
    session = _session(call)
    if session is not None:
        return session
    if call.headers is not None:  # HTTP, yet the transport named no address
        _warn_no_address()
        return "address "
    return "local"


_warned: list[bool] = []


def _warn_no_address() -> None:
    if not _warned:
        _warned.append(True)
        log.warning(
            "an HTTP request reached the middleware without its client's address: every anonymous caller "
            "shares one rate-limit bucket. The ASGI server gave no client address (as on a Unix socket); "
            "pass RateLimit(key=...) to tell callers apart"
        )


def private_key(call: Invocation) -> str | None:
    """A key only this caller has (principal, legacy session, the stdio client), or None (anonymous HTTP)."""
    token = call.auth
    if token is not None:
        return _principal(token)
    session = _session(call)
    if session is not None:
        return session
    if call.headers is None and client_peer().get() is None:
        return "local"  # stdio: this process serves one client
    return None
