"""A task server whose SQLite store counts the calls it gets, for the polling measurement of test_tasks_limits.py.

``COUNTED_DB`` is the SQLite file. The ``store_calls`` tool (never a task:
it makes no store call) answers the calls counted so far, by method, so the
test reads them over the same stdio connection. The counting is a wrapper
that forwards every attribute to the real `SQLiteTaskStore`: the server uses
the store exactly as it would without it.
"""

from __future__ import annotations

import collections
import json
import os
from typing import Any

import wiremcp
from wiremcp import Context
from wiremcp.server.tasks import SQLiteTaskStore

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


class CountingStore:
    """The real store, every method call counted (a call is one store query, or one transaction)."""

    def __init__(self, store: SQLiteTaskStore) -> None:
        self._store = store
        self.calls: collections.Counter[str] = collections.Counter()

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._store, name)
        if not callable(real):
            return real

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return real(*args, **kwargs)

        return counted


store = CountingStore(SQLiteTaskStore(os.environ["COUNTED_DB"]))
server = wiremcp.Server("counted", version="1", task_store=store)  # type: ignore[arg-type]  # a forwarding wrapper


@server.tool(task="auto")
async def gate(ctx: Context) -> str:
    """Waits for a confirmation (input_required) until answered."""
    answer = await ctx.elicit("Go on?", CONFIRM, key="confirm")
    return f"confirmed={answer.get('content', {}).get('confirm')}"


@server.tool()
def store_calls() -> str:
    """The store calls counted so far, by method, as JSON."""
    return json.dumps(dict(store.calls))


if __name__ == "__main__":
    wiremcp.run(server)
