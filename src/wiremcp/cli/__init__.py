"""The ``wiremcp`` command: ``run`` serves a server file, ``demo`` shows the wire.

    wiremcp run examples/echo.py            # serve over stdio
    wiremcp run my_server.py:app            # pick the Server object by name
    wiremcp demo                            # the echo server, envelope by envelope
"""

from __future__ import annotations

import argparse
import logging
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wiremcp", description="A strict, fast MCP implementation.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="serve an MCP server defined in a Python file or module")
    run.add_argument("target", help="path/to/server.py or package.module, optionally :attribute")
    run.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the server's own log, written to stderr (default: WARNING)",
    )

    run.add_argument(
        "--max-message-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="largest message accepted (default: 16 MiB); longer lines get a -32600 reply",
    )

    demo = commands.add_parser("demo", help="run the echo example and show each envelope on the wire")
    demo.add_argument("--no-color", action="store_true", help="never colour the output")

    args = parser.parse_args(argv)
    if args.command == "run":
        from ._run import run_target

        logging.basicConfig(
            stream=sys.stderr, level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        limits = {}
        if args.max_message_size is not None:
            limits["max_message_size"] = args.max_message_size
        return run_target(args.target, **limits)
    if args.command == "demo":
        from ._demo import demo as run_demo

        return run_demo(color=False if args.no_color else None)
    raise AssertionError(args.command)  # pragma: no cover


def _version() -> str:
    from .. import __version__

    return f"wiremcp {__version__}"
