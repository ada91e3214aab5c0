"""The stdio binding (basic/transports/stdio.mdx): newline-delimited JSON-RPC on a byte stream.

Server side: `serve_stdio` (this process's stdin and stdout) and `serve_streams` (any
asyncio stream pair), both built on `LineServer`, which is fed bytes and writes reply
lines, around the server's `ServerConnection`. Client side: `StdioTransport` (in `.client`), a server launched as a subprocess.
"""

from ._lines import DEFAULT_MAX_IN_FLIGHT, LineServer
from .server import READ_CHUNK, serve_stdio, serve_streams

__all__ = ["LineServer", "serve_stdio", "serve_streams", "DEFAULT_MAX_IN_FLIGHT", "READ_CHUNK"]
