"""A task server that will not let clients listen to its tasks, for the ``listen=True`` fallback tests.

``LISTEN=refuse``: ``subscriptions/listen`` is answered with an error (-32601,
as from a server that does not offer it). ``LISTEN=none``: it is acknowledged
but agrees to no task id (the acknowledgment's ``taskIds`` is empty).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import wiremcp

server = wiremcp.Server("no-listen", version="1.0.0", task_poll_interval_ms=20)
MODE = os.environ.get("LISTEN", "refuse")


@server.middleware
async def no_task_listening(call: Any, call_next: Any) -> dict[str, Any]:
    if call.method == "subscriptions/listen":
        if MODE == "refuse":
            raise wiremcp.JSONRPCError("Method not found: this server offers no subscriptions/listen", code=-32601)
        notifications = dict(call.params.get("notifications") or {})
        notifications["taskIds"] = []
        call.params = {**call.params, "notifications": notifications}
    result: dict[str, Any] = await call_next(call)
    return result


@server.tool(task="always")
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g}s"


if __name__ == "__main__":
    wiremcp.run(server)
