"""The server API: register tools, resources, prompts and completers on a `Server`; transports serve it."""

from ._context import Context, Emit, InsufficientScope, current_auth
from ._server import DEFAULT_LIST_TTL_MS, Server
from ._tools import Tool, ToolAnnotations, ToolError, ToolResult, text

# Input from the client: typed elicitation, declared inputs gathered before the body runs.
from ._elicit import Elicited
from ._inputs import Elicit, Resolve, Roots, Sample
from ._workers import Workers

# Tool definitions: schema markers, content block types.
from ._content import AudioContent, Content, EmbeddedResource, ImageContent, ResourceLink, TextContent
from ._schema import Field, Header, SchemaError

# Resources, templates, prompts, completion, content helpers.
from ._completion import Completer, Completion
from ._content import audio, embedded_resource, image, resource_link
from ._prompts import Prompt, assistant, message, user
from ._resources import Resource
from ._uri_template import TemplateError, UriTemplate

__all__ = ["Server", "Context", "Emit", "Tool", "ToolAnnotations", "ToolError", "ToolResult", "text", "DEFAULT_LIST_TTL_MS"]
# Authorization: the verified token of the request being served, and a scope refusal.
__all__ += ["InsufficientScope", "current_auth"]
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
