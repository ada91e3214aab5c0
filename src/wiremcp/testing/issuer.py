"""A local issuer in the test's own process: `local_issuer` yields its URL and mints tokens.

    from wiremcp.testing.issuer import local_issuer

    with local_issuer(resource="http://127.0.0.1:8000/mcp") as issuer:
        env = issuer.env()                       # WIREMCP_AUTH_ISSUER, WIREMCP_AUTH_RESOURCE
        token = issuer.token("mcp admin", subject="alice")

Rules it keeps:

* the issuer is the real one ``wiremcp auth dev`` runs (`wiremcp.auth.dev`):
  an HTTP server on 127.0.0.1, on a free port, in a thread, serving RFC 8414
  metadata, a key set and a token endpoint; a resource server verifies its
  tokens through its normal discovery, nothing is short-circuited;
* each `local_issuer` has a fresh key and secret and keeps nothing on disk;
* the server stops when the ``with`` block ends. With the pytest plugin
  (`wiremcp.testing.plugin`) the ``local_issuer`` fixture gives one per test.

Needs the ``auth`` extra (PyJWT, cryptography) and ``http`` (uvicorn).
"""

from __future__ import annotations

import contextlib
from typing import Iterable, Iterator

from ..auth.dev import DEFAULT_CLIENT, DEFAULT_LIFETIME, DEFAULT_SUBJECT, DevIssuer, bind, serve_in_thread, url_of

__all__ = ["LocalIssuer", "local_issuer"]


class LocalIssuer:
    """A running local issuer: ``url`` (the issuer), ``resource`` (the default audience), `token`, `env`."""

    def __init__(self, issuer: DevIssuer) -> None:
        self.issuer = issuer
        self.url = issuer.issuer
        self.resource = issuer.resource
        #: The token endpoint's client secret (any client id), for tests that ask over HTTP.
        self.secret = issuer.secret

    def token(
        self,
        scope: str | Iterable[str] = "mcp",
        *,
        subject: str = DEFAULT_SUBJECT,
        client_id: str = DEFAULT_CLIENT,
        resource: str | None = None,
        lifetime: int = DEFAULT_LIFETIME,
    ) -> str:
        """A signed access token (``scope``: ``"mcp admin"`` or a list) for ``resource`` (else the default)."""
        scopes = [scope] if isinstance(scope, str) else list(scope)
        return self.issuer.mint(scopes=scopes, subject=subject, client_id=client_id, resource=resource, lifetime=lifetime)

    def env(self, resource: str | None = None) -> dict[str, str]:
        """The settings that point a server (examples/protected.py) at this issuer."""
        audience = resource or self.resource
        if not audience:
            raise ValueError("pass resource= (the MCP server's URL) here or to local_issuer()")
        return {"WIREMCP_AUTH_ISSUER": self.url, "WIREMCP_AUTH_RESOURCE": audience}


@contextlib.contextmanager
def local_issuer(resource: str | None = None, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[LocalIssuer]:
    """Run a local issuer on loopback for the block; ``resource`` is the default audience of its tokens."""
    sock = bind(host, port)
    issuer = DevIssuer(url_of(sock, host), resource=resource)
    with serve_in_thread(issuer, sock):
        yield LocalIssuer(issuer)
