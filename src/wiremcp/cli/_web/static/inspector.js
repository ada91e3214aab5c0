// wiremcp inspector page. Plain JavaScript, no build step, nothing loaded from elsewhere.
// Rule: every string that came from the server is put in the page as text (textContent,
// text nodes, option labels, input values), never parsed as HTML. The page only talks to
// its own origin, by relative URLs under the token path it was served at.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);

  // el("li", {class: "x", text: "..."}, child, "text child") -- text only, never markup.
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

  const pretty = (value) => JSON.stringify(value, null, 2);

  function prettyText(text) {
    try { return pretty(JSON.parse(text)); } catch (e) { return text; }
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      cache: "no-store",
      credentials: "same-origin",
    });
    let data;
    try { data = await response.json(); } catch (e) { data = { error: "HTTP " + response.status }; }
    if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
    return data;
  }

  // -- the server and its lists ---------------------------------------------------------

  let current = null; // the selected item's button

  function firstLine(text) {
    return typeof text === "string" ? text.trim().split("\n")[0] : "";
  }

  function renderState(state) {
    lastState = state;
    const info = state.serverInfo || {};
    $("server-name").textContent = state.connected
      ? [info.name || "?", info.version || ""].join(" ").trim()
      : "wiremcp inspector";
    $("server-meta").textContent = state.connected
      ? `${state.era} era, protocol ${state.protocolVersion}; ${(state.capabilities || []).join(", ") || "no capabilities"}`
      : String(state.target || "");
    const error = $("server-error");
    error.hidden = !state.error;
    error.textContent = state.error ? "Not connected: " + state.error : "";
    if (state.instructions) $("server-meta").title = String(state.instructions);
    if (window.wiremcpApps) window.wiremcpApps.setTools(state.tools || []);
    list("tools", state.tools || [], (t) => t.name, (t) => firstLine(t.description), openTool);
    list("resources", state.resources || [], (r) => r.name || r.uri, (r) => r.uri, readResource);
    list("templates", state.resourceTemplates || [], (r) => r.name || r.uriTemplate, (r) => r.uriTemplate, openTemplate);
    list("prompts", state.prompts || [], (p) => p.name, (p) => firstLine(p.description), openPrompt);
  }

  function list(id, items, title, sub, open) {
    const ul = $(id);
    ul.replaceChildren();
    $(id + "-count").textContent = `(${items.length})`;
    for (const item of items) {
      const button = el("button", { type: "button", "data-name": String(title(item)) },
        String(title(item)), el("span", { class: "sub", text: String(sub(item) || "") }));
      button.addEventListener("click", () => {
        if (current) current.classList.remove("selected");
        current = button;
        button.classList.add("selected");
        open(item);
      });
      ul.append(el("li", {}, button));
    }
  }

  // -- forms from JSON Schema -------------------------------------------------------------

  function kindOf(schema) {
    let type = schema && schema.type;
    if (Array.isArray(type)) type = type.find((t) => t !== "null") || "null";
    return type;
  }

  // One field for property `name`; returns () => [include, value] (throws on bad input).
  function field(container, name, schema, required) {
    schema = schema && typeof schema === "object" ? schema : {};
    const id = "f-" + Math.random().toString(36).slice(2);
    const label = el("label", { htmlFor: id, class: required ? "required" : "" }, schema.title || name);
    const wrap = el("div", { class: "field", "data-field": name }, label);
    const hint = [kindOf(schema) || "any", schema.description || ""].filter(Boolean).join(": ");
    const type = kindOf(schema);
    let read;
    const choices = Array.isArray(schema.enum) ? schema.enum.map((v) => [v, String(v)])
      : Array.isArray(schema.oneOf) && schema.oneOf.every((o) => o && "const" in o)
        ? schema.oneOf.map((o) => [o.const, String(o.title || o.const)]) : null;
    const itemChoices = type === "array" && schema.items && Array.isArray(schema.items.enum)
      ? schema.items.enum.map((v) => [v, String(v)])
      : type === "array" && schema.items && Array.isArray(schema.items.anyOf)
        ? schema.items.anyOf.filter((o) => o && "const" in o).map((o) => [o.const, String(o.title || o.const)]) : null;
    if (choices) {
      const select = el("select", { id, name });
      if (!required) select.append(el("option", { value: "", text: "(not set)" }));
      choices.forEach(([value, text], i) => {
        select.append(el("option", { value: String(i), text, selected: schema.default === value }));
      });
      wrap.append(select);
      read = () => select.value === "" ? [false] : [true, choices[Number(select.value)][0]];
    } else if (itemChoices) {
      const select = el("select", { id, name, multiple: true });
      const chosen = Array.isArray(schema.default) ? schema.default : [];
      itemChoices.forEach(([value, text], i) => {
        select.append(el("option", { value: String(i), text, selected: chosen.includes(value) }));
      });
      wrap.append(select);
      read = () => {
        const values = Array.from(select.selectedOptions).map((o) => itemChoices[Number(o.value)][0]);
        return values.length || required ? [true, values] : [false];
      };
    } else if (type === "boolean") {
      const select = el("select", { id, name });
      if (!required) select.append(el("option", { value: "", text: "(not set)" }));
      for (const v of ["true", "false"]) select.append(el("option", { value: v, text: v, selected: String(schema.default) === v }));
      wrap.append(select);
      read = () => select.value === "" ? [false] : [true, select.value === "true"];
    } else if (type === "integer" || type === "number") {
      const input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
      if (typeof schema.default === "number") input.value = String(schema.default);
      wrap.append(input);
      read = () => {
        if (input.value === "") return required ? [true, null] : [false];
        const n = Number(input.value);
        if (Number.isNaN(n)) throw new Error(`${name}: not a number`);
        return [true, n];
      };
    } else if (type === "string") {
      const input = el("input", { id, name, type: "text" });
      if (typeof schema.default === "string") input.value = schema.default;
      wrap.append(input);
      read = () => input.value === "" && !required ? [false] : [true, input.value];
    } else {
      const area = el("textarea", { id, name, placeholder: "JSON" });
      if (schema.default !== undefined) area.value = pretty(schema.default);
      wrap.append(area);
      read = () => {
        if (area.value.trim() === "") return [false];
        try { return [true, JSON.parse(area.value)]; } catch (e) { throw new Error(`${name}: not JSON (${e.message})`); }
      };
    }
    wrap.append(el("div", { class: "hint", text: hint }));
    container.append(wrap);
    return [name, read];
  }

  function fields(container, schema) {
    container.replaceChildren();
    const properties = (schema && schema.properties) || {};
    const required = new Set((schema && schema.required) || []);
    return Object.entries(properties).map(([name, sub]) => field(container, name, sub, required.has(name)));
  }

  function collect(readers) {
    const out = {};
    for (const [name, read] of readers) {
      const [include, value] = read();
      if (include) out[name] = value;
    }
    return out;
  }

  // -- calls -----------------------------------------------------------------------------

  let submit = null;

  function openForm(title, description, build, run) {
    $("work-hint").hidden = true;
    $("call-title").textContent = title;
    $("call-description").textContent = description || "";
    const readers = build($("call-fields"));
    submit = () => run(collect(readers));
    $("call-form").hidden = false;
  }

  function openTool(tool) {
    openForm("Tool " + tool.name, tool.description,
      (box) => fields(box, tool.inputSchema),
      (args) => call({ kind: "tool", name: tool.name, arguments: args }, "tools/call " + tool.name, tool));
  }

  function openTemplate(template) {
    openForm("Resource template " + (template.name || ""), template.description,
      (box) => [field(box, "uri", { type: "string", default: template.uriTemplate, description: "fill in the template" }, true)],
      (args) => call({ kind: "resource", uri: args.uri }, "resources/read " + args.uri));
  }

  function openPrompt(prompt) {
    const schema = { properties: {}, required: [] };
    for (const arg of prompt.arguments || []) {
      schema.properties[arg.name] = { type: "string", description: arg.description || "" };
      if (arg.required) schema.required.push(arg.name);
    }
    openForm("Prompt " + prompt.name, prompt.description,
      (box) => fields(box, schema),
      (args) => call({ kind: "prompt", name: prompt.name, arguments: args }, "prompts/get " + prompt.name));
  }

  function readResource(resource) {
    $("work-hint").hidden = true;
    $("call-form").hidden = true;
    call({ kind: "resource", uri: resource.uri }, "resources/read " + resource.uri);
  }

  // `tool`: the tool called; a tool with a ui:// view gets it rendered by the MCP Apps host (apps.js).
  async function call(request, title, tool) {
    const box = el("div", { class: "result", "data-state": "running" }, el("h3", { text: title + ": running" }));
    $("result").prepend(box);
    let answer;
    try {
      answer = await post("api/call", request);
    } catch (e) {
      answer = { ok: false, error: { message: e.message } };
    }
    showResult(box, title, answer);
    if (tool && answer.ok && window.wiremcpApps) return window.wiremcpApps.render(tool, request.arguments || {}, answer.result);
    return null;
  }

  // For tests and wiremcp.testing.apps: call a listed tool as its form would; resolves to the view's number, if any.
  let lastState = {};
  window.wiremcpInspector = {
    callTool(name, args) {
      const tool = (lastState.tools || []).find((t) => t.name === name);
      if (!tool) return Promise.reject(new Error("no tool " + name));
      return call({ kind: "tool", name, arguments: args || {} }, "tools/call " + name, tool);
    },
  };

  function content(blocks) {
    const out = [];
    for (const block of Array.isArray(blocks) ? blocks : [blocks]) {
      if (!block || typeof block !== "object") continue;
      if (block.type === "text") out.push(el("pre", { class: "text", text: String(block.text) }));
      else if (block.type === "image" || block.type === "audio") {
        out.push(el("pre", { text: `[${block.type} ${block.mimeType || ""}, ${String(block.data || "").length} base64 characters]` }));
      } else if (block.type === "resource_link") out.push(el("pre", { text: `[link ${block.uri}]` }));
      else if (block.type === "resource" && block.resource && "text" in block.resource) {
        out.push(el("pre", { text: String(block.resource.text) }));
      } else out.push(el("pre", { text: pretty(block) }));
    }
    return out;
  }

  function showResult(box, title, answer) {
    const ms = typeof answer.ms === "number" ? ` (${answer.ms.toFixed(1)} ms)` : "";
    box.replaceChildren();
    if (!answer.ok) {
      const error = answer.error || {};
      box.className = "result failed";
      box.dataset.state = "error";
      box.append(el("h3", { text: `${title}: error${error.code !== undefined ? " " + error.code : ""}${ms}` }),
        el("pre", { class: "text", text: String(error.message) }));
      if ("data" in error) box.append(el("pre", { text: pretty(error.data) }));
      return;
    }
    const result = answer.result || {};
    box.dataset.state = result.isError ? "tool-error" : "done";
    box.className = result.isError ? "result failed" : "result";
    box.append(el("h3", { text: `${title}${result.isError ? ": the tool reported an error" : ""}${ms}` }));
    if (Array.isArray(result.content)) box.append(...content(result.content));
    if (result.structuredContent !== undefined) box.append(el("pre", { text: "structuredContent: " + pretty(result.structuredContent) }));
    for (const item of result.contents || []) {
      box.append(el("pre", { class: "text", text: "text" in item ? String(item.text) : `[${item.uri} ${item.mimeType || ""}, ${String(item.blob || "").length} base64 characters]` }));
    }
    for (const message of result.messages || []) {
      box.append(el("div", { class: "hint", text: `[${message.role}]` }), ...content(message.content));
    }
    box.append(el("details", {}, el("summary", { text: "raw result" }), el("pre", { text: pretty(result) })));
  }

  // -- elicitations ------------------------------------------------------------------------

  const questions = new Map();

  function showElicitation(question) {
    if (questions.has(question.id)) return;
    const params = question.params || {};
    const card = el("form", { class: "elicitation", "data-elicitation": question.id },
      el("h3", { text: "The server asks" }), el("p", { class: "message", text: String(params.message || "") }));
    let readers = [];
    if (params.mode === "url") {
      card.append(el("p", { text: "It asks you to open: " }), el("pre", { class: "url", text: String(params.url || "") }));
    } else {
      const box = el("div");
      card.append(box);
      readers = fields(box, params.requestedSchema);
    }
    const status = el("p", { class: "error" });
    const answer = async (action) => {
      try {
        const body = { id: question.id, action };
        if (action === "accept" && params.mode !== "url") body.content = collect(readers);
        await post("api/elicit", body);
        card.remove();
        questions.delete(question.id);
      } catch (e) {
        status.textContent = e.message;
      }
    };
    const actions = el("div", { class: "actions" });
    for (const [action, text] of [["accept", "Accept"], ["decline", "Decline"], ["cancel", "Cancel"]]) {
      const button = el("button", { type: "button", text, "data-action": action });
      button.addEventListener("click", () => answer(action));
      actions.append(button);
    }
    card.addEventListener("submit", (event) => { event.preventDefault(); answer("accept"); });
    card.append(actions, status);
    questions.set(question.id, card);
    $("elicitations").append(card);
  }

  function closeElicitation(id) {
    const card = questions.get(id);
    if (card) card.remove();
    questions.delete(id);
  }

  // -- the wire ---------------------------------------------------------------------------

  let wireCount = 0;
  let problemCount = 0;
  // Requests without a reply yet: key (channel, view, session, sender's direction, id) -> {item, label, session}.
  const pending = new Map();
  let session = 1;

  const reversed = { c2s: "s2c", s2c: "c2s", v2h: "h2v", h2v: "v2h" };
  const pendingKey = (record, direction) =>
    [record.channel, record.view === undefined ? "" : record.view, record.session || 1, direction, JSON.stringify(record.id)].join("|");

  // What a request is about: the tool or prompt name, the resource's URI.
  function subject(record) {
    if (record.kind !== "request") return "";
    try {
      const params = JSON.parse(record.text).params || {};
      const what = record.method === "resources/read" ? params.uri : params.name;
      return typeof what === "string" ? " " + what : "";
    } catch (e) { return ""; }
  }

  // "#6", and after the server was started again (wiremcp dev), "#6 (session 2)": ids start again at 1.
  function idLabel(record) {
    if (record.id === null || record.id === undefined) return "";
    const label = " #" + JSON.stringify(record.id);
    return (record.session || 1) > 1 ? label + ` (session ${record.session})` : label;
  }

  function summary(record, asked) {
    const id = idLabel(record);
    const about = asked ? " to " + asked : "";
    if (record.kind === "request") return record.method + subject(record) + id;
    if (record.kind === "notification") return record.method;
    if (record.kind === "response") return "result" + id + about;
    if (record.kind === "error") {
      try { return "error" + id + " " + JSON.parse(record.text).error.code + about; } catch (e) { return "error" + id + about; }
    }
    return "not an envelope";
  }

  function markUnanswered(entry, why) {
    entry.item.classList.add("unanswered");
    entry.item.dataset.pending = "never";
    entry.mark.textContent = why;
  }

  function addRecord(record) {
    const panel = $("wire-panel");
    const atBottom = panel.scrollHeight - panel.scrollTop - panel.clientHeight < 40;
    if ((record.session || 1) > session) {  // the server was started again: what it was asked is never answered
      session = record.session;
      for (const [key, entry] of pending) {
        if (entry.session < session) { markUnanswered(entry, "never answered (the server was restarted)"); pending.delete(key); }
      }
    }
    let asked = null;
    if (record.kind === "response" || record.kind === "error") {
      const key = pendingKey(record, reversed[record.direction]);
      const entry = pending.get(key);
      if (entry) {
        pending.delete(key);
        entry.item.dataset.pending = "";
        entry.mark.textContent = "";
        asked = entry.label;
      }
    }
    const arrow = record.direction === "c2s" || record.direction === "v2h" ? "→" : "←";
    const mark = el("span", { class: "pending-mark" });
    const line = el("summary", { class: "line" },
      el("span", { class: "time", text: "+" + record.t_ms.toFixed(1) + " ms" }),
      el("span", { class: "arrow", text: `${arrow} ${record.sender} to ${record.receiver}${record.view === undefined ? "" : " (view " + record.view + ")"}` }),
      el("span", { class: "summary", text: summary(record, asked) }),
      mark,
      el("span", { class: "elapsed", text: record.elapsed_ms === null ? "" : record.elapsed_ms.toFixed(1) + " ms" }));
    const item = el("li", {
      class: record.direction + (record.kind === "error" ? " error-reply" : ""),
      "data-seq": record.seq, "data-channel": record.channel, "data-direction": record.direction,
      "data-view": record.view === undefined ? "" : record.view,
      "data-kind": record.kind, "data-method": record.method || "", "data-session": record.session || 1,
      "data-pending": "",
    }, el("details", {}, line, el("pre", { class: "envelope", text: prettyText(record.text) })));
    if (record.kind === "request") {
      item.dataset.pending = "waiting";
      mark.textContent = "no reply yet";
      pending.set(pendingKey(record, record.direction),
        { item, mark, session: record.session || 1, label: record.method + subject(record) });
    }
    for (const problem of record.problems) {
      item.append(el("div", { class: "problem", text: `! ${problem.code}: ${problem.message}` }));
    }
    problemCount += record.problems.length;
    wireCount += 1;
    $("wire-count").textContent = `(${wireCount})`;
    $("problem-count").textContent = problemCount ? `${problemCount} problem${problemCount === 1 ? "" : "s"}` : "";
    $("wire").append(item);
    if (atBottom) panel.scrollTop = panel.scrollHeight;
  }

  function addNote(note) {
    $("wire").append(el("li", { class: "note", text: `+${note.t_ms.toFixed(1)} ms ${note.text}` }));
  }

  // -- the event stream ---------------------------------------------------------------------

  function connect() {
    const status = $("status");
    const events = new EventSource("events");
    const on = (name, handle) => events.addEventListener(name, (event) => handle(JSON.parse(event.data)));
    events.addEventListener("open", () => { status.textContent = "live"; status.className = "status live"; });
    events.addEventListener("error", () => { status.textContent = "disconnected"; status.className = "status down"; });
    on("reset", () => {
      $("wire").replaceChildren();
      wireCount = 0;
      problemCount = 0;
      pending.clear();
      session = 1;
      for (const id of Array.from(questions.keys())) closeElicitation(id);
    });
    on("state", renderState);
    on("wire", addRecord);
    on("note", addNote);
    on("elicit", showElicitation);
    on("elicit-done", (data) => closeElicitation(data.id));
  }

  $("call-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!submit) return;
    try { submit(); } catch (e) {
      $("result").prepend(el("div", { class: "result failed" }, el("h3", { text: "Not sent" }), el("pre", { text: e.message })));
    }
  });
  $("refresh").addEventListener("click", () => {
    post("api/refresh", {}).catch((e) => { $("server-error").hidden = false; $("server-error").textContent = e.message; });
  });
  connect();
})();
