"""The answers a client gives when a server asks it for input (basic/patterns/mrtr.mdx).

TypedDicts of the wire shapes (schema.json: ``ElicitResult``,
``CreateMessageResult``, ``ListRootsResult``, ``Root``): plain dicts at run
time, named so that a type checker knows what ``await ctx.elicit(...)``
returns. Each type holds what the server checks before handing an answer to
a handler (``wiremcp.server._mrtr.check_answer``): an elicitation's
``action`` is one of the three, its ``content`` matched the requested schema;
a sampling answer has a ``role`` and ``content``; a roots answer has a
``roots`` array. Fields the server does not check are ``NotRequired``, even
where the schema requires them (``model``), since a handler may receive an
answer without them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, Union

__all__ = ["ElicitValue", "ElicitResult", "CreateMessageResult", "Root"]

#: One field of a submitted form: the requested schema allows strings,
#: numbers, integers, booleans and arrays of strings (multi-select enums).
ElicitValue = Union[str, int, float, bool, list[str]]


class ElicitResult(TypedDict):
    """The answer to ``elicitation/create`` (client/elicitation.mdx)."""

    action: Literal["accept", "decline", "cancel"]
    #: The submitted form: present when ``action`` is ``"accept"`` in form mode.
    content: NotRequired[dict[str, ElicitValue]]
    _meta: NotRequired[dict[str, Any]]


class CreateMessageResult(TypedDict):
    """The answer to ``sampling/createMessage`` (client/sampling.mdx)."""

    role: Literal["user", "assistant"]
    #: One content block (text, image, audio, tool use or tool result), or a list of them.
    content: dict[str, Any] | list[dict[str, Any]]
    model: NotRequired[str]
    stopReason: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]


class Root(TypedDict):
    """One of the client's roots (client/roots.mdx): a ``file://`` URI and an optional name."""

    uri: str
    name: NotRequired[str]
    _meta: NotRequired[dict[str, Any]]
