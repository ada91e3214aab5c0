"""The checks on a view's postMessage conversation with its host (sans-I/O).

Each view rendered by the inspector has its own `ViewChecker`. It is fed the
envelopes in the order the page saw them, each with its direction (``"v2h"``,
view to host, or ``"h2v"``), and returns their problems:

* **The tap's rules** (`WireChecker`, the view as the client and the host as
  the server): framing (``bad-jsonrpc``, ``invalid-envelope``, ...), ids
  (``bad-id``, ``null-id``, ``duplicate-id``), correlation (``unknown-id``,
  ``already-answered``). No MCP revision is detected on this channel, so the
  checker's method tables and schemas stay out of it; the ones below apply.
* **Methods** (apps.mdx, "Standard MCP Messages" and "MCP Apps Specific
  Messages"): the ``ui/...`` methods of the vendored ext-apps ``schema.json``
  and the core methods a view may use (``tools/call``, ``resources/read``,
  ``ping``, ``notifications/message``); any other is ``unknown-method``, one
  sent by the wrong side ``wrong-direction``. The sandbox's reserved
  ``ui/notifications/sandbox-*`` messages are ``sandbox-reserved`` when they
  do not come from the sandbox (a view's own, once its proxy is ready).
* **Lifecycle**: a view request other than ``ui/initialize`` and ``ping``
  before the host answered ``ui/initialize`` is ``before-initialize``; a host
  message to the view before ``ui/notifications/initialized`` is
  ``host-before-initialized`` (Sandbox proxy, rule 6).
* **Schema** (``schema``): ``ui/...`` requests, notifications and their
  results against the ext-apps ``schema.json``; the core methods against the
  2025-11-25 ``schema.json`` (the channel has no ``_meta`` protocol version,
  so the revision without required ``_meta``). A message with a problem
  already is not schema-checked (one cause, one report).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Callable, Literal

import orjson

from ...server.schema import compile_validator
from .._wirecheck import Checked, Problem, WireChecker, load_schema, problem

__all__ = ["ViewChecker", "ViewDirection", "VIEW_REQUESTS", "HOST_REQUESTS", "VIEW_NOTIFICATIONS", "HOST_NOTIFICATIONS"]

ViewDirection = Literal["v2h", "h2v"]

#: Core MCP methods a view may send (apps.mdx, "Standard MCP Messages") -> 2025-11-25 definitions.
_CORE_REQUESTS = {"tools/call": "CallToolRequest", "resources/read": "ReadResourceRequest", "ping": "PingRequest"}
_CORE_RESULTS = {"tools/call": "CallToolResult", "resources/read": "ReadResourceResult", "ping": "Result"}
_CORE_NOTIFICATIONS = {"notifications/message": "LoggingMessageNotification"}
_CORE_REVISION = "2025-11-25"
#: The tap's problems about MCP eras, which a view channel does not have.
_ERA_CODES = frozenset({"missing-meta", "unknown-version"})

#: ui/ requests the view sends, and the host's; notifications each way (apps.mdx).
VIEW_REQUESTS = frozenset(
    {"ui/initialize", "ui/open-link", "ui/message", "ui/request-display-mode", "ui/update-model-context", "ui/download-file",
     *_CORE_REQUESTS}
)
HOST_REQUESTS = frozenset({"ui/resource-teardown", "ping"})
VIEW_NOTIFICATIONS = frozenset(
    {"ui/notifications/initialized", "ui/notifications/size-changed", "ui/notifications/request-teardown",
     "ui/notifications/sandbox-proxy-ready", *_CORE_NOTIFICATIONS}
)
HOST_NOTIFICATIONS = frozenset(
    {"ui/notifications/tool-input", "ui/notifications/tool-input-partial", "ui/notifications/tool-result",
     "ui/notifications/tool-cancelled", "ui/notifications/host-context-changed", "ui/notifications/sandbox-resource-ready"}
)


@functools.cache
def _apps_schema() -> dict[str, Any]:
    text = resources.files("wiremcp._vendor.ext_apps").joinpath("schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    # Three definitions hold their own "$defs" (a JSON value, "__schema0") but refer to it from the
    # root ("#/$defs/__schema0"), which zod's generator left out: lift them to the root so they resolve.
    defs = schema["$defs"]
    for body in list(defs.values()):
        for name, inner in ((body.get("$defs") or {}) if type(body) is dict else {}).items():
            defs.setdefault(name, inner)
    _open_intersections(schema)
    return schema


def _open_intersections(node: Any) -> None:
    """zod writes an intersection (``A & B``) as ``allOf`` of closed objects, which nothing can match.

    ``containerDimensions`` is ``({height} | {maxHeight}) & ({width} | {maxWidth})``: each branch says
    ``additionalProperties: false``, so the spec's own example ``{"width": 400, "maxHeight": 600}``
    fails. The branches of an ``allOf`` are opened (their ``properties`` still checked).
    """
    if type(node) is dict:
        for member in node.get("allOf", ()) if type(node.get("allOf")) is list else ():
            for branch in [member, *(member.get("anyOf", ()) if type(member) is dict else ())]:
                if type(branch) is dict and branch.get("additionalProperties") is False:
                    del branch["additionalProperties"]
        for value in node.values():
            _open_intersections(value)
    elif type(node) is list:
        for value in node:
            _open_intersections(value)


@functools.cache
def _definitions() -> tuple[dict[str, str], dict[str, str]]:
    """ext-apps: method -> request definition, method -> notification definition."""
    requests: dict[str, str] = {}
    notifications: dict[str, str] = {}
    for name, body in _apps_schema()["$defs"].items():
        method = ((body.get("properties") or {}).get("method") or {}).get("const") if type(body) is dict else None
        if type(method) is str:
            (requests if name.endswith("Request") else notifications)[method] = name
    return requests, notifications


@functools.cache
def _validator(source: str, name: str) -> Callable[[Any], str | None]:
    schema = _apps_schema() if source == "apps" else load_schema(_CORE_REVISION)
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{name}"}
    return compile_validator(root)


def _definition(method: str, request: bool) -> tuple[str, str] | None:
    requests, notifications = _definitions()
    if request:
        if method in requests:
            return "apps", requests[method]
        return ("core", _CORE_REQUESTS[method]) if method in _CORE_REQUESTS else None
    if method in notifications:
        return "apps", notifications[method]
    return ("core", _CORE_NOTIFICATIONS[method]) if method in _CORE_NOTIFICATIONS else None


def _result_definition(method: str) -> tuple[str, str] | None:
    requests, _ = _definitions()
    if method in requests:
        name = requests[method][: -len("Request")] + "Result"
        return ("apps", name) if name in _apps_schema()["$defs"] else None
    return ("core", _CORE_RESULTS[method]) if method in _CORE_RESULTS else None


class ViewChecker:
    """Checks one view's conversation with the host; feed it with `check_line` in the order the page saw it."""

    def __init__(self) -> None:
        self.wire = WireChecker()
        self.asked: dict[tuple[ViewDirection, bool, Any], str] = {}
        self.initialize_id: Any = None
        self.initialize_answered = False
        self.initialized = False
        self.proxy_ready = False

    def check_line(self, direction: ViewDirection, line: bytes, sender: str = "") -> Checked:
        """Parse and check one envelope; ``sender`` is ``"sandbox"`` for the proxy's own messages."""
        checked = self.wire.check_line("c2s" if direction == "v2h" else "s2c", line)
        msg = checked["msg"]
        problems = checked["problems"] = [
            problem(p["code"], p["message"].replace("the client", "the view").replace("the server", "the host"))
            for p in checked["problems"]
            if p["code"] not in _ERA_CODES
        ]
        if type(msg) is not dict:
            return checked
        method = msg.get("method")
        if type(method) is str:
            self._method(direction, msg, method, "id" in msg, sender, problems)
        elif "id" in msg and ("result" in msg or "error" in msg):
            self._response(direction, msg, problems)
        return checked

    def _method(self, direction: ViewDirection, msg: dict[str, Any], method: str, request: bool, sender: str, problems: list[Problem]) -> None:
        if method.startswith("ui/notifications/sandbox-"):
            if sender != "sandbox" or (method == "ui/notifications/sandbox-proxy-ready" and self.proxy_ready):
                problems.append(
                    problem("sandbox-reserved", f"{method!r} is reserved to the sandbox proxy and the host (apps.mdx, Reserved Messages)")
                )
                return
            self.proxy_ready = True
        ours = (VIEW_REQUESTS if request else VIEW_NOTIFICATIONS) if direction == "v2h" else (HOST_REQUESTS if request else HOST_NOTIFICATIONS)
        theirs = (HOST_REQUESTS if request else HOST_NOTIFICATIONS) if direction == "v2h" else (VIEW_REQUESTS if request else VIEW_NOTIFICATIONS)
        kind = "request" if request else "notification"
        who = "the view" if direction == "v2h" else "the host"
        if method not in ours:
            if method in theirs:
                problems.append(problem("wrong-direction", f"{method!r} is not a {kind} {who} sends (apps.mdx)"))
            else:
                problems.append(problem("unknown-method", f"{method!r} is not a {kind} of MCP Apps between a view and its host (apps.mdx)"))
            return
        if direction == "v2h" and request:
            if method == "ui/initialize":
                self.initialize_id = msg.get("id")
            elif method != "ping" and not self.initialize_answered:
                problems.append(problem("before-initialize", f"the view sent {method!r} before the host answered ui/initialize"))
        if direction == "v2h" and method == "ui/notifications/initialized":
            self.initialized = True
        if direction == "h2v" and not self.initialized and method != "ui/notifications/sandbox-resource-ready":
            problems.append(
                problem("host-before-initialized", f"the host sent {method!r} before ui/notifications/initialized (apps.mdx, Sandbox proxy)")
            )
        if request and (type(msg.get("id")) in (str, int)):
            self.asked[(direction, type(msg["id"]) is str, msg["id"])] = method
        definition = _definition(method, request)
        if not problems and definition is not None:
            # ext-apps definitions describe {method, params} only (no jsonrpc, no id)
            value = {k: msg[k] for k in ("method", "params") if k in msg} if definition[0] == "apps" else msg
            self._schema(definition, value, problems, "")

    def _response(self, direction: ViewDirection, msg: dict[str, Any], problems: list[Problem]) -> None:
        asker: ViewDirection = "h2v" if direction == "v2h" else "v2h"
        response_id = msg["id"]
        method = self.asked.pop((asker, type(response_id) is str, response_id), None)
        if method is None:
            return
        if method == "ui/initialize" and "result" in msg:
            self.initialize_answered = True
        definition = _result_definition(method)
        if not problems and "result" in msg and definition is not None:
            self._schema(definition, msg["result"], problems, "the result ")

    def _schema(self, definition: tuple[str, str], value: Any, problems: list[Problem], what: str) -> None:
        source, name = definition
        found = _validator(source, name)(value)
        if found is not None:
            where = "ext-apps schema.json" if source == "apps" else f"{_CORE_REVISION} schema.json"
            problems.append(problem("schema", f"{what}does not match {name} ({where}): {found}"))


def encode(message: Any) -> bytes:
    return orjson.dumps(message)
