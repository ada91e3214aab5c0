"""A wiremcp client that opens ``subscriptions/listen`` and leaves it open, as hosts do when they exit.

``python wiremcp_listener.py HOW COMMAND ARGS…``: connects over stdio to COMMAND, opens a listen
stream for tool-list changes, waits for its acknowledgement, prints ``listening`` and then, with HOW
``exit``, leaves at once without cancelling (``os._exit``: no clean-up, like a host that quits),
with ``terminate``, ends the server process with SIGTERM while its stdin stays open (as Claude Code
does when it exits) and waits for it to end, or, with ``wait``, waits to be killed. Run by the tap tests of issue 24 (tests/interop/test_tap_hangup.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from wiremcp.client import Client


async def main(how: str, command: list[str]) -> None:
    async with Client.stdio(command[0], command[1:]) as client:
        async with client.listen(tools=True):
            print("listening", flush=True)
            if how == "exit":
                os._exit(0)
            if how == "terminate":
                pid = client.transport.pid  # type: ignore[attr-defined]
                os.kill(pid, signal.SIGTERM)
                while True:  # the process is reaped by the transport; poll until it is gone
                    if client.transport.returncode is not None:  # type: ignore[attr-defined]
                        print("ended", flush=True)
                        os._exit(0)
                    await asyncio.sleep(0.05)
            await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
