// wiremcp sandbox proxy (apps.mdx, "Sandbox proxy"). Served from its own loopback origin; the
// inspector page frames it with sandbox="allow-scripts allow-same-origin" and names its own origin
// after the "#". Rules: messages are taken from the page only with that origin, and from the view
// only from the frame this script made; every message not starting "ui/notifications/sandbox-" is
// forwarded unchanged either way; the view's messages are all forwarded (the page judges them);
// this script never makes a request of its own. The view gets an iframe with sandbox="allow-scripts"
// (an opaque origin) loaded from this origin's server, which sends the CSP built from _meta.ui.csp.
"use strict";

(() => {
  const hostOrigin = decodeURIComponent(location.hash.slice(1));
  let inner = null;
  const reserved = (m) => m !== null && typeof m === "object" && typeof m.method === "string"
    && m.method.startsWith("ui/notifications/sandbox-");
  const toHost = (message) => window.parent.postMessage(message, hostOrigin);

  async function load(params) {
    const response = await fetch("views", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ html: String(params.html ?? ""), csp: params.csp ?? null, permissions: params.permissions ?? null }),
      cache: "no-store",
    });
    if (!response.ok) throw new Error("the sandbox refused the view: HTTP " + response.status);
    const view = await response.json();
    inner = document.createElement("iframe");
    inner.sandbox = "allow-scripts";
    if (view.allow) inner.allow = view.allow;
    inner.title = "MCP App view";
    inner.style.cssText = "border:0;width:100%;height:100%;display:block";
    inner.src = view.url;
    document.body.style.margin = "0";
    document.documentElement.style.height = document.body.style.height = "100%";
    document.body.append(inner);
  }

  window.addEventListener("message", (event) => {
    if (event.source === window.parent) {
      if (event.origin !== hostOrigin) return;
      if (reserved(event.data)) {
        if (event.data.method === "ui/notifications/sandbox-resource-ready" && inner === null) {
          load(event.data.params || {}).catch((error) => { document.body.textContent = String(error.message); });
        }
        return;
      }
      if (inner !== null) inner.contentWindow.postMessage(event.data, "*");
    } else if (inner !== null && event.source === inner.contentWindow) {
      toHost(event.data);
    }
  });
  toHost({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} });
})();
