"""The deprecated HTTP+SSE transport of 2024-11-05, client side only: `SSETransport` in `.client`.

wiremcp serves Streamable HTTP (and 2025-11-25 sessions on it), never
HTTP+SSE; this package lets a client reach servers that still speak it. A
Streamable HTTP client falls back to it on its own (the spec's
"Backwards Compatibility" section; see `wiremcp.transports.http.client`).
"""

from __future__ import annotations

__all__: list[str] = []
