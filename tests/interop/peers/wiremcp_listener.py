"""A wiremcp client that opens ``subscriptions/listen`` and leaves it open, as hosts do when they exit.

``python wiremcp_listener.py HOW COMMAND ARGS…``: connects over stdio to COMMAND, opens a listen
stream for tool-list changes, waits for its acknowledgement, prints ``listening`` and then, with HOW
``exit``, leaves at once without cancelling (``os._exit``: no clean-up, like a host that quits), or,
with ``wait``, waits to be killed. Run by the tap tests of issue 24 (tests/interop/test_tap_hangup.py).
"""

from __future__ import annotations

import asyncio
import os
import sys

from wiremcp.client import Client


async def main(how: str, command: list[str]) -> None:
    async with Client.stdio(command[0], command[1:]) as client:
        async with client.listen(tools=True):
            print("listening", flush=True)
            if how == "exit":
                os._exit(0)
            await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
