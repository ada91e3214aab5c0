"""Servers from what already exists: an OpenAPI 3.0/3.1 document or a FastAPI app (docs/openapi.md).

``from_openapi(document, base_url=..., route_maps=[...], headers={...})``
returns a `Server` whose tools (and, per the `RouteMap` rules, resources and
resource templates) are the document's operations, each call sent to the
upstream API with aiohttp (the ``http`` extra); ``from_fastapi(app)`` does
the same with ``app.openapi()``, calling the app in-process through ASGI.
``headers=`` (`HeadersSource`) are sent upstream on every call; the MCP
client's own headers never are. The rules are in `wiremcp.server._openapi`.

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._openapi import HeadersSource, Kind, RouteMap, from_fastapi, from_openapi
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(), dict.fromkeys(("HeadersSource", "Kind", "RouteMap", "from_fastapi", "from_openapi"), "_openapi")
    )

__all__ = ["from_openapi", "from_fastapi", "RouteMap", "Kind", "HeadersSource"]
