"""Typed views of results: each wraps the result dict as received, nothing copied.

A view is a slotted object holding ``raw`` (the ``result`` object exactly as
decoded) with properties for the fields the specification defines, so that
building one costs a single allocation whatever the size of the result, and
anything the typed surface does not cover is still at hand in ``raw``.
Absent optional fields read as ``None`` (or an empty list for arrays).
"""

from __future__ import annotations

from typing import Any

from ..protocol.meta import SERVER_INFO
from ._errors import ToolCallError

__all__ = [
    "Result",
    "DiscoverResult",
    "CallToolResult",
    "ReadResourceResult",
    "GetPromptResult",
    "CompleteResult",
    "Page",
]


class Result:
    """Any result: ``raw`` is the decoded ``result`` object."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.raw.get("_meta")
        return meta if type(meta) is dict else {}

    @property
    def server_info(self) -> dict[str, Any] | None:
        """``_meta["io.modelcontextprotocol/serverInfo"]``, when the server sent it."""
        return self.meta.get(SERVER_INFO)

    @property
    def ttl_ms(self) -> int | None:
        ttl = self.raw.get("ttlMs")
        return ttl if type(ttl) is int else None

    @property
    def cache_scope(self) -> str | None:
        return self.raw.get("cacheScope")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result) or type(other) is not type(self):
            return NotImplemented
        return self.raw == other.raw

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


class DiscoverResult(Result):
    """server/discover.mdx, DiscoverResult (or the legacy ``initialize`` result, seen the same way)."""

    __slots__ = ()

    @property
    def supported_versions(self) -> list[str]:
        versions = self.raw.get("supportedVersions")
        if versions is None and "protocolVersion" in self.raw:  # legacy InitializeResult
            return [self.raw["protocolVersion"]]
        return list(versions or [])

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.raw.get("capabilities") or {}

    @property
    def instructions(self) -> str | None:
        return self.raw.get("instructions")

    @property
    def server_info(self) -> dict[str, Any] | None:
        info = self.raw.get("serverInfo")  # legacy InitializeResult
        return info if info is not None else self.meta.get(SERVER_INFO)


def _text_of(content: list[dict[str, Any]]) -> str:
    return "\n".join(block["text"] for block in content if block.get("type") == "text" and "text" in block)


class CallToolResult(Result):
    """server/tools.mdx, CallToolResult. ``is_error`` marks a tool execution error."""

    __slots__ = ()

    @property
    def content(self) -> list[dict[str, Any]]:
        return self.raw.get("content") or []

    @property
    def structured_content(self) -> Any:
        return self.raw.get("structuredContent")

    @property
    def is_error(self) -> bool:
        return self.raw.get("isError") is True

    @property
    def text(self) -> str:
        """The text of every text content block, joined by newlines."""
        return _text_of(self.content)

    def raise_for_error(self) -> CallToolResult:
        """Raise `ToolCallError` if the tool reported an error; return ``self`` otherwise."""
        if self.raw.get("isError") is True:
            raise ToolCallError(self)
        return self


class ReadResourceResult(Result):
    """server/resources.mdx, ReadResourceResult."""

    __slots__ = ()

    @property
    def contents(self) -> list[dict[str, Any]]:
        return self.raw.get("contents") or []

    @property
    def text(self) -> str:
        return "\n".join(c["text"] for c in self.contents if type(c.get("text")) is str)


class GetPromptResult(Result):
    """server/prompts.mdx, GetPromptResult."""

    __slots__ = ()

    @property
    def description(self) -> str | None:
        return self.raw.get("description")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.raw.get("messages") or []


class CompleteResult(Result):
    """server/utilities/completion.mdx, CompleteResult (``completion`` unpacked)."""

    __slots__ = ()

    @property
    def values(self) -> list[str]:
        return (self.raw.get("completion") or {}).get("values") or []

    @property
    def total(self) -> int | None:
        return (self.raw.get("completion") or {}).get("total")

    @property
    def has_more(self) -> bool:
        return (self.raw.get("completion") or {}).get("hasMore") is True


class Page(Result):
    """One page of a paginated list: ``items`` under the method's key, ``next_cursor``."""

    __slots__ = ("key",)

    def __init__(self, raw: dict[str, Any], key: str) -> None:
        self.raw = raw
        self.key = key

    @property
    def items(self) -> list[dict[str, Any]]:
        return self.raw.get(self.key) or []

    @property
    def next_cursor(self) -> str | None:
        return self.raw.get("nextCursor")
