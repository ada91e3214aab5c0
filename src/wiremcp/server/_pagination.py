"""Pagination of the server's lists (server/utilities/pagination.mdx): one page and an opaque cursor.

Rules:

* a cursor is opaque to the client: base64 (URL-safe, unpadded) of
  ``o:{offset}``; `paginate` accepts only cursors of that form, anything else is
  -32602 (`InvalidParams`), as is an offset past the end of the list;
* ``size`` None means one page holding everything (no ``nextCursor``).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..jsonrpc import InvalidParams

__all__ = ["paginate"]


def paginate(items: list[Any], cursor: Any, size: int | None) -> tuple[list[Any], str | None]:
    """One page of ``items`` from ``cursor`` (None: the start), and the next cursor, or None at the end."""
    start = 0
    if cursor is not None:
        start = _decode_cursor(cursor)
        if start > len(items):
            raise InvalidParams("Invalid params: the cursor is out of range; list again from the start")
    if size is None:
        return (items if start == 0 else items[start:]), None
    end = start + size
    return items[start:end], (_encode_cursor(end) if end < len(items) else None)


def _encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _decode_cursor(cursor: Any) -> int:
    problem = InvalidParams("Invalid params: the cursor is not one this server issued")
    if type(cursor) is not str:
        raise problem
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise problem from None
    if not raw.startswith("o:") or not raw[2:].isdigit():
        raise problem
    return int(raw[2:])
