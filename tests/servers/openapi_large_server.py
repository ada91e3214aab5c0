"""A published OpenAPI document served as MCP by `from_openapi`, over stdio or HTTP (tests/server/test_openapi_large.py).

``OPENAPI_DOCUMENT``: the document's path; ``UPSTREAM_URL``: where the API
is (tests/servers/openapi_upstream.py answers every operation);
``UPSTREAM_HEADERS``: the headers every upstream request carries, as JSON
(the credentials, configured here, never the MCP client's);
``ROUTE_MAPS``: a JSON list of `RouteMap` keyword arguments.
"""

import json
import os

from wiremcp.server.openapi import RouteMap, from_openapi

server = from_openapi(
    os.environ["OPENAPI_DOCUMENT"],
    base_url=os.environ["UPSTREAM_URL"],
    headers=json.loads(os.environ.get("UPSTREAM_HEADERS", "{}")),
    route_maps=[RouteMap(**each) for each in json.loads(os.environ.get("ROUTE_MAPS", "[]"))],
)
