"""A long job as a task: progress, an approval step, cancellation (docs/tasks.md).

Serve it with

    wiremcp run examples/tasks.py                 # stdio; tasks kept in SQLite under $XDG_STATE_HOME
    wiremcp run examples/tasks.py --http          # Streamable HTTP

A client that declares the ``io.modelcontextprotocol/tasks`` extension gets a
task handle for ``export_report`` at once and polls ``tasks/get``: the
status message follows the progress, the task asks for approval
(``input_required``; the client answers with ``tasks/update``), and
``tasks/cancel`` stops it wherever it is. A 2025-11-25 client calls it with
``params.task``, and the same function serves it.
"""

from __future__ import annotations

import asyncio
import dataclasses

import wiremcp
from wiremcp import Context

server = wiremcp.Server("tasks-demo", version="1.0.0")


@dataclasses.dataclass
class Approval:
    publish: bool
    note: str = ""


@server.tool(task="always")
async def export_report(rows: int, ctx: Context, batch: int = 250) -> str:
    """Export ``rows`` rows, then ask whether to publish the report."""
    exported = 0
    try:
        while exported < rows:
            await asyncio.sleep(0.01)  # one batch of real work
            exported = min(rows, exported + batch)
            ctx.report_progress(exported, rows, f"exported {exported} of {rows} rows")
    except asyncio.CancelledError:
        # tasks/cancel: clean up, then let the cancellation through
        print(f"export_report: cancelled after {exported} rows", flush=True, file=__import__("sys").stderr)
        raise
    answer = await ctx.elicit(f"Publish the report of {rows} rows?", Approval)
    approval = answer.value  # an Approval when the user accepted, else None
    if approval is None or not approval.publish:
        return f"Exported {rows} rows; the report stays private."
    return f"Exported {rows} rows and published the report{': ' + approval.note if approval.note else ''}."


@server.tool(task=lambda arguments: arguments.get("rows", 0) > 1000)
def count_rows(rows: int) -> str:
    """Quick for small tables, a task for big ones (decided per call)."""
    return f"{rows} rows"


if __name__ == "__main__":
    wiremcp.run(server)
