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
import shlex
import sys
from typing import Any

__all__ = ["add_parser", "run_proxy"]


def add_parser(commands: Any) -> None:
    proxy = commands.add_parser(
        "proxy", help="serve another MCP server (URL, file or command; either era) to clients of either era"
    )
    proxy.add_argument("target", nargs="?", help="the upstream: a URL, path/to/server.py, or a command (or -- COMMAND...)")
    proxy.add_argument(
        "--header",
        action="append",
        metavar="NAME:VALUE",
        help="a header the proxy sends to an HTTP upstream (its own credentials), repeatable",
    )
    proxy.add_argument("--name", default="wiremcp-proxy", help="the proxy's server name (default: wiremcp-proxy)")
    proxy.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the proxy's own log, written to stderr (default: WARNING)",
    )
    where = proxy.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (the default)")
    where.add_argument("--http", action="store_true", help="serve Streamable HTTP (needs the [http] extra)")
    proxy.add_argument("--host", default="127.0.0.1", help="address to bind with --http (default: 127.0.0.1)")
    proxy.add_argument("--port", type=int, default=8000, help="port with --http; 0 picks a free one (default: 8000)")
    proxy.add_argument("--path", default="/mcp", help="path of the MCP endpoint with --http (default: /mcp)")


def run_proxy(args: argparse.Namespace, tail: list[str] | None) -> int:
    import logging

    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if tail:
        if args.target:
            print("wiremcp proxy: give the upstream either as TARGET or after --, not both", file=sys.stderr)
            return 2
        target = shlex.join(tail)
    elif args.target:
        target = args.target
    else:
        print("wiremcp proxy: name the upstream server: a URL, a .py file, or -- COMMAND", file=sys.stderr)
        return 2
    headers: dict[str, str] = {}
    for header in args.header or ():
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            print(f"wiremcp proxy: --header {header!r} is not NAME:VALUE", file=sys.stderr)
            return 2
        headers[name.strip()] = value.strip()
    from .. import run
    from ..bridge import proxy

    try:
        server = proxy(target, headers=headers or None, name=args.name)
    except ValueError as exc:
        print(f"wiremcp proxy: {exc}", file=sys.stderr)
        return 2
    try:
        if args.http:
            run(server, "http", host=args.host, port=args.port, path=args.path, log_level=args.log_level.lower())
        else:
            run(server)
    except KeyboardInterrupt:
        return 130
    return 0
