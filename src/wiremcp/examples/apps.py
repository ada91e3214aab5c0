"""MCP Apps: a server with two interactive views (extensions/apps, ``io.modelcontextprotocol/ui``).

* **Dice** (``ui://apps/dice.html``) is written with the official App SDK
  (``@modelcontextprotocol/ext-apps``): its bundle, vendored in
  ``wiremcp/_vendor/ext_apps``, is inlined into the page, so the view needs no
  CDN. The model calls ``roll_dice``; the host shows the result in the view,
  and the view calls the app-only tool ``dice_history`` when it starts and
  ``roll_dice`` again from its "Roll again" button.
* **Notes** (``ui://apps/notes.html``) speaks raw JSON-RPC over
  ``postMessage``, as the spec shows, with no library: ``ui/initialize``,
  then ``tools/call`` of the app-only tools ``list_notes`` (when it starts)
  and ``add_note`` (from its "Add" button).

A host without MCP Apps sees ``roll_dice`` and ``show_notes`` with their text
results, and never sees the app-only tools.

    wiremcp run examples/apps.py            # stdio
    wiremcp run examples/apps.py --http     # http://127.0.0.1:8000/mcp
"""

from __future__ import annotations

import importlib.resources
import random
import threading

import wiremcp
from wiremcp.server import ToolResult

server = wiremcp.Server("apps", version="1.0.0", instructions="Roll dice and keep notes, with interactive views.")


def app_sdk_script() -> str:
    """The vendored App SDK bundle as a classic module body: its exports become the object ``McpApps``.

    The bundle is one ES module ending in ``export{a as App,...}``; an inline
    ``<script type="module">`` cannot import from itself, so that statement is
    rewritten into ``const McpApps={App:a,...}`` and the view's code follows it.
    """
    source = importlib.resources.files("wiremcp._vendor.ext_apps").joinpath("app-with-deps.js").read_text("utf-8")
    body, found, tail = source.rpartition("export{")
    names, closed, rest = tail.partition("}")
    if not found or not closed or "export{" in body:
        raise RuntimeError("the vendored App SDK bundle does not end with one export{...} statement")
    pairs = []
    for entry in names.split(","):
        local, _, exported = entry.strip().partition(" as ")
        pairs.append(f"{exported or local}:{local}")
    return body + "const McpApps={" + ",".join(pairs) + "};" + rest.lstrip(";")


STYLE = """
  body { font: 15px system-ui, sans-serif; margin: 12px; color: var(--color-text-primary, #222); }
  button { font: inherit; padding: 4px 12px; }
  .big { font-size: 28px; font-weight: 600; }
  .muted { color: var(--color-text-secondary, #666); }
"""

# -- the dice view: the official App SDK ------------------------------------------------

DICE_VIEW = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Dice</title><style>%(style)s</style></head>
<body>
  <p class="big" id="rolls">Waiting for a roll</p>
  <p class="muted" id="history"></p>
  <button id="again">Roll again</button>
  <script type="module">
%(sdk)s
const app = new McpApps.App({ name: "dice-view", version: "1.0.0" }, {});
const $ = (id) => document.getElementById(id);
function show(result) {
  const data = result.structuredContent;
  $("rolls").textContent = data ? `${data.rolls.join(" + ")} = ${data.total}` : result.content[0].text;
}
async function history() {
  const result = await app.callServerTool({ name: "dice_history", arguments: {} });
  $("history").textContent = result.content[0].text;
}
app.ontoolresult = (result) => { show(result); history(); };
$("again").onclick = async () => {
  show(await app.callServerTool({ name: "roll_dice", arguments: { count: 2 } }));
  await history();
};
await app.connect();
await history();
  </script>
</body>
</html>
"""

# -- the notes view: raw JSON-RPC over postMessage, no library -------------------------

NOTES_VIEW = """<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Notes</title><style>%(style)s</style></head>
<body>
  <ul id="notes"></ul>
  <p><input id="text" placeholder="A new note"> <button id="add" type="button">Add</button></p>
  <script type="module">
let nextId = 1;
const pending = new Map();
const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const notify = (method, params) => send({ method, params });

window.addEventListener("message", (event) => {
  if (event.source !== window.parent) return;
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0") return;
  if (message.method === undefined) {  // a response to one of our requests
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  } else if (message.id !== undefined) {  // a request from the host
    if (message.method === "ui/resource-teardown" || message.method === "ping") send({ id: message.id, result: {} });
    else send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
  } else if (message.method === "ui/notifications/tool-result") {
    render(message.params);
  }
});

function render(result) {
  const list = document.getElementById("notes");
  list.replaceChildren(...(result.structuredContent?.notes ?? []).map((note) => {
    const item = document.createElement("li");
    item.textContent = note;
    return item;
  }));
}

// A button, not a <form>: a sandboxed iframe without allow-forms never submits one.
async function add() {
  const input = document.getElementById("text");
  if (!input.value.trim()) return;
  render(await request("tools/call", { name: "add_note", arguments: { text: input.value } }));
  input.value = "";
}
document.getElementById("add").addEventListener("click", add);
document.getElementById("text").addEventListener("keydown", (event) => { if (event.key === "Enter") add(); });

await request("ui/initialize", {
  appCapabilities: {},
  appInfo: { name: "notes-view", version: "1.0.0" },
  protocolVersion: "2026-01-26",
});
notify("ui/notifications/initialized", {});
render(await request("tools/call", { name: "list_notes", arguments: {} }));
  </script>
</body>
</html>
"""

server.ui_resource(
    "ui://apps/dice.html",
    html=DICE_VIEW % {"style": STYLE, "sdk": app_sdk_script()},
    name="dice",
    title="Dice",
    description="Shows dice rolls; rolls again on request.",
    prefers_border=True,
)
server.ui_resource(
    "ui://apps/notes.html",
    html=NOTES_VIEW % {"style": STYLE},
    name="notes",
    title="Notes",
    description="A list of notes with a field to add one.",
    prefers_border=False,
)

# -- the tools -------------------------------------------------------------------------

_lock = threading.Lock()
_history: list[int] = []
_notes: list[str] = ["Buy dice"]


@server.tool(ui="ui://apps/dice.html", inline=True)
def roll_dice(count: int = 1, sides: int = 6) -> ToolResult:
    """Roll `count` dice with `sides` sides each."""
    if not 1 <= count <= 20 or not 1 <= sides <= 1000:
        return ToolResult(["Roll between 1 and 20 dice of 1 to 1000 sides."], is_error=True)
    rolls = [random.randint(1, sides) for _ in range(count)]
    with _lock:
        _history.append(sum(rolls))
    # The text is what a host without MCP Apps (and the model) reads; the view draws structuredContent.
    return ToolResult(
        [f"Rolled {', '.join(map(str, rolls))} (total {sum(rolls)})"],
        structured_content={"rolls": rolls, "total": sum(rolls)},
    )


@server.tool(visibility="app", inline=True)
def dice_history() -> str:
    """Totals of the rolls so far (for the dice view)."""
    with _lock:
        totals = list(_history)
    if not totals:
        return "No rolls yet."
    return f"{len(totals)} roll(s) so far: totals {', '.join(map(str, totals[-10:]))}"


def _notes_result() -> ToolResult:
    with _lock:
        notes = list(_notes)
    lines = "\n".join(f"- {note}" for note in notes) or "(no notes)"
    return ToolResult([f"{len(notes)} note(s):\n{lines}"], structured_content={"notes": notes})


@server.tool(ui="ui://apps/notes.html", inline=True)
def show_notes() -> ToolResult:
    """Show the notes."""
    return _notes_result()


@server.tool(ui="ui://apps/notes.html", visibility="app", inline=True)
def list_notes() -> ToolResult:
    """The notes, for the notes view."""
    return _notes_result()


@server.tool(ui="ui://apps/notes.html", visibility="app", inline=True)
def add_note(text: str) -> ToolResult:
    """Add a note (from the notes view)."""
    if not text.strip():
        return ToolResult(["A note needs some text."], is_error=True)
    with _lock:
        _notes.append(text.strip())
    return _notes_result()


if __name__ == "__main__":
    wiremcp.run(server)
