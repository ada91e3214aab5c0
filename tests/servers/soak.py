"""examples/everything.py plus three tools the soak test (bench/soak.py) needs.

``soak_echo`` returns its text (large payloads), ``soak_sleep`` waits (requests
to cancel), ``soak_debug`` reports what the process holds: asyncio tasks,
objects tracked by the garbage collector, open descriptors. Served with
``wiremcp run tests/servers/soak.py`` (stdio), or run directly for HTTP with
a chosen legacy-session idle timeout (the CLI has no flag for it):
``python tests/servers/soak.py --port 8123 --session-idle-timeout 20``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import os
import sys
from pathlib import Path

import wiremcp

_EVERYTHING = Path(__file__).resolve().parent.parent.parent / "examples" / "everything.py"
_spec = importlib.util.spec_from_file_location("soak_everything", _EVERYTHING)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _module
_spec.loader.exec_module(_module)

server: wiremcp.Server = _module.server


@server.tool()
def soak_echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def soak_sleep(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool(inline=True)  # on the loop: it counts the loop's tasks
def soak_debug() -> dict[str, int]:
    """What this process holds right now."""
    return {
        "tasks": len(asyncio.all_tasks()),
        "gc_objects": len(gc.get_objects()),
        "fds": len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--session-idle-timeout", type=float, default=None)
    args = parser.parse_args()
    options = {} if args.session_idle_timeout is None else {"session_idle_timeout": args.session_idle_timeout}
    wiremcp.run(server, "http", host="127.0.0.1", port=args.port, **options)
