"""The server API: register tools, resources, prompts and completers on a `Server`; transports serve it.

What a transport needs from the server is public here too, and is all a
transport may use (tests/test_layers.py checks it):

* `ServerConnection`: one connection's server side without I/O. Fed decoded
  messages (`request`, `notification`, `response`), it decides the era of
  each request (`request_era`: modern ``_meta`` is served statelessly; a
  request of a connection holding a legacy session, or ``initialize``, is
  served in the `LegacySession`), and answers at once or hands back a running
  `Call`. It owns the legacy session and the server's requests to the peer.
* `Call`: one request in progress and its notifications' way out (the
  transport supplies the ``write`` function), with a `CallState`
  (running, replied, cancelled); it makes exactly one reply, or none once
  cancelled.
* `reply_ok`, `reply_failed`, `settle`: the only place where a handler's
  outcome, exceptions included, becomes a reply (``(line, code)``, a `Reply`).
* `Lifespan`, `drain`: what a transport does around serving. It enters
  ``async with server.lifespan`` before it takes requests; on shutdown it
  calls ``server.close_subscriptions()``, then ``drain(tasks,
  server.shutdown_grace)`` on its requests in flight, then leaves the
  lifespan (which shuts the worker threads down). `MCPApp` sets
  `current_headers` while it serves a request (``ctx.headers``).
* `OutgoingRequests`: the server's requests to its peer (elicitation,
  sampling, roots in a legacy session) and their answers, on
  `wiremcp.jsonrpc.PendingRequests`; an error answer raises
  `ClientRequestFailed`.
"""

from typing import TYPE_CHECKING

# What every server needs at start-up; every other name below loads its module on first use
# (`__getattr__`), so that a server of tools alone never imports resources, prompts, completion,
# the connection machinery, middleware, composition or the task stores (bench/README.md, "Cold start").
from ._server import DEFAULT_LIST_TTL_MS, Server
from ._tools import Tool, ToolAnnotations, ToolError, ToolResult

if TYPE_CHECKING:
    from ._context import Context, Emit, Headers, InsufficientScope, current_auth, current_headers
    from ._call import Call, CallState, Write
    from ._connection import ConnectionState, Era, ServerConnection, carries_protocol_meta, request_era
    from ._legacy import DEFAULT_MAX_SESSION_SUBSCRIPTIONS, DEFAULT_MAX_SUBSCRIPTION_URI, ClientRequestFailed, LegacySession
    from ._outgoing import OutgoingRequests
    from ._reply import CALLER_BUSY, SERVER_BUSY, CallerBusy, Reply, ServerBusy, reply_cancelled, reply_failed, reply_ok, settle

    # Input from the client: typed elicitation, declared inputs gathered before the body runs.
    from ._elicit import Elicited
    from ._inputs import Elicit, Resolve, Roots, Sample
    from ._workers import Workers

    # Tasks (io.modelcontextprotocol/tasks and 2025-11-25 tasks): the pluggable store.
    from ._tasks import MemoryTaskStore, TaskRecord, TaskStore, TaskStoreError
    from ._tasks._sqlite import SQLiteTaskStore, default_task_db_path

    # Lifespan, middleware, composition.
    from ._lifespan import DEFAULT_SHUTDOWN_GRACE, Lifespan, LifespanFactory, drain
    from ._middleware import Invocation, Middleware, Next
    from ._mount import Mount
    from ._forward import RESUME_KEY, Ask, Forwarder, Upstream, reporting_context

    # Tool definitions: schema markers, content block types.
    from ._content import AudioContent, Content, EmbeddedResource, ImageContent, ResourceLink, TextContent
    from ._schema import Field, Header, SchemaError, compile_validator

    # Resources, templates, prompts, completion, content helpers.
    from ._completion import Completer, Completion
    from ._content import audio, embedded_resource, image, resource_link, text
    from ._prompts import Prompt, assistant, message, user
    from ._resources import Resource
    from ._uri_template import TemplateError, UriTemplate

    # MCP Apps (extensions/apps): server.ui_resource, @server.tool(ui=..., visibility=...).
    from ._apps import RESOURCE_URI_META_KEY, UI_EXTENSION, UI_MIME_TYPE, UiCsp, Visibility, supports_apps
else:
    #: The module (relative to this package) of each name given on first use.
    _LAZY: dict[str, str] = {
        **dict.fromkeys(("Context", "Emit", "Headers", "InsufficientScope", "current_auth", "current_headers"), "_context"),
        **dict.fromkeys(("Call", "CallState", "Write"), "_call"),
        **dict.fromkeys(("ConnectionState", "Era", "ServerConnection", "carries_protocol_meta", "request_era"), "_connection"),
        **dict.fromkeys(("DEFAULT_MAX_SESSION_SUBSCRIPTIONS", "DEFAULT_MAX_SUBSCRIPTION_URI", "LegacySession"), "_legacy"),
        "ClientRequestFailed": "_failures",
        "OutgoingRequests": "_outgoing",
        **dict.fromkeys(
            ("CALLER_BUSY", "SERVER_BUSY", "CallerBusy", "Reply", "ServerBusy", "reply_cancelled", "reply_failed", "reply_ok", "settle"), "_reply"
        ),
        "Elicited": "_elicit",
        **dict.fromkeys(("Elicit", "Resolve", "Roots", "Sample"), "_inputs"),
        "Workers": "_workers",
        **dict.fromkeys(("MemoryTaskStore", "TaskRecord", "TaskStore", "TaskStoreError"), "_tasks"),
        **dict.fromkeys(("SQLiteTaskStore", "default_task_db_path"), "_tasks._sqlite"),  # sqlite3 loads on first use
        **dict.fromkeys(("DEFAULT_SHUTDOWN_GRACE", "Lifespan", "LifespanFactory", "drain"), "_lifespan"),
        **dict.fromkeys(("Invocation", "Middleware", "Next"), "_middleware"),
        "Mount": "_mount",
        **dict.fromkeys(("RESUME_KEY", "Ask", "Forwarder", "Upstream", "reporting_context"), "_forward"),
        **dict.fromkeys(
            ("AudioContent", "Content", "EmbeddedResource", "ImageContent", "ResourceLink", "TextContent"), "_content"
        ),
        **dict.fromkeys(("audio", "embedded_resource", "image", "resource_link", "text"), "_content"),
        **dict.fromkeys(("Field", "Header", "SchemaError", "compile_validator"), "_schema"),
        **dict.fromkeys(("Completer", "Completion"), "_completion"),
        **dict.fromkeys(("Prompt", "assistant", "message", "user"), "_prompts"),
        "Resource": "_resources",
        # URI templates (RFC 6570): a server without resource templates never needs them.
        **dict.fromkeys(("TemplateError", "UriTemplate"), "_uri_template"),
        **dict.fromkeys(
            ("RESOURCE_URI_META_KEY", "UI_EXTENSION", "UI_MIME_TYPE", "UiCsp", "Visibility", "supports_apps"), "_apps"
        ),
    }

    def __getattr__(name: str) -> object:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f"{__name__}.{module}"), name)
        globals()[name] = value  # found by the next lookup without this function
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})

__all__ = ["Server", "Context", "Emit", "Tool", "ToolAnnotations", "ToolError", "ToolResult", "text", "DEFAULT_LIST_TTL_MS"]
# Authorization: the verified token of the request being served, and a scope refusal.
__all__ += ["InsufficientScope", "current_auth"]
# The compiled JSON Schema validator (schema -> check(value) -> first problem or None); `wiremcp tap` uses it.
__all__ += ["compile_validator"]
__all__ += [
    "Field",
    "Header",
    "SchemaError",
    "Content",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
]
__all__ += [
    # the transport contract
    "ServerConnection",
    "ConnectionState",
    "Era",
    "request_era",
    "carries_protocol_meta",
    "Call",
    "CallState",
    "Write",
    "Reply",
    "reply_ok",
    "reply_failed",
    "settle",
    "reply_cancelled",
    "ServerBusy",
    "SERVER_BUSY",
    "CallerBusy",
    "CALLER_BUSY",
    "OutgoingRequests",
    "LegacySession",
    "ClientRequestFailed",
    "DEFAULT_MAX_SESSION_SUBSCRIPTIONS",
    "DEFAULT_MAX_SUBSCRIPTION_URI",
]
__all__ += [
    "Resource",
    "Prompt",
    "Completer",
    "Completion",
    "UriTemplate",
    "TemplateError",
    "user",
    "assistant",
    "message",
    "image",
    "audio",
    "embedded_resource",
    "resource_link",
]
__all__ += ["Elicited", "Elicit", "Sample", "Roots", "Resolve", "Workers"]
__all__ += ["Lifespan", "LifespanFactory", "DEFAULT_SHUTDOWN_GRACE", "drain", "current_headers", "Headers"]
__all__ += ["Invocation", "Middleware", "Next", "Mount"]
__all__ += ["Upstream", "Ask", "Forwarder", "RESUME_KEY", "reporting_context"]
__all__ += ["UI_EXTENSION", "UI_MIME_TYPE", "RESOURCE_URI_META_KEY", "UiCsp", "Visibility", "supports_apps"]
# Tasks: the store interface a deployment implements (see _tasks/_store), and the in-memory one.
__all__ += ["TaskStore", "TaskRecord", "TaskStoreError", "MemoryTaskStore", "SQLiteTaskStore", "default_task_db_path"]
