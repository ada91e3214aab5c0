"""A server whose view tries everything a view may not do, for the inspector's MCP Apps host tests.

``probe`` shows ``ui://test/probe.html``, a view in raw JSON-RPC over
postMessage that, in order: sends a string, an envelope with
``"jsonrpc": "1.0"``, a ``tools/call`` before ``ui/initialize`` and a message
reserved to the sandbox; initializes (declaring inline and fullscreen); then
calls the model-only tool ``secret``, a tool no server listed
(``other_server_tool``), the app tool ``app_echo``, an unknown ``ui/bogus``,
asks for fullscreen then pip, reports a size, fetches an origin its CSP does
not declare (``http://127.0.0.1:9``, not in ``connectDomains``) and one it
does (``DECLARED``), logs every CSP violation with the policy the browser
enforced, and asks to open a link. Each answer is written in the view as a
``<p class="got">`` line, and logged to the host.
"""

from __future__ import annotations

import wiremcp
from wiremcp.server import ToolResult

server = wiremcp.Server("apps-probe", version="1.0.0")

#: Declared in the view's CSP (nothing listens there: the browser lets the request go, and it fails).
DECLARED = "http://127.0.0.1:7"

PROBE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>probe</title></head>
<body><p id="state">starting</p><div id="out"></div>
<script type="module">
let nextId = 1;
const waiting = new Map();
const out = (text) => { const p = document.createElement("p"); p.className = "got"; p.textContent = text; document.getElementById("out").append(p); };
const post = (message) => window.parent.postMessage(message, "*");
const send = (message) => post({ jsonrpc: "2.0", ...message });
const request = (method, params, id = nextId++) => new Promise((resolve) => { waiting.set(id, resolve); send({ id, method, params }); });
const log = (data) => send({ method: "notifications/message", params: { level: "warning", logger: "probe", data } });
document.addEventListener("securitypolicyviolation", (e) => {
  log({ blocked: e.blockedURI, directive: e.effectiveDirective, policy: e.originalPolicy });
});
window.addEventListener("message", (event) => {
  const m = event.data;
  if (m && m.id !== undefined && m.method === undefined) {
    out(JSON.stringify(m));
    const resolve = waiting.get(m.id);
    if (resolve) { waiting.delete(m.id); resolve(m); }
  } else if (m && m.method) {
    out("notification " + m.method + " " + JSON.stringify(m.params));
  }
});
post("hello");
post({ jsonrpc: "1.0", id: 100, method: "ping" });
await request("tools/call", { name: "app_echo", arguments: { text: "too early" } }, 101);
send({ method: "ui/notifications/sandbox-proxy-ready", params: {} });
const init = await request("ui/initialize", {
  appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
  appInfo: { name: "probe", version: "1.0.0" }, protocolVersion: "2026-01-26",
});
send({ method: "ui/notifications/initialized", params: {} });
await request("tools/call", { name: "secret", arguments: {} });
await request("tools/call", { name: "other_server_tool", arguments: {} });
await request("tools/call", { name: "app_echo", arguments: { text: "from the view" } });
await request("ui/bogus", {});
await request("ui/request-display-mode", { mode: "fullscreen" });
await request("ui/request-display-mode", { mode: "pip" });
send({ method: "ui/notifications/size-changed", params: { width: 300, height: 222 } });
for (const url of ["http://127.0.0.1:9/undeclared", "%(declared)s/declared"]) {
  try { await fetch(url); out("fetched " + url); } catch (e) { out("fetch failed " + url); }
}
document.getElementById("state").textContent = "asking for a link";
await request("ui/open-link", { url: "https://example.com/docs" });
document.getElementById("state").textContent = "done";
log("done");
</script></body></html>
""" % {"declared": DECLARED}

server.ui_resource("ui://test/probe.html", html=PROBE, name="probe", csp={"connectDomains": [DECLARED]})


@server.tool(ui="ui://test/probe.html", inline=True)
def probe(level: int = 1) -> ToolResult:
    """Show the probe view."""
    return ToolResult([f"probe level {level}"], structured_content={"level": level})


@server.tool(visibility="model", inline=True)
def secret() -> str:
    """For the model only: a view must never reach it."""
    return "the secret"


@server.tool(visibility="app", inline=True)
def app_echo(text: str) -> str:
    """For views only."""
    return f"echo: {text}"


if __name__ == "__main__":
    wiremcp.run(server)
