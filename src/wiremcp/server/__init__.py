"""The server API: register tools, resources, prompts and completers on a `Server`; transports serve it.

These are the names a server author uses; the rest lives in namespaces of
its own, each documented there:

* `wiremcp.server.transport`: the contract a transport is written against
  (`ServerConnection`, `Call`, the reply funnel, draining).
* `wiremcp.server.tasks`: task stores (memory, SQLite, your own).
* `wiremcp.server.storage`: the key-value store behind ``server.storage`` and
  ``ctx.session_state`` (memory, SQLite, Redis, your own).
* `wiremcp.server.apps`: MCP Apps' identifiers, CSP and visibility.
* `wiremcp.server.forward`: the contract behind ``server.forward`` and
  `wiremcp.proxy`.
* `wiremcp.server.schema`: the JSON Schema validator, for checking values
  yourself.

tests/server/test_public_api.py keeps this list exactly as written.
"""

from typing import TYPE_CHECKING

# What every server needs at start-up; every other name below loads its module on first use
# (`__getattr__`), so that a server of tools alone never imports resources, prompts, completion,
# the connection machinery, middleware, composition or the task stores (bench/README.md, "Cold start").
from ._server import DEFAULT_LIST_TTL_MS, Server
from ._tools import Tool, ToolAnnotations, ToolError, ToolResult

if TYPE_CHECKING:
    from ._context import Context, Emit, Headers, InsufficientScope
    from ._failures import ClientRequestFailed

    # Input from the client: typed elicitation, declared inputs gathered before the body runs.
    from ._elicit import Elicited
    from ._inputs import Elicit, Resolve, Roots, Sample

    # Lifespan, middleware, composition.
    from ._lifespan import Lifespan, LifespanFactory
    from ._middleware import Invocation, Middleware, Next
    from ._mount import Mount

    # Tool definitions: schema markers, content block types.
    from ._content import AudioContent, Content, EmbeddedResource, ImageContent, ResourceLink, TextContent
    from ._schema import Field, Header, SchemaError

    # Resources, templates, prompts, completion, content helpers.
    from ._completion import Completer, Completion
    from ._content import audio, embedded_resource, image, resource_link, text
    from ._prompts import Prompt, assistant, message, user
    from ._resources import Resource
    from ._uri_template import TemplateError, UriTemplate
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            **dict.fromkeys(("Context", "Emit", "Headers", "InsufficientScope"), "_context"),
            "ClientRequestFailed": "_failures",
            "Elicited": "_elicit",
            **dict.fromkeys(("Elicit", "Resolve", "Roots", "Sample"), "_inputs"),
            **dict.fromkeys(("Lifespan", "LifespanFactory"), "_lifespan"),
            **dict.fromkeys(("Invocation", "Middleware", "Next"), "_middleware"),
            "Mount": "_mount",
            **dict.fromkeys(
                ("AudioContent", "Content", "EmbeddedResource", "ImageContent", "ResourceLink", "TextContent"), "_content"
            ),
            **dict.fromkeys(("audio", "embedded_resource", "image", "resource_link", "text"), "_content"),
            **dict.fromkeys(("Field", "Header", "SchemaError"), "_schema"),
            **dict.fromkeys(("Completer", "Completion"), "_completion"),
            **dict.fromkeys(("Prompt", "assistant", "message", "user"), "_prompts"),
            "Resource": "_resources",
            # URI templates (RFC 6570): a server without resource templates never needs them.
            **dict.fromkeys(("TemplateError", "UriTemplate"), "_uri_template"),
        },
    )

__all__ = [
    # The server, its tools and the context a handler receives.
    "Server",
    "DEFAULT_LIST_TTL_MS",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "Context",
    "Emit",
    "Headers",
    # A scope refusal (authorization), and the client answering a question with an error.
    "InsufficientScope",
    "ClientRequestFailed",
    # Declaring tool input: schema markers.
    "Field",
    "Header",
    "SchemaError",
    # Content blocks: their types and the helpers that make them.
    "Content",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
    "text",
    "image",
    "audio",
    "embedded_resource",
    "resource_link",
    # Resources, templates, prompts, completion.
    "Resource",
    "UriTemplate",
    "TemplateError",
    "Prompt",
    "user",
    "assistant",
    "message",
    "Completer",
    "Completion",
    # Input from the client.
    "Elicited",
    "Elicit",
    "Sample",
    "Roots",
    "Resolve",
    # Lifespan, middleware, composition.
    "Lifespan",
    "LifespanFactory",
    "Middleware",
    "Invocation",
    "Next",
    "Mount",
]
