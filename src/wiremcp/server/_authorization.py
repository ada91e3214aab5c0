"""Authorization at one door: the check every method gets, written down once (`CHECKS`).

Rules it keeps (basic/authorization/, "Runtime Insufficient Scope Errors";
security best practices, "Session Hijacking"; extensions/tasks/tasks.md,
"Security Considerations"):

* **one table.** Every request method a server answers, in both eras, has
  one row in `CHECKS` naming its check (`Check`). docs/security.md shows
  the table as `markdown_table` renders it, and a test holds the two equal
  and checks that every method a server serves has a row.
* **one door.** `authorize` applies a row's check to a request, before the
  handler runs and before any await (so a refusal is raised from the
  synchronous part of ``Server.handle``, and the HTTP transport answers 403
  ``insufficient_scope`` with its ``WWW-Authenticate`` challenge; in a
  2025-11-25 session it is the JSON-RPC error -32600 of that session).
  ``Server.handle``, ``Server.handle_in_session`` and ``LegacySession``
  (for its own methods) call it, and nothing else checks scopes.
* **who the caller is.** `caller` is the verified token's issuer, subject
  and client id, all three: the same user through another OAuth client is
  another caller. Tasks (their ``owner``) and sealed ``requestState`` are
  bound to it; a legacy session is bound to the same three by the HTTP
  transport (``transports.http._auth.principal``).
* **tasks.** A task record keeps its owner and the scopes of its tool
  (``TaskRecord.scopes``); `check_task` is the check of every ``tasks/*``
  request and of every task status notification (a listener is only given
  the tasks that pass): another caller's task is -32602 "belongs to another
  client" (never its content), and a token without the tool's scopes is
  refused like the tool itself. A record written before scopes were kept
  (``scopes`` None) is shown to no authenticated caller: the safe reading.
* **lists hide what the caller may not use.** `hide` filters ``tools/list``,
  ``prompts/list``, ``resources/list`` and ``resources/templates/list``
  (`task_visible`: ``tasks/list``); a list that depends on the token is
  ``cacheScope: private``, and so is a scoped resource's ``resources/read``
  unless it names its own ``cache_scope``: a shared cache must not hand one
  caller's answer to another.
* **without a token nothing is enforced**: stdio, and an HTTP endpoint
  without a ``ResourceServer`` (the transport warns about declared scopes).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple

from ..jsonrpc import InvalidParams
from ..protocol import ResourceNotFound
from ._context import InsufficientScope, current_auth

if TYPE_CHECKING:
    from ._server import Server
    from ._tasks._store import TaskRecord

__all__ = ["Check", "Row", "CHECKS", "authorize", "caller", "permitted", "hide", "check_task", "task_visible", "markdown_table"]


class Check(enum.Enum):
    """What is checked for a method (the value is the sentence docs/security.md shows)."""

    OPEN = "none beyond the endpoint's; the session it opens is bound to the caller (issuer, subject, client id)"
    NONE = "none: no component, no caller's data (the token itself is checked at the transport, as for every request)"
    TOOL = "the scopes of the tool named by `params.name`"
    RESOURCE = "the scopes of the resource or template serving `params.uri`"
    PROMPT = "the scopes of the prompt named by `params.name`"
    COMPLETION = "the scopes of the prompt or resource template `params.ref` names, before its completer runs"
    LIST = "lists only what the token's scopes allow (items with scopes the token lacks are left out)"
    LISTEN = "the scopes of each resource in `resourceSubscriptions`; `taskIds`: only the caller's tasks whose tool's scopes it holds"
    TASK = "ownership (issuer, subject, client id) and the scopes of the task's tool"
    TASK_LIST = "only the caller's tasks (issuer, subject, client id) whose tool's scopes it holds"
    SESSION = "the session belongs to the principal (issuer, subject, client id) that opened it (404 otherwise)"


class Row(NamedTuple):
    check: Check
    eras: str
    #: Also checked when a retry carries ``requestState``: sealed for this caller and request.
    state: bool = False


MODERN = "2026-07-28"
LEGACY = "2025-11-25"
BOTH = f"{MODERN}, {LEGACY}"

#: Every request method, its check, the eras that have it (see the module docs).
CHECKS: dict[str, Row] = {
    "initialize": Row(Check.OPEN, LEGACY),
    "server/discover": Row(Check.NONE, MODERN),
    "ping": Row(Check.SESSION, LEGACY),
    "logging/setLevel": Row(Check.SESSION, LEGACY),
    "tools/list": Row(Check.LIST, BOTH),
    "tools/call": Row(Check.TOOL, BOTH, state=True),
    "resources/list": Row(Check.LIST, BOTH),
    "resources/templates/list": Row(Check.LIST, BOTH),
    "resources/read": Row(Check.RESOURCE, BOTH, state=True),
    "resources/subscribe": Row(Check.RESOURCE, LEGACY),
    "resources/unsubscribe": Row(Check.SESSION, LEGACY),
    "prompts/list": Row(Check.LIST, BOTH),
    "prompts/get": Row(Check.PROMPT, BOTH, state=True),
    "completion/complete": Row(Check.COMPLETION, BOTH),
    "subscriptions/listen": Row(Check.LISTEN, MODERN),
    "tasks/get": Row(Check.TASK, BOTH),
    "tasks/update": Row(Check.TASK, MODERN),
    "tasks/cancel": Row(Check.TASK, BOTH),
    "tasks/result": Row(Check.TASK, LEGACY),
    "tasks/list": Row(Check.TASK_LIST, LEGACY),
}


def caller() -> str | None:
    """Who sent the request being served: ``issuer|sub:subject|client:client_id``; None when unauthenticated."""
    token = current_auth.get()
    if token is None:
        return None
    issuer = getattr(token, "issuer", None)
    subject = getattr(token, "subject", None)
    client = getattr(token, "client_id", None)
    return f"{issuer}|sub:{subject}|client:{client}"


def permitted(scopes: Iterable[str] | None) -> bool:
    """Whether the request's token (if any) holds every one of ``scopes`` (None: unknown, never with a token)."""
    token = current_auth.get()
    if token is None:
        return True
    if scopes is None:
        return False
    granted = token.scopes
    return all(scope in granted for scope in scopes)


def hide(defs: list[dict[str, Any]], registry: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """A list's definitions without those whose component (``registry[d[key]]``) has scopes the token lacks.

    ``defs`` itself when the list is the same for every caller (no token, or
    nothing in it has scopes); otherwise a new list, even when nothing was
    left out, so that the caller marks the result ``cacheScope: private``.
    """
    if current_auth.get() is None:
        return defs
    shown: list[dict[str, Any]] = []
    scoped = False
    for definition in defs:
        scopes = registry[definition[key]].scopes
        scoped = scoped or bool(scopes)
        if permitted(scopes):
            shown.append(definition)
    return shown if scoped else defs


def _require(scopes: tuple[str, ...] | list[str], what: str) -> None:
    if scopes and not permitted(scopes):
        raise InsufficientScope(tuple(scopes), what)


def authorize(server: Server, method: str, params: dict[str, Any]) -> None:
    """Apply ``method``'s row to a request about to be handled (see the module docs); raises the refusal."""
    if current_auth.get() is None:
        return
    row = CHECKS.get(method)
    if row is None:
        return
    check = row.check
    if check is Check.TOOL:
        name = params.get("name")
        tool = server.get_tool(name) if type(name) is str else None
        if tool is not None:
            _require(tool.scopes, f"the tool {name!r}")
    elif check is Check.RESOURCE:
        _resource(server, params.get("uri"))
    elif check is Check.PROMPT:
        name = params.get("name")
        prompt = server._prompts.by_name.get(name) if type(name) is str else None
        if prompt is not None:
            _require(prompt.scopes, f"the prompt {name!r}")
    elif check is Check.COMPLETION:
        _completion(server, params.get("ref"))
    elif check is Check.LISTEN:
        wanted = params.get("notifications")
        uris = wanted.get("resourceSubscriptions") if type(wanted) is dict else None
        for uri in uris if type(uris) is list else ():
            _resource(server, uri)


def _resource(server: Server, uri: Any) -> None:
    if type(uri) is not str:
        return
    try:
        resource, _ = server._resources.find(uri)
    except ResourceNotFound:
        return
    _require(resource.scopes, f"the resource {resource.uri!r}")


def _completion(server: Server, ref: Any) -> None:
    if type(ref) is not dict:
        return
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")
        prompt = server._prompts.by_name.get(name) if type(name) is str else None
        if prompt is not None:
            _require(prompt.scopes, f"the prompt {name!r}")
    elif kind == "ref/resource":
        uri = ref.get("uri")
        template = server._resources.templates.get(uri) if type(uri) is str else None
        if template is not None:
            _require(template.scopes, f"the resource template {uri!r}")


def task_visible(record: TaskRecord, owner: str | None) -> bool:
    """Whether the task may be shown to the caller ``owner`` (`tasks/list`, status notifications)."""
    return record.owner == owner and permitted(record.scopes)


def check_task(record: TaskRecord, owner: str | None) -> None:
    """The check of a ``tasks/*`` request on ``record`` for the caller ``owner``: -32602 or the scope refusal."""
    if record.owner != owner or (record.scopes is None and current_auth.get() is not None):
        raise InvalidParams(
            "Failed to retrieve task: Task belongs to another client (it was created by a different caller)",
            {"taskId": record.task_id, "reason": "foreign"},
        )
    _require(record.scopes or (), f"the task {record.task_id!r} (of the tool {record.name!r})")


def markdown_table() -> str:
    """`CHECKS` as the Markdown table of docs/security.md."""
    lines = ["| method | eras | check | `requestState` retry |", "| --- | --- | --- | --- |"]
    for method, row in CHECKS.items():
        state = "sealed for this caller and request" if row.state else "-"
        lines.append(f"| `{method}` | {row.eras} | {row.check.value} | {state} |")
    return "\n".join(lines) + "\n"
