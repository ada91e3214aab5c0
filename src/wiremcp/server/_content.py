"""Content blocks for tool results (server/tools.mdx, "Tool Result").

Each helper returns a plain dict, ready for the wire, typed as the matching
TypedDict so a tool can say what it returns::

    @server.tool()
    def chart() -> list[Content]:
        return [text("Sales by month"), image(png_bytes, "image/png")]

Rules kept here:

* binary data (``bytes``) is base64-encoded once, when the block is made; a
  ``str`` is taken to be base64 already and is checked to be valid base64;
* ``annotations`` (audience, priority, lastModified) are checked for the
  spec's keys and types (server/resources.mdx, "Annotations"); lastModified
  may be a ``datetime``;
* URIs and MIME types are strings; a ``resource_link`` needs ``uri`` and
  ``name``, an embedded resource exactly one of ``text`` and ``blob``.

A tool annotated to return these types (or `ToolResult`) gets no
``outputSchema``: content blocks are the result, not data about it.

Prompts use the same blocks inside their messages (`_prompts`).
"""

# No `from __future__ import annotations` here: this module defines a function
# named `annotations`, which that import would shadow.
import base64
import binascii
import datetime
import re
from typing import Any, Literal, NotRequired, TypedDict, TypeVar, Union

from ..protocol.content import CONTENT_TYPES

__all__ = [
    "Annotations",
    "TextContent",
    "ImageContent",
    "AudioContent",
    "ResourceLink",
    "EmbeddedResource",
    "Content",
    "CONTENT_TYPES",
    "CONTENT_HINTS",
    "text",
    "image",
    "audio",
    "resource_link",
    "embedded_resource",
    "annotations",
    "check_icons",
]


class Annotations(TypedDict, total=False):
    """Hints for the client: who the content is for, how much it matters, when it changed."""

    audience: list[Literal["user", "assistant"]]
    priority: float
    lastModified: str


class TextContent(TypedDict):
    """A ``text`` content block."""

    type: Literal["text"]
    text: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class ImageContent(TypedDict):
    """An ``image`` content block: base64 ``data`` and its ``mimeType``."""

    type: Literal["image"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class AudioContent(TypedDict):
    """An ``audio`` content block: base64 ``data`` and its ``mimeType``."""

    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class ResourceLink(TypedDict):
    """A ``resource_link`` content block: a resource the client may read, by URI."""

    type: Literal["resource_link"]
    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    icons: NotRequired[list[dict[str, Any]]]
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


class EmbeddedResource(TypedDict):
    """A ``resource`` content block: a resource's contents embedded in the result."""

    type: Literal["resource"]
    resource: dict[str, Any]
    annotations: NotRequired[Annotations]
    _meta: NotRequired[dict[str, Any]]


#: Any content block.
Content = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]

#: Return annotations that mean "content blocks" (no outputSchema).
CONTENT_HINTS: frozenset[Any] = frozenset(
    {TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, Content}
)

_ROLES = ("user", "assistant")


def annotations(
    *,
    audience: list[str] | tuple[str, ...] | None = None,
    priority: float | None = None,
    last_modified: str | datetime.datetime | None = None,
) -> Annotations:
    """An ``annotations`` object; every argument is optional."""
    out: dict[str, object] = {}
    if audience is not None:
        out["audience"] = audience
    if priority is not None:
        out["priority"] = priority
    if last_modified is not None:
        out["lastModified"] = last_modified
    return _annotations(out)


def _annotations(value: object) -> Annotations:
    if not isinstance(value, dict):
        raise TypeError(f"annotations must be a dict with audience, priority, lastModified; not {value!r}")
    out: Annotations = {}
    for key, item in value.items():
        if key == "audience":
            if not isinstance(item, (list, tuple)) or not all(r in _ROLES for r in item):
                raise ValueError(f"annotations.audience must be a list of 'user' and 'assistant', not {item!r}")
            out["audience"] = list(item)
        elif key == "priority":
            if type(item) not in (int, float) or not 0 <= item <= 1:
                raise ValueError(f"annotations.priority must be a number from 0 to 1, not {item!r}")
            out["priority"] = item
        elif key in ("lastModified", "last_modified"):
            if isinstance(item, datetime.datetime):
                if item.tzinfo is None:
                    raise ValueError("annotations.lastModified: give a timezone-aware datetime (ISO 8601 with offset)")
                item = item.isoformat()
            if not isinstance(item, str):
                raise ValueError(f"annotations.lastModified must be an ISO 8601 string or datetime, not {item!r}")
            out["lastModified"] = item
        else:
            raise ValueError(f"unknown annotation {key!r}; annotations are audience, priority and lastModified")
    return out


_SIZE = r"^(any|[1-9][0-9]*x[1-9][0-9]*)$"  # compiled by `re` on first use (icons are rare)
_ICON_KEYS = frozenset({"src", "mimeType", "sizes", "theme"})


def check_icons(icons: Any, what: str = "icons") -> list[dict[str, Any]]:
    """Checked copies of ``icons`` (basic/index.mdx, "icons"); `ValueError` names the problem.

    ``src`` must be an ``https:`` URL or a base64 ``data:`` URI: clients MUST
    reject other schemes, so a server should not offer them. ``sizes`` are
    ``WxH`` or ``any``; ``theme`` is ``light`` or ``dark``.
    """
    if not isinstance(icons, (list, tuple)):
        raise TypeError(f"{what} must be a list of icon dicts")
    out: list[dict[str, Any]] = []
    for i, icon in enumerate(icons):
        where = f"{what}[{i}]"
        if not isinstance(icon, dict):
            raise TypeError(f"{where} must be a dict with src (and mimeType, sizes, theme)")
        unknown = set(icon) - _ICON_KEYS
        if unknown:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)}; an icon has src, mimeType, sizes, theme")
        src = icon.get("src")
        if type(src) is not str or not src:
            raise ValueError(f"{where}: src is required (an https: URL or a data: URI)")
        lowered = src[:8].lower()
        if lowered.startswith("data:"):
            head, comma, _ = src.partition(",")
            if not comma or not head.lower().endswith(";base64"):
                raise ValueError(f"{where}: a data: URI src must carry base64 data (data:image/png;base64,...)")
        elif not lowered.startswith("https://") or len(src) <= 8:
            raise ValueError(
                f"{where}: src {src[:40]!r} must be an https: URL or a data: URI; clients MUST reject other schemes"
            )
        mime = icon.get("mimeType")
        if mime is not None and (type(mime) is not str or "/" not in mime):
            raise ValueError(f"{where}: mimeType must be a MIME type such as 'image/png', not {mime!r}")
        sizes = icon.get("sizes")
        if sizes is not None:
            if not isinstance(sizes, (list, tuple)) or not all(type(s) is str and re.match(_SIZE, s) for s in sizes):
                raise ValueError(f"{where}: sizes must be a list of 'WxH' strings or 'any', not {sizes!r}")
        theme = icon.get("theme")
        if theme is not None and theme not in ("light", "dark"):
            raise ValueError(f"{where}: theme must be 'light' or 'dark', not {theme!r}")
        copy = dict(icon)
        if sizes is not None:
            copy["sizes"] = list(sizes)
        out.append(copy)
    return out


#: A content block being made (each helper's own TypedDict).
_Block = TypeVar("_Block", TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


def _finish(block: _Block, annotations: object, meta: dict[str, Any] | None) -> _Block:
    if annotations is not None:
        block["annotations"] = _annotations(annotations)
    if meta is not None:
        if not isinstance(meta, dict):
            raise TypeError("meta must be a dict")
        block["_meta"] = meta
    return block


def _base64(data: bytes | bytearray | memoryview | str, what: str) -> str:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(data)).decode("ascii")
    if isinstance(data, str):
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{what}: a str must be base64 already; pass bytes to have it encoded") from None
        return data
    raise TypeError(f"{what} must be bytes or a base64 str, not {type(data).__name__}")


def _string(value: Any, what: str) -> str:
    if type(value) is not str or not value:
        raise TypeError(f"{what} must be a non-empty string, not {value!r}")
    return value


def text(value: str, *, annotations: Annotations | dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> TextContent:
    """A text block."""
    if type(value) is not str:
        raise TypeError(f"text() takes a str, not {type(value).__name__}")
    block: TextContent = {"type": "text", "text": value}
    if annotations is None and meta is None:
        return block
    return _finish(block, annotations, meta)


def image(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Annotations | dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> ImageContent:
    """An image block: raw ``bytes`` (encoded here) or base64 text, and its MIME type (``image/png``)."""
    block: ImageContent = {"type": "image", "data": _base64(data, "image data"), "mimeType": _string(mime_type, "mime_type")}
    return _finish(block, annotations, meta)


def audio(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: Annotations | dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> AudioContent:
    """An audio block: raw ``bytes`` (encoded here) or base64 text, and its MIME type (``audio/wav``)."""
    block: AudioContent = {"type": "audio", "data": _base64(data, "audio data"), "mimeType": _string(mime_type, "mime_type")}
    return _finish(block, annotations, meta)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    icons: list[dict[str, Any]] | None = None,
    annotations: Annotations | dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> ResourceLink:
    """A link to a resource the client may read or subscribe to (tools.mdx, "Resource Links")."""
    block: ResourceLink = {"type": "resource_link", "uri": _string(uri, "uri"), "name": _string(name, "name")}
    if title is not None:
        block["title"] = _string(title, "title")
    if description is not None:
        block["description"] = _string(description, "description")
    if mime_type is not None:
        block["mimeType"] = _string(mime_type, "mime_type")
    if size is not None:
        if type(size) is not int or size < 0:
            raise TypeError(f"size must be a non-negative integer (bytes), not {size!r}")
        block["size"] = size
    if icons is not None:
        block["icons"] = check_icons(icons)
    return _finish(block, annotations, meta)


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: Annotations | dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> EmbeddedResource:
    """A resource's contents inside the result: exactly one of ``text`` and ``blob`` (bytes or base64)."""
    if (text is None) == (blob is None):
        raise TypeError("embedded_resource() needs exactly one of text= and blob=")
    resource: dict[str, Any] = {"uri": _string(uri, "uri")}
    if mime_type is not None:
        resource["mimeType"] = _string(mime_type, "mime_type")
    if blob is None:  # then text is not None
        if type(text) is not str:
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        resource["text"] = text
    else:
        resource["blob"] = _base64(blob, "blob")
    block: EmbeddedResource = {"type": "resource", "resource": resource}
    return _finish(block, annotations, meta)

