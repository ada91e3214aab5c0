"""A server that writes down every tool call it starts, for the client's fault tests.

``work(label, seconds)`` appends ``label`` and a newline to the file named by
``WIREMCP_TEST_JOURNAL`` before it sleeps, so a test can tell which calls
reached a server (and how many times) across a restart; ``journal()`` reads
the file back. Served over stdio or ``--http``.
"""

import asyncio
import os

import wiremcp

server = wiremcp.Server("journal", version="1.0.0")
JOURNAL = os.environ["WIREMCP_TEST_JOURNAL"]


@server.tool()
async def work(label: str, seconds: float = 0.0) -> str:
    """Write the label down, then sleep."""
    with open(JOURNAL, "a") as f:
        f.write(label + "\n")
    await asyncio.sleep(seconds)
    return label


@server.tool()
def journal() -> str:
    """Every label written so far, one per line."""
    with open(JOURNAL) as f:
        return f.read()


if __name__ == "__main__":
    wiremcp.run(server)
