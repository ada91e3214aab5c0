"""The web inspector: ``wiremcp inspect --web TARGET`` and ``wiremcp dev --web TARGET`` (docs/inspector.md).

One page, shipped in ``static/`` (plain HTML, CSS and JavaScript: no build
step, nothing loaded from elsewhere), served on 127.0.0.1 with a random
token in the URL. It lists the server's tools, resources and prompts, calls
them through forms made from their schemas, asks the person the server's
elicitations, and shows every envelope in both directions, live, with its
timing and the problems ``wiremcp tap``'s checker finds in it.

It is also an MCP Apps host (docs/inspector.md, "MCP Apps: the inspector
is a host"): a tool result with a ``ui://`` view is rendered in a sandbox
proxy on a second loopback origin, and the view's postMessage envelopes
join the wire as ``view-host`` records.

* `_session`: `Inspector`, the client and its records (no HTTP);
* `_app`: `InspectorApp`, the ASGI app and the checks every request passes;
* `_sandbox`: `SandboxApp`, the sandbox proxy, and `view_csp`, a view's CSP;
* `_viewcheck`: `ViewChecker`, the rules of a view's conversation with its host;
* `_serve`: uvicorn, and the two commands' entry points.
"""

from __future__ import annotations

from ._app import CSP, SECURITY_HEADERS, InspectorApp
from ._sandbox import SandboxApp, view_csp
from ._serve import WebRunner, WebServer, new_token, run_inspect
from ._session import Inspector, Record
from ._viewcheck import ViewChecker

__all__ = [
    "CSP", "SECURITY_HEADERS", "Inspector", "InspectorApp", "Record", "SandboxApp", "ViewChecker", "WebRunner", "WebServer",
    "new_token", "run_inspect", "view_csp",
]
