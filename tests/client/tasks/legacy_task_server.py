"""A wiremcp server with task tools that report progress and ask questions, for the 2025-11-25 task tests.

Served over stdio or Streamable HTTP by tests/client/tasks/test_client_tasks_legacy_wiremcp.py
(``wiremcp run``; ``WIREMCP_TASK_STORE`` picks the store).
"""

from __future__ import annotations

import asyncio

import wiremcp
from wiremcp import Context

server = wiremcp.Server("legacy-tasks", version="1.0.0", task_poll_interval_ms=20)

OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@server.tool(task="always")
async def steps(n: int, ctx: Context) -> str:
    """Reports progress ``1..n`` of ``n``, then answers."""
    for i in range(1, n + 1):
        ctx.report_progress(i, n, f"step {i} of {n}")
        await asyncio.sleep(0.02)
    return f"{n} steps done"


@server.tool(task="auto")
async def deploy(target: str, ctx: Context) -> str:
    """Asks for an approval while it runs (2025-11-25: a real elicitation/create on the session)."""
    ctx.report_progress(1, 2, "ready to deploy")
    answer = await ctx.elicit(f"Deploy {target}?", OK, key="ok")
    approved = answer.get("action") == "accept" and answer.get("content", {}).get("ok")
    return f"{target} deployed" if approved else f"{target} kept"


if __name__ == "__main__":
    wiremcp.run(server)
