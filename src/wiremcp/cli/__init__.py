"""The ``wiremcp`` command: ``run`` serves a server file, ``demo`` shows the wire.

    wiremcp run examples/echo.py            # serve over stdio
    wiremcp run my_server.py:app            # pick the Server object by name
    wiremcp run examples/echo.py --http     # serve Streamable HTTP at http://127.0.0.1:8000/mcp
    wiremcp demo                            # the echo server, envelope by envelope
    wiremcp inspect examples/echo.py        # a client: what a server offers (URL, file, or -- command)
    wiremcp call examples/echo.py echo '{"text": "hi"}'
    wiremcp login https://mcp.example.com/mcp   # OAuth 2.1 in the browser; tokens kept on disk
    wiremcp call --auth https://mcp.example.com/mcp whoami
    wiremcp logout https://mcp.example.com/mcp
    wiremcp auth dev                        # a local authorization server for development (docs/auth.md)
    wiremcp install claude-desktop examples/echo.py   # put a server into a host (docs/hosts.md)
    wiremcp dev examples/echo.py            # serve, reload on change, show every envelope
    wiremcp tap --log wire.jsonl -- python server.py  # a checking stdio proxy (docs/tap.md)
    wiremcp validate wire.jsonl             # check a capture
    wiremcp proxy https://mcp.example.com/mcp   # another server, to clients of either era (docs/proxy.md)
    wiremcp task watch https://mcp.example.com/mcp TASK-ID   # follow a task (get, cancel, watch)

Layout: `_commands` holds the table of commands and builds the one parser
from it; each command is a module with ``add_arguments`` and ``handle``
(``_run``, ``_demo``, ``_inspect`` for inspect/call/read/prompt, ``_login``,
``_auth_dev`` for auth dev/token, ``_install``, ``_dev``, ``_tap``, ``_validate``, ``_proxy``, ``_task``);
`_output` is what they all print and the exit statuses; `_client` is how
the client commands reach a server. No module of cli/ imports this one.
"""

from __future__ import annotations

import os
import sys

from ._commands import run
from ._output import BROKEN_PIPE, install_hint

__all__ = ["main", "install_hint"]


def main(argv: list[str] | None = None) -> int:
    """The ``wiremcp`` command; its exit status.

    The commands are the rows of `_commands.COMMANDS`. Output piped into a
    reader that stops early (``wiremcp demo | head -2``) ends the command
    quietly, with the status a program killed by SIGPIPE has (141), not a
    BrokenPipeError traceback.
    """
    try:
        status = run(sys.argv[1:] if argv is None else list(argv))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except BrokenPipeError:
        _stdout_to_devnull()
        return BROKEN_PIPE
    return status


def _stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null: what is left in Python's buffer is dropped without a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
