"""Deploying behind nginx with several workers (docs/tutorials/deploy.md): a shared stock board.

    export WIREMCP_REDIS_URL=redis://127.0.0.1:6379/0
    export WIREMCP_STATE_KEY=a-long-random-key-shared-by-every-worker
    wiremcp run examples/tutorials/deploy.py --http --port 8000 --workers 2

Any worker answers any request: the tools keep nothing in the process. A
change announced on one worker (``restock``) reaches every client listening
for it, on whichever worker its stream is, through Redis pub/sub. Each tool
says which process ran it, so that you can see the requests spread.
"""

from __future__ import annotations

import os

import wiremcp

server = wiremcp.Server("stock", version="1.0.0")


@server.tool(inline=True)
def worker() -> str:
    """The id of the worker process that answered."""
    return str(os.getpid())


@server.tool(inline=True)
def restock(item: str) -> str:
    """Announce that ``stock://ITEM`` changed (notifications/resources/updated); returns the worker's id."""
    server.notify_resource_updated(f"stock://{item}")
    return str(os.getpid())


@server.resource("stock://{item}")
def stock(item: str) -> str:
    """The stock of ``item`` (a real server would read it from the shared database)."""
    return f"{item}: in stock"


if __name__ == "__main__":
    wiremcp.run(server)
