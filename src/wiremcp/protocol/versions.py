"""Protocol revisions and the two eras (basic/versioning.mdx, "Terminology").

*Modern* revisions (2026-07-28 and later) carry the version, client identity
and capabilities in every request's ``_meta``; *legacy* revisions (2025-11-25
and earlier) open a session with the ``initialize`` handshake.
"""

from __future__ import annotations

import enum

__all__ = ["Era", "LATEST", "MODERN_VERSIONS", "LEGACY_VERSIONS", "era_of"]

#: The newest revision this package implements.
LATEST = "2026-07-28"
#: Modern revisions we serve, newest first.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
#: Legacy (initialize-handshake) revisions we know, newest first. 2024-11-05 is the revision of the
#: deprecated HTTP+SSE transport, still the only one some deployed clients speak (official mcp <= 1.7).
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


class Era(enum.Enum):
    """The two eras of MCP: ``MODERN`` (2026-07-28: stateless, ``_meta`` on every request) and ``LEGACY`` (the ``initialize`` handshake)."""

    MODERN = "modern"
    LEGACY = "legacy"


def era_of(version: str) -> Era | None:
    """The era of a revision we know, or ``None``."""
    if version in MODERN_VERSIONS:
        return Era.MODERN
    if version in LEGACY_VERSIONS:
        return Era.LEGACY
    return None
