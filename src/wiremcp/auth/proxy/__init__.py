"""An OAuth proxy: an authorization server facade for MCP clients in front of one upstream provider.

`OAuthProxy` (``_proxy``) is the authorization server MCP clients see; it
signs people in at the `Upstream` provider (``_config``) with its one
pre-registered client and issues its own tokens. docs/auth-proxy.md shows it
in use; each module states the rules it keeps:

* ``_flow``: authorize, per-client consent, the upstream callback;
* ``_tokens``: the token and revocation endpoints, the verifier of its tokens;
* ``_registration``: dynamic client registration (RFC 7591);
* ``_pages``: the consent and consents pages;
* ``_store``: the records, sealed with the server's key on its store;
* ``_http``: the ASGI plumbing.

Loaded only by a server that uses it (``import wiremcp.auth.proxy``).
"""

from __future__ import annotations

from ._config import Upstream
from ._proxy import OAuthProxy

__all__ = ["OAuthProxy", "Upstream"]
