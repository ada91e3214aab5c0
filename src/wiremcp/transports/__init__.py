"""Transports: stdio (newline-delimited JSON-RPC over a byte stream)."""

from ._lines import DEFAULT_MAX_IN_FLIGHT, LineServer
from .stdio import serve_stdio, serve_streams

__all__ = ["LineServer", "serve_stdio", "serve_streams", "DEFAULT_MAX_IN_FLIGHT"]
