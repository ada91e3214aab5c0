"""The kinds of content blocks (schema.json, ``ContentBlock``): the ``type`` value of each.

A tool result's ``content`` and a prompt message's ``content`` hold these
blocks. The blocks' shapes (the `TypedDict`s) and the helpers that make them
are in `wiremcp.server` (``_content``); this module is the one fact the server
needs to recognise a block, without importing those types.
"""

from __future__ import annotations

__all__ = ["CONTENT_TYPES"]

#: The ``type`` values of content blocks: TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource.
CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
