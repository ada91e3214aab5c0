"""The Notes API (tests/servers/openapi_notes.py) served as MCP by `from_openapi`, over stdio or HTTP.

The upstream's URL is in ``NOTES_API_URL``; its document is read from
``/openapi.json`` there, once, at start. Every upstream call carries
``Authorization: Bearer s3cret`` (configured here, never the MCP client's).
``GET /notes/{note_id}`` is a resource template, ``GET /version`` a
resource; everything else is a tool.
"""

import json
import os
import urllib.request

from wiremcp.server.openapi import RouteMap, from_openapi

BASE = os.environ["NOTES_API_URL"]
with urllib.request.urlopen(f"{BASE}/openapi.json", timeout=30) as answer:
    DOCUMENT = json.load(answer)

server = from_openapi(
    DOCUMENT,
    base_url=BASE,
    headers={"Authorization": "Bearer s3cret"},
    route_maps=[
        RouteMap(methods=["GET"], pattern=r"^/notes/\{note_id\}$", kind="template"),
        RouteMap(methods=["GET"], pattern=r"^/version$", kind="resource"),
    ],
    uri_prefix="notes://api",
)
