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
    wiremcp install claude-desktop examples/echo.py   # put a server into a host (docs/hosts.md)
    wiremcp dev examples/echo.py            # serve, reload on change, show every envelope
    wiremcp tap --log wire.jsonl -- python server.py  # a checking stdio proxy (docs/tap.md)
    wiremcp validate wire.jsonl             # check a capture
    wiremcp proxy https://mcp.example.com/mcp   # another server, to clients of either era (docs/proxy.md)
    wiremcp task watch https://mcp.example.com/mcp TASK-ID   # follow a task (get, cancel, watch)
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from ._run_caps import CAP_OPTIONS, add_cap_options, cap_options

__all__ = ["main", "install_hint"]


def install_hint(extra: str) -> str:
    """How to install an extra, from a clone today and from the index once published (README, "Installing")."""
    return f"pip install -e '.[{extra}]' in a clone of wiremcp, or pip install 'wiremcp[{extra}]' once it is published"


#: Client subcommands (`_inspect`); a stdio TARGET follows ``--``.
_CLIENT_COMMANDS = ("inspect", "call", "read", "prompt")
#: Commands whose TARGET may be a command line after ``--``.
_TAIL_COMMANDS = (*_CLIENT_COMMANDS, "proxy", "task")


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, without importing `shutil` for the terminal width.

    argparse makes a formatter for every ``add_argument`` (to check the
    metavar), and its default width comes from ``shutil.get_terminal_size``:
    importing `shutil` (with ``bz2``, ``lzma``, ``fnmatch``) was 7 M of the
    ~16 M instructions argparse added to a server's start. The width is read
    the same way (``$COLUMNS``, then the terminal, then 80), once.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


_width: list[int] = []


def _columns() -> int:
    if not _width:
        try:
            columns = int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            columns = 0
        if columns <= 0:
            stream = sys.__stdout__
            try:
                columns = os.get_terminal_size(stream.fileno()).columns if stream is not None else 0
            except (AttributeError, ValueError, OSError):
                columns = 0
        _width.append(columns if columns > 0 else 80)
    return _width[0]


class _Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` with `_Formatter`; subcommand parsers are of the same class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def main(argv: list[str] | None = None) -> int:
    """The ``wiremcp`` command; its exit status.

    Output piped into a reader that stops early (``wiremcp demo | head -2``)
    ends the command quietly, with the status a program killed by SIGPIPE
    has (141), not a BrokenPipeError traceback.
    """
    try:
        status = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
    except BrokenPipeError:
        _stdout_to_devnull()
        return _BROKEN_PIPE
    return status


#: The exit status of a command whose standard output was closed by its reader (128 + SIGPIPE).
_BROKEN_PIPE = 141


def _stdout_to_devnull() -> None:
    """Point fd 1 at /dev/null: what is left in Python's buffer is dropped without a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    tail = None
    if argv and argv[0] in _WIRE_COMMANDS:
        return _wire_command(argv)
    if argv and argv[0] in _TAIL_COMMANDS and "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    parser = _Parser(prog="wiremcp", description="A strict, fast MCP implementation.")
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="serve an MCP server defined in a Python file or module")
    run.add_argument("target", help="path/to/server.py or package.module, optionally :attribute")
    run.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,  # --log-level info, as uvicorn spells it, or INFO
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the server's own log, written to stderr (default: WARNING)",
    )
    run.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="json: every stderr log line is a JSON object, plus one line per request (docs/observability.md)",
    )

    run.add_argument(
        "--max-message-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="largest message accepted (default: 16 MiB); longer lines get a -32600 reply (HTTP: 413)",
    )
    for flag, metavar, what in TASK_LIMIT_FLAGS:
        run.add_argument(flag, type=int, default=None, metavar=metavar, help=what)
    http = run.add_argument_group("Streamable HTTP (needs the [http] extra)")
    http.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    http.add_argument("--host", help="address to bind (default: 127.0.0.1)")
    http.add_argument("--port", type=int, help="port to bind; 0 picks a free one (default: 8000)")
    http.add_argument("--path", help="path of the MCP endpoint (default: /mcp)")
    http.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the port (needs WIREMCP_STATE_KEY; share state with WIREMCP_REDIS_URL)",
    )
    http.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host header to accept, repeatable; replaces the local defaults ('*' accepts any)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="an Origin to accept, e.g. https://app.example.com, repeatable; replaces the local defaults",
    )
    http.add_argument(
        "--legacy-sse",
        action="store_true",
        default=None,
        help="also serve the deprecated 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages) for old hosts",
    )
    http.add_argument(
        "--metrics",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (needs the [otel] extra; 0 picks a free port)",
    )
    add_cap_options(http)  # the endpoint's caps (_run_caps)

    if argv[:1] != ["run"]:  # `wiremcp run ...` parses with the run subcommand alone: a server starts sooner
        demo = commands.add_parser("demo", help="run the echo example and show each envelope on the wire")
        demo.add_argument("--no-color", action="store_true", help="never colour the output")

        from ._inspect import add_parsers
        from ._login import add_parsers as add_login_parsers
        from ._proxy import add_parser as add_proxy_parser
        from ._task import add_parser as add_task_parser

        add_parsers(commands)
        add_login_parsers(commands)
        _add_wire_parsers(commands)
        add_proxy_parser(commands)
        add_task_parser(commands)
        from ._auth_dev import add_arguments as add_auth_arguments  # moves to the table of commands (cli-table)

        add_auth_arguments(commands.add_parser("auth", help="a local authorization server for development: auth dev, auth token"), "auth")

    args = parser.parse_args(argv)
    if args.command == "run":
        from ._run import export_task_limits, run_target

        export_task_limits(args)

        if not args.http:
            given = [f"--{name.replace('_', '-')}" for name in _HTTP_ONLY if getattr(args, name) is not None]
            if given:
                verb = "applies" if len(given) == 1 else "apply"
                run.error(f"{', '.join(given)} {verb} only with --http (stdio has no address)")

        logging.basicConfig(
            stream=sys.stderr, level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        limits = {}
        if args.http:
            import importlib.util

            if importlib.util.find_spec("uvicorn") is None:
                print(f"wiremcp run: --http needs uvicorn: {install_hint('http')}", file=sys.stderr)
                return 2
            limits = {
                "host": "127.0.0.1" if args.host is None else args.host,
                "port": 8000 if args.port is None else args.port,
                "path": "/mcp" if args.path is None else args.path,
                "log_level": args.log_level.lower(),
            }
            if args.max_message_size is not None:
                limits["max_body_size"] = args.max_message_size
            if args.allow_host:
                limits["allowed_hosts"] = args.allow_host
            if args.allow_origin:
                limits["allowed_origins"] = args.allow_origin
            limits.update(cap_options(args))
            if args.legacy_sse:
                if args.workers > 1:  # its sessions live in one process: a POST must reach the worker holding the stream
                    run.error("--legacy-sse serves its sessions from one process; it does not combine with --workers")
                limits["legacy_sse"] = True
            return run_target(
                args.target, "http", workers=args.workers, log_format=args.log_format, metrics_port=args.metrics, **limits
            )
        if args.max_message_size is not None:
            limits["max_message_size"] = args.max_message_size
        return run_target(args.target, workers=args.workers, log_format=args.log_format, **limits)
    if args.command == "demo":
        from ._demo import demo as run_demo

        return run_demo(color=False if args.no_color else None)
    if args.command in ("login", "logout"):
        from ._login import run_login, run_logout

        logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
        return run_login(args) if args.command == "login" else run_logout(args)
    if args.command == "proxy":
        from ._proxy import run_proxy

        return run_proxy(args, tail)
    if args.command == "task":
        from ._task import run_task

        logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
        return run_task(args, tail)
    if args.command == "auth":
        from ._auth_dev import handle as run_auth

        return run_auth(args, None)
    if args.command in _CLIENT_COMMANDS:
        from ._inspect import run_command

        logging.basicConfig(stream=sys.stderr, level="WARNING", format="%(levelname)s %(name)s: %(message)s")
        return run_command(args, tail)
    raise AssertionError(args.command)  # pragma: no cover


#: ``wiremcp run`` flags of the task caps (docs/limits.md); each becomes its ``WIREMCP_*`` setting (`_run`).
TASK_LIMIT_FLAGS = (
    ("--max-tasks", "N", "live tasks the task store keeps; past it a new task gets -32000 (HTTP 503) (default: 10000)"),
    ("--max-tasks-per-owner", "N", "live tasks one caller may hold; past it -32000 (HTTP 429) (default: 1000)"),
    ("--task-max-ttl", "MS", "longest TTL a task is kept, in ms; a longer requested TTL is clamped (default: 86400000)"),
)
#: ``run`` options that mean something only with ``--http``.
_HTTP_ONLY = ("host", "port", "path", "allow_host", "allow_origin", "metrics", "legacy_sse", *CAP_OPTIONS)


def _version() -> str:
    from .. import __version__

    return f"wiremcp {__version__}"


# -- install, uninstall, dev, tap, validate (docs/hosts.md, docs/tap.md) ------------------------

#: Host and wire-tool subcommands; each parses its own arguments (`tap` takes a command after ``--``).
_WIRE_COMMANDS = ("install", "uninstall", "dev", "tap", "validate")


def _add_wire_parsers(commands: "argparse._SubParsersAction[Any]") -> None:
    """Listed in ``wiremcp --help``; `_wire_command` parses their arguments."""
    from ._install import add_parsers as add_install
    from ._dev import add_parser as add_dev

    add_install(commands)
    add_dev(commands)
    tap = commands.add_parser("tap", help="a stdio proxy that logs and checks every envelope: tap [--log FILE] -- COMMAND...")
    tap.add_argument("--log", metavar="FILE", help="write the records here (default: stderr); truncated at start")
    tap.add_argument("server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS", help="the stdio server to run")
    validate = commands.add_parser("validate", help="check a capture written by tap (or a JSONL of envelopes)")
    validate.add_argument("file", help="the capture; - reads stdin")


def _wire_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wiremcp")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_wire_parsers(commands)
    tail: list[str] = []
    if argv[0] == "tap" and "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if args.command == "tap":
        from ._tap import tap_main

        command = tail or [word for word in args.server_command if word != "--"]
        return tap_main(command, args.log)
    if args.command == "validate":
        from ._validate import validate_file

        return validate_file(args.file)
    if args.command in ("install", "uninstall"):
        from ._install import run_command as run_install

        return run_install(args)
    from ._dev import run_dev

    return run_dev(args)
