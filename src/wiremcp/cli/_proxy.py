"""``wiremcp proxy TARGET``: serve any MCP server (a URL, a .py file, a command) to clients of either era.

    wiremcp proxy https://mcp.example.com/mcp              # on stdio, for a host that spawns it
    wiremcp proxy tests/servers/modern_only.py --http      # at http://127.0.0.1:8000/mcp
    wiremcp proxy --http -- npx -y @some/server            # a command after --

The proxy's own credentials for an HTTP upstream come from ``--header``
(repeatable); the downstream client's are never forwarded (see
`wiremcp.bridge`).
"""

from __future__ import annotations

import argparse
import logging
import shlex
import sys

from .. import run
from ..bridge import proxy
from ..client import ClientError
from ._client import unreachable
from ._output import INTERRUPTED, OK, fail, missing_extra, quiet_retries

__all__ = ["add_arguments", "handle"]


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp proxy``."""
    parser.add_argument("target", nargs="?", help="the upstream: a URL, path/to/server.py, or a command (or -- COMMAND...)")
    parser.add_argument(
        "--header",
        action="append",
        metavar="NAME:VALUE",
        help="a header the proxy sends to an HTTP upstream (its own credentials), repeatable",
    )
    parser.add_argument("--name", help="the proxy's server name (default: the upstream's, as 'NAME (via wiremcp proxy)')")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the proxy's own log, written to stderr (default: WARNING)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (the default)")
    where.add_argument("--http", action="store_true", help="serve Streamable HTTP (needs the [http] extra)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port with --http; 0 picks a free one (default: 8000)")
    parser.add_argument("--path", default="/mcp", help="path of the MCP endpoint with --http (default: /mcp)")


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp proxy``: the upstream is TARGET or the command after ``--``; the exit status."""
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_retries()  # a failed upstream is said once (below)
    if tail:
        if args.target:
            return fail("proxy", "give the upstream either as TARGET or after --, not both")
        target = shlex.join(tail)
    elif args.target:
        target = args.target
    else:
        return fail("proxy", "name the upstream server: a URL, a .py file, or -- COMMAND")
    problem = (missing_extra("--http", "uvicorn") if args.http else None) or (
        missing_extra("a URL upstream", "aiohttp") if target.startswith(("http://", "https://")) else None
    )
    if problem is None and args.http:
        from ._run import address_problem  # --http only

        problem = address_problem(args.host, args.port)
    if problem is not None:
        return fail("proxy", problem)
    headers: dict[str, str] = {}
    for header in args.header or ():
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            return fail("proxy", f"--header {header!r} is not NAME:VALUE")
        headers[name.strip()] = value.strip()
    try:
        server = proxy(target, headers=headers or None, name=args.name)
    except ValueError as exc:
        return fail("proxy", str(exc))
    try:
        if args.http:
            run(server, "http", host=args.host, port=args.port, path=args.path, log_level=args.log_level.lower())
        else:
            run(server)
    except KeyboardInterrupt:
        return INTERRUPTED
    except ClientError as exc:  # the upstream, reached when the proxy starts
        return fail("proxy", unreachable(exc, target) or f"the upstream failed: {exc}")
    return OK
