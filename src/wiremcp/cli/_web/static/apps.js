// wiremcp inspector: the MCP Apps host bridge (extensions/apps/apps.mdx), written from the spec.
// Rules kept here:
// - A view is rendered when a tool whose _meta.ui.resourceUri names a ui:// resource returns: the
//   resource is read through the server, and the view is loaded in the sandbox proxy (another origin,
//   sandbox="allow-scripts allow-same-origin"), which gives it an iframe of its own with the CSP the
//   inspector builds from _meta.ui.csp (shown above the view, with anything refused).
// - Messages are taken only from a sandbox frame this script made, with the sandbox's origin, and sent
//   only to it, with that origin as the target.
// - Every envelope, both ways, is posted to api/view-wire, in order, so it joins the wire view (channel
//   "view-host") and gets the checker's problems; refusals are also written in the view's own log.
// - A malformed envelope gets -32600 (id null when its id cannot be read); a request other than
//   ui/initialize and ping before ui/initialize was answered gets -32600; an unknown method -32601;
//   tools/call of a tool the server did not list, or whose visibility leaves out "app", gets -32602 and
//   never reaches the server; nothing is sent to the view before ui/notifications/initialized.
// - ui/open-link opens a link only after the person confirms it, and only http(s).
// - Every string from the view or the server is put in the page as text.
"use strict";

(() => {
  const PROTOCOL = "2026-01-26";
  const HOST_INFO = { name: "wiremcp-inspector", version: "1" };
  const HOST_MODES = ["inline", "fullscreen"];
  const MAX_HEIGHT = 600;
  const $ = (id) => document.getElementById(id);

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("data-") || key.startsWith("aria-")) node.setAttribute(key, String(value));
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      cache: "no-store", credentials: "same-origin",
    });
    let data;
    try { data = await response.json(); } catch (e) { data = { error: "HTTP " + response.status }; }
    if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
    return data;
  }

  let sandboxUrl = null;
  let sandboxOrigin = null;
  const ready = fetch("api/host", { cache: "no-store", credentials: "same-origin" })
    .then((r) => r.json())
    .then((host) => {
      sandboxUrl = host.sandbox;
      sandboxOrigin = sandboxUrl ? new URL(sandboxUrl).origin : null;
    });

  let tools = [];
  const views = [];
  const envelopes = [];

  const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
  const goodId = (id) => typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
  const uiMeta = (item) => (item && isObject(item._meta) && isObject(item._meta.ui) ? item._meta.ui : {});
  const resourceUri = (tool) => uiMeta(tool).resourceUri || (tool && tool._meta && tool._meta["ui/resourceUri"]) || null;
  const visibility = (tool) => (Array.isArray(uiMeta(tool).visibility) ? uiMeta(tool).visibility : ["model", "app"]);

  // What the view channel (protocol 2026-01-26) does not know of a 2026-07-28 result.
  const strip = (result) => {
    const { resultType, ttlMs, cacheScope, ...rest } = result;
    return rest;
  };

  function asText(message) {
    try {
      const text = JSON.stringify(message);
      return text === undefined ? String(message) : text;
    } catch (e) {
      return String(message);
    }
  }

  // Envelopes go to the wire in order, in batches: one POST in flight at a time, carrying everything that
  // waited, each with its age, so that its time on the wire is when the page saw it. The answer (the records,
  // with their problems) is kept for envelopes().
  let queue = [];
  let sending = null;

  function flush() {
    if (sending !== null || queue.length === 0) return sending;
    const batch = queue;
    queue = [];
    const now = performance.now();
    const body = batch.map((item) => ({ ...item.body, age_ms: Math.max(0, now - item.at) }));
    sending = post("api/view-wire", body).then((records) => {
      batch.forEach((item, i) => {
        const rec = records[i];
        envelopes.push({ view: item.view.id, direction: item.body.direction, message: item.message, sender: item.body.sender || null,
          problems: rec.problems, seq: rec.seq });
        for (const p of rec.problems) item.view.note(`! ${p.code}: ${p.message}`, "problem");
      });
    }).catch((e) => {
      for (const item of batch) item.view.note("the wire did not take an envelope: " + e.message, "problem");
    }).then(() => {
      sending = null;
      return flush();
    });
    return sending;
  }

  function record(view, direction, message, sender) {
    const body = { view: view.id, direction, text: asText(message) };
    if (sender) body.sender = sender;
    queue.push({ view, body, message, at: performance.now() });
    flush();
  }

  class View {
    constructor(tool, args, result) {
      this.id = views.length + 1;
      this.tool = tool;
      this.args = args;
      this.result = strip(result);
      this.state = "loading"; // -> proxy-ready -> loaded -> initializing -> initialized
      this.initializeAnswered = false;
      this.appCapabilities = {};
      this.displayMode = "inline";
      this.asked = new Map(); // host request id -> resolve
      this.nextId = 1;
      this.log = el("ol", { class: "view-log" });
      this.csp = el("pre", { class: "view-csp" });
      this.frame = el("iframe", { title: "MCP App view of " + tool.name, class: "view-frame" });
      this.frame.sandbox = "allow-scripts allow-same-origin";
      this.box = el("section", { class: "view", "data-view": this.id, "data-tool": tool.name, "data-mode": "inline" },
        el("h3", { text: `View ${this.id}: ${resourceUri(tool)} (tool ${tool.name})` }), this.csp, this.frame, this.log);
      views.push(this);
    }

    note(text, kind) {
      this.log.append(el("li", { class: kind || "", text }));
    }

    send(message) {
      record(this, "h2v", message);
      this.frame.contentWindow.postMessage(message, sandboxOrigin);
    }

    reply(id, result) { this.send({ jsonrpc: "2.0", id, result }); }

    fail(id, code, message) {
      this.note(`refused: ${message}`, "refused");
      this.send({ jsonrpc: "2.0", id, error: { code, message } });
    }

    async load() {
      const uri = resourceUri(this.tool);
      const answer = await post("api/call", { kind: "resource", uri });
      if (!answer.ok) throw new Error(`resources/read ${uri}: ${answer.error.message}`);
      const content = (answer.result.contents || [])[0];
      if (!content || content.mimeType !== "text/html;profile=mcp-app") {
        throw new Error(`${uri} is not text/html;profile=mcp-app`);
      }
      if (typeof content.text === "string") this.html = content.text;
      else if (typeof content.blob === "string") this.html = new TextDecoder().decode(Uint8Array.from(atob(content.blob), (c) => c.charCodeAt(0)));
      else throw new Error(`${uri} has neither text nor blob`);
      const meta = uiMeta(content);
      this.resourceCsp = meta.csp;
      this.permissions = isObject(meta.permissions) ? meta.permissions : undefined;
      const built = await post("api/view-csp", { csp: meta.csp === undefined ? null : meta.csp });
      this.applied = built.applied;
      this.csp.textContent = "Content-Security-Policy: " + built.policy;
      for (const why of built.dropped) this.note("CSP: " + why, "problem");
      // ?view=N tells the frames apart (the sandbox ignores it); after the "#", the origin it must talk to.
      this.frame.src = `${sandboxUrl}?view=${this.id}#${encodeURIComponent(location.origin)}`;
    }

    hostContext() {
      const width = Math.round(this.frame.getBoundingClientRect().width) || 600;
      return {
        toolInfo: { tool: this.tool },
        theme: window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
        displayMode: this.displayMode,
        availableDisplayModes: HOST_MODES,
        containerDimensions: { width, maxHeight: MAX_HEIGHT },
        locale: navigator.language || "en-US",
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        userAgent: "wiremcp-inspector",
        platform: "web",
        deviceCapabilities: { touch: false, hover: true },
      };
    }

    receive(message) {
      // the sandbox's own message, before the view exists
      if (this.state === "loading" && isObject(message) && message.method === "ui/notifications/sandbox-proxy-ready") {
        record(this, "v2h", message, "sandbox");
        this.state = "loaded";
        const params = { html: this.html };
        if (this.resourceCsp !== undefined) params.csp = this.applied;
        if (this.permissions !== undefined) params.permissions = this.permissions;
        const ready = { jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params };
        record(this, "h2v", ready, "sandbox");
        this.frame.contentWindow.postMessage(ready, sandboxOrigin);
        return;
      }
      record(this, "v2h", message);
      if (this.state === "loading") {
        this.note("a message before the sandbox was ready: ignored", "problem");
        return;
      }
      if (!isObject(message) || message.jsonrpc !== "2.0") {
        const id = isObject(message) && goodId(message.id) ? message.id : null;
        return this.fail(id, -32600, 'Invalid Request: not a JSON-RPC 2.0 envelope ("jsonrpc": "2.0")');
      }
      const { id, method } = message;
      if (method === undefined) return this.response(message);
      if (typeof method !== "string") return this.fail(goodId(id) ? id : null, -32600, "Invalid Request: method must be a string");
      if (method.startsWith("ui/notifications/sandbox-")) {
        this.note(`${method} from the view: reserved to the sandbox proxy, ignored`, "refused");
        return;
      }
      if (!("id" in message)) return this.notification(method, message.params);
      if (!goodId(id)) return this.fail(null, -32600, "Invalid Request: id must be a string or an integer");
      if ("params" in message && !isObject(message.params)) return this.fail(id, -32602, "Invalid params: params must be an object");
      if (!this.initializeAnswered && method !== "ui/initialize" && method !== "ping") {
        return this.fail(id, -32600, `Invalid Request: ${method} before ui/initialize`);
      }
      this.request(id, method, message.params || {}).catch((e) => this.fail(id, -32603, "Internal error: " + e.message));
    }

    response(message) {
      const resolve = this.asked.get(message.id);
      if (resolve === undefined) {
        this.note(`a response to ${JSON.stringify(message.id)}, which the host never asked`, "problem");
        return;
      }
      this.asked.delete(message.id);
      resolve(message);
    }

    ask(method, params) {
      const id = this.nextId++;
      return new Promise((resolve) => {
        this.asked.set(id, resolve);
        this.send({ jsonrpc: "2.0", id, method, params });
      });
    }

    notification(method, params) {
      params = isObject(params) ? params : {};
      if (method === "ui/notifications/initialized") {
        if (!this.initializeAnswered) return this.note("initialized before ui/initialize was answered: ignored", "refused");
        if (this.state === "initialized") return this.note("initialized twice: ignored", "problem");
        this.state = "initialized";
        this.box.dataset.state = "initialized";
        this.send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: this.args } });
        this.send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: this.result });
      } else if (method === "ui/notifications/size-changed") {
        // The width is fixed (containerDimensions.width): only the height follows the view, up to maxHeight.
        const { height } = params;
        if (typeof height === "number" && height >= 0) this.frame.style.height = Math.min(Math.ceil(height), MAX_HEIGHT) + "px";
        this.box.dataset.height = this.frame.style.height;
      } else if (method === "notifications/message") {
        this.note(`log ${params.level || ""}: ${typeof params.data === "string" ? params.data : JSON.stringify(params.data)}`, "log");
      } else if (method === "ui/notifications/request-teardown") {
        this.teardown("the view asked to be closed");
      } else {
        this.note(`notification ${method}: not one the host handles`, "problem");
      }
    }

    async request(id, method, params) {
      if (method === "ui/initialize") {
        if (this.initializeAnswered) return this.fail(id, -32600, "Invalid Request: ui/initialize was already answered");
        this.appCapabilities = isObject(params.appCapabilities) ? params.appCapabilities : {};
        this.initializeAnswered = true;
        this.state = "initializing";
        const sandbox = { csp: this.applied || {} };
        if (this.permissions) sandbox.permissions = this.permissions;
        return this.reply(id, {
          protocolVersion: PROTOCOL,
          hostInfo: HOST_INFO,
          hostCapabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, sandbox },
          hostContext: this.hostContext(),
        });
      }
      if (method === "ping") return this.reply(id, {});
      if (method === "tools/call") {
        const name = params.name;
        if (typeof name !== "string") return this.fail(id, -32602, "Invalid params: name must be a string");
        if (params.arguments !== undefined && !isObject(params.arguments)) return this.fail(id, -32602, "Invalid params: arguments must be an object");
        const tool = tools.find((t) => t.name === name);
        if (tool === undefined) return this.fail(id, -32602, `Unknown tool: ${name} (not a tool of this server)`);
        if (!visibility(tool).includes("app")) return this.fail(id, -32602, `Unknown tool: ${name} (its visibility leaves out "app")`);
        this.note(`tools/call ${name}: forwarded to the server`, "forwarded");
        return this.forward(id, { kind: "tool", name, arguments: params.arguments || {} });
      }
      if (method === "resources/read") {
        if (typeof params.uri !== "string") return this.fail(id, -32602, "Invalid params: uri must be a string");
        this.note(`resources/read ${params.uri}: forwarded to the server`, "forwarded");
        return this.forward(id, { kind: "resource", uri: params.uri });
      }
      if (method === "ui/request-display-mode") {
        const mode = params.mode;
        if (!["inline", "fullscreen", "pip"].includes(mode)) return this.fail(id, -32602, "Invalid params: mode is inline, fullscreen or pip");
        const declared = this.appCapabilities.availableDisplayModes;
        if (HOST_MODES.includes(mode) && (!Array.isArray(declared) || declared.includes(mode)) && mode !== this.displayMode) {
          this.displayMode = mode;
          this.box.dataset.mode = mode;
          this.box.classList.toggle("fullscreen", mode === "fullscreen");
          this.reply(id, { mode });
          return this.send({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: mode } });
        }
        if (mode !== this.displayMode) this.note(`display mode ${mode} not available; staying ${this.displayMode}`, "refused");
        return this.reply(id, { mode: this.displayMode });
      }
      if (method === "ui/open-link") return this.openLink(id, params.url);
      if (method === "ui/message" || method === "ui/update-model-context") {
        this.note(`${method}: ${JSON.stringify(params)}`, "log");
        return this.reply(id, {});
      }
      return this.fail(id, -32601, `Method not found: ${method}`);
    }

    async forward(id, call) {
      const answer = await post("api/call", call);
      if (answer.ok) {
        return this.reply(id, strip(answer.result));
      }
      const error = { code: typeof answer.error.code === "number" ? answer.error.code : -32603, message: String(answer.error.message) };
      if ("data" in answer.error) error.data = answer.error.data;
      this.note(`${call.kind === "tool" ? "tools/call " + call.name : "resources/read " + call.uri}: error ${error.code}`, "problem");
      this.send({ jsonrpc: "2.0", id, error });
    }

    openLink(id, url) {
      let parsed = null;
      try { parsed = new URL(url); } catch (e) { parsed = null; }
      if (typeof url !== "string" || parsed === null || !["http:", "https:"].includes(parsed.protocol)) {
        return this.fail(id, -32000, "Invalid URL");
      }
      const card = el("div", { class: "confirm", "data-confirm": "open-link" },
        el("p", { text: "The view asks to open this link:" }), el("pre", { class: "url", text: parsed.href }));
      const answer = (open) => {
        card.remove();
        if (open) {
          window.open(parsed.href, "_blank", "noopener,noreferrer");
          this.note("opened " + parsed.href, "log");
          this.reply(id, {});
        } else {
          this.fail(id, -32000, "Link opening denied by user");
        }
      };
      const yes = el("button", { type: "button", text: "Open", "data-action": "open" });
      const no = el("button", { type: "button", text: "Refuse", "data-action": "refuse" });
      yes.addEventListener("click", () => answer(true));
      no.addEventListener("click", () => answer(false));
      card.append(yes, no);
      this.box.insertBefore(card, this.frame);
    }

    async teardown(reason) {
      // The host SHOULD wait for the view's answer (apps.mdx); a view that never answers is closed after 5 s.
      if (this.state === "initialized") {
        await Promise.race([this.ask("ui/resource-teardown", { reason }), new Promise((done) => setTimeout(done, 5000))]);
      }
      this.state = "closed";
      this.frame.remove();
      this.box.dataset.state = "closed";
      this.note("closed: " + reason, "log");
    }
  }

  window.addEventListener("message", (event) => {
    const view = views.find((v) => v.frame.contentWindow !== null && v.frame.contentWindow === event.source);
    if (view === undefined || event.origin !== sandboxOrigin || view.state === "closed") return;
    view.receive(event.data);
  });

  async function render(tool, args, result) {
    await ready;
    if (!resourceUri(tool) || !sandboxUrl || !isObject(result)) return null;
    const view = new View(tool, args, result);
    const close = el("button", { type: "button", text: "Close view", "data-action": "close" });
    close.addEventListener("click", () => view.teardown("closed in the inspector"));
    view.box.querySelector("h3").append(" ", close);
    $("views").prepend(view.box);
    try {
      await view.load();
    } catch (e) {
      view.note("not rendered: " + e.message, "problem");
      view.box.dataset.state = "failed";
    }
    return view.id;
  }

  window.wiremcpApps = {
    render,
    setTools(list) { tools = Array.isArray(list) ? list : []; },
    // What tests and wiremcp.testing.apps read: every envelope with its problems, in wire order.
    envelopes: () => envelopes.map((e) => ({ ...e })),
    flushed: async () => {
      while (sending !== null || queue.length) await (flush() || Promise.resolve());
      return envelopes.length;
    },
  };
})();
