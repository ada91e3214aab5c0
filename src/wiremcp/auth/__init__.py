"""OAuth 2.1 authorization for MCP over HTTP (basic/authorization/, 2026-07-28).

`wiremcp.auth.server` is the resource server side: it verifies the access
tokens clients present and serves the protected resource metadata. Nothing
here is imported by the core or by a stdio server; it needs the ``[auth]``
extra (``pyjwt[crypto]``, plus httpx from ``[http]``).
"""
