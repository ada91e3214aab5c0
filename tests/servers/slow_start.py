"""A 2026-07-28 wiremcp server that is slow to start, as a loaded machine makes one.

``WIREMCP_TEST_START_DELAY`` seconds (default 3) pass before it serves; with
``WIREMCP_TEST_START_BANNER`` set it first writes that line to stderr (as
servers that print a banner before their slow imports do), so that the client's
probe clock starts before the server can answer.
"""

import os
import sys
import time

import wiremcp

banner = os.environ.get("WIREMCP_TEST_START_BANNER")
if banner:
    sys.stderr.write(banner + "\n")
    sys.stderr.flush()
time.sleep(float(os.environ.get("WIREMCP_TEST_START_DELAY", "3")))

server = wiremcp.Server("slow-start", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text
