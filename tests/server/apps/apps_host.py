"""A minimal MCP Apps host in a real browser page, for tests/server/apps/test_views.py.

A Starlette application serves ``examples/apps.py`` at ``/mcp`` (MCPApp, the
2026-07-28 era, declaring ``io.modelcontextprotocol/ui``) and, at ``/``, a host
page that does what apps.mdx asks of a host, written from the spec and not
from wiremcp's code:

* ``tools/list``, then ``resources/read`` of the tool's ``_meta.ui.resourceUri``;
* the model's ``tools/call`` of the tool, then the view in an iframe
  (``sandbox="allow-scripts"``: an opaque origin, apart from the host's);
* the view's ``ui/initialize`` answered with an ``McpUiInitializeResult``; after
  ``ui/notifications/initialized``, ``ui/notifications/tool-input`` and
  ``ui/notifications/tool-result``;
* the view's ``tools/call`` forwarded to the server only for tools whose
  visibility includes ``"app"`` (the host's duty in "Visibility"); any other
  request from the view is -32601.

Every message is written into the page as ``<p class="log">`` lines, which
the test reads with ``chromium --headless --dump-dom``.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route

from wiremcp.examples.apps import server
from wiremcp.transports.http import MCPApp

mcp = MCPApp(server, path="/mcp")

HOST_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>test host</title></head>
<body><div id="log"></div>
<script type="module">
const log = (line) => {
  const p = document.createElement("p");
  p.className = "log";
  p.textContent = line;
  document.getElementById("log").append(p);
};
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {
    extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
  },
  "io.modelcontextprotocol/clientInfo": { name: "test-host", version: "0" },
};
let lastId = 0;
async function mcp(method, params) {
  const response = await fetch("/mcp", {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method,
               ...(params.name !== undefined ? { "Mcp-Name": params.name } : {}),
               ...(params.uri !== undefined ? { "Mcp-Name": params.uri } : {}) },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++lastId, method, params: { ...params, _meta: META } }),
  });
  const reply = await response.json();
  if (reply.error) throw reply.error;
  return reply.result;
}
const strip = (result) => { const { _meta, resultType, ...rest } = result; return rest; };
try {
  const query = new URLSearchParams(location.search);
  const name = query.get("tool");
  const args = JSON.parse(query.get("args") || "{}");
  const tools = (await mcp("tools/list", {})).tools;
  const byName = new Map(tools.map((t) => [t.name, t]));
  const uri = byName.get(name)._meta.ui.resourceUri;
  const content = (await mcp("resources/read", { uri })).contents[0];
  log(`resource ${content.uri} ${content.mimeType} ${content.text.length}`);
  const first = strip(await mcp("tools/call", { name, arguments: args }));
  log(`model called ${name}: ${JSON.stringify(first.content)}`);
  const frame = document.createElement("iframe");
  frame.sandbox = "allow-scripts";
  const send = (message) => frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, "*");
  window.addEventListener("message", async (event) => {
    if (event.source !== frame.contentWindow) return;
    const m = event.data;
    if (m.method === "ui/initialize") {
      log(`view initialize ${JSON.stringify(m.params.appInfo)} ${m.params.protocolVersion}`);
      send({ id: m.id, result: {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "test-host", version: "0" },
        hostCapabilities: { serverTools: {} },
        hostContext: { theme: "light", displayMode: "inline" },
      } });
    } else if (m.method === "ui/notifications/initialized") {
      log("view initialized");
      send({ method: "ui/notifications/tool-input", params: { arguments: args } });
      send({ method: "ui/notifications/tool-result", params: first });
    } else if (m.method === "tools/call") {
      const tool = byName.get(m.params.name);
      const visibility = tool?._meta?.ui?.visibility ?? ["model", "app"];
      if (!tool || !visibility.includes("app")) {
        log(`refused view call ${m.params.name}`);
        send({ id: m.id, error: { code: -32602, message: `Unknown tool: ${m.params.name}` } });
        return;
      }
      try {
        const result = strip(await mcp("tools/call", { name: m.params.name, arguments: m.params.arguments ?? {} }));
        log(`view called ${m.params.name}: ${JSON.stringify(result.content)}`);
        send({ id: m.id, result });
      } catch (error) {
        log(`view call ${m.params.name} failed: ${JSON.stringify(error)}`);
        send({ id: m.id, error });
      }
    } else if (m.id !== undefined && m.method !== undefined) {
      send({ id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
    } else if (m.method !== undefined) {
      log(`view notification ${m.method}`);
    }
  });
  frame.srcdoc = content.text;
  document.body.append(frame);
} catch (error) {
  log(`host failed: ${error} ${JSON.stringify(error)}`);
}
</script></body></html>
"""


async def host(request: Any) -> HTMLResponse:
    return HTMLResponse(HOST_PAGE)


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    async with mcp.lifespan(app):
        yield


app = Starlette(routes=[Route("/", host), Mount("/", app=mcp)], lifespan=lifespan)
