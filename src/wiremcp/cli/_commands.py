"""The table of ``wiremcp`` commands and the one argument parser built from it.

`COMMANDS` lists every command in the order ``wiremcp --help`` shows them:
its name, the module that implements it and its line in the help. A command
module (`CommandModule`) has two functions: ``add_arguments(parser,
command)`` adds the command's arguments to its subparser, and
``handle(args, tail)`` runs it and returns the exit status (`_output`).

Rules:

* Only the module of the command given is imported, and only its subparser
  is built (``wiremcp run`` starts a server without loading the client, an
  HTTP stack or the other commands' modules); with no known command (``wiremcp
  --help``, a typo) every command is listed, none of their modules loaded.
  `full_parser` builds every subparser (the CLI reference, docs/hooks).
* For a command marked ``tail``, everything after the first ``--`` is its
  TARGET command line, given to ``handle`` whole (``None`` without ``--``);
  the words before it (after the command's name) are kept as ``args.given``,
  to show a line in the right order (`_order`).
* An `OptionsError` from ``handle`` is reported by the command's subparser,
  as argparse reports a bad option.
* Help is formatted without importing `shutil` (`_Formatter`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, cast

from .. import __version__
from ._output import OptionsError

__all__ = ["Command", "COMMANDS", "run", "full_parser"]


class Command:
    """One row of the table: ``name`` runs ``cli/<module>.py``; ``help`` is its line in ``wiremcp --help``."""

    __slots__ = ("name", "module", "help", "tail")

    def __init__(self, name: str, module: str, help: str, *, tail: bool = False) -> None:
        self.name = name
        self.module = module
        self.help = help
        self.tail = tail  # a stdio command line may follow ``--``

    def load(self) -> CommandModule:
        return cast("CommandModule", importlib.import_module(f"{__package__}.{self.module}"))


COMMANDS = (
    Command("run", "_run", "serve an MCP server defined in a Python file or module"),
    Command("demo", "_demo", "run the echo example and show each envelope on the wire"),
    Command("inspect", "_inspect", "connect to a server and show what it offers", tail=True),
    Command("call", "_inspect", "call a tool: TARGET TOOL [key=value ... | '{json arguments}']", tail=True),
    Command("read", "_inspect", "read a resource: TARGET URI", tail=True),
    Command("prompt", "_inspect", "get a prompt: TARGET NAME [key=value ...]", tail=True),
    Command("login", "_login", "log in to an OAuth-protected MCP server in the browser; keep the tokens"),
    Command("logout", "_login", "revoke and forget the tokens kept for an MCP server"),
    Command("auth", "_auth_dev", "a local authorization server for development: auth dev, auth token"),
    Command(
        "install", "_install",
        "add a server to a host's configuration (claude-desktop, claude-code, cursor, vscode, windsurf, mcp-json)",
    ),
    Command("uninstall", "_install", "remove a server from a host's configuration"),
    Command("dev", "_dev", "serve a server, restart it when its files change, show every envelope"),
    Command("tap", "_tap", "a stdio proxy that logs and checks every envelope: tap [--log FILE] -- COMMAND...", tail=True),
    Command("validate", "_validate", "check a capture written by tap (or a JSONL of envelopes)"),
    Command(
        "proxy", "_proxy", "serve another MCP server (URL, file or command; either era) to clients of either era", tail=True
    ),
    Command(
        "check", "_check._command",
        "audit any MCP server: wire rules of both eras, schemas, security: check URL | FILE | -- COMMAND...", tail=True,
    ),
    Command("task", "_task", "follow a task a server runs: task get|cancel|watch TARGET ID", tail=True),
)

if TYPE_CHECKING:  # for type checkers only: none of it runs at a server's start
    from typing import Protocol

    from . import _auth_dev, _demo, _dev, _inspect, _install, _login, _proxy, _run, _tap, _task, _validate
    from ._check import _command as _check_command

    class CommandModule(Protocol):
        """What a command's module provides."""

        def add_arguments(self, parser: argparse.ArgumentParser, command: str) -> None: ...

        def handle(self, args: argparse.Namespace, tail: list[str] | None) -> int: ...

    # every module of the table has the two functions, with these signatures
    _CHECKED: tuple[CommandModule, ...] = (_run, _demo, _inspect, _login, _auth_dev, _install, _dev, _tap, _validate, _proxy, _task, _check_command)


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


def _parser(rows: tuple[Command, ...], with_arguments: bool) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``wiremcp`` parser with a subparser per row (with its arguments, or as a bare line of the help)."""
    parser: argparse.ArgumentParser = _Parser(prog="wiremcp", description="A strict, fast MCP implementation.")
    parser.add_argument("--version", action="version", version=f"wiremcp {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    subparsers: dict[str, argparse.ArgumentParser] = {}
    for row in rows:
        subparsers[row.name] = sub = commands.add_parser(row.name, help=row.help)
        if with_arguments:
            row.load().add_arguments(sub, row.name)
    return parser, subparsers


def full_parser() -> argparse.ArgumentParser:
    """The parser with every command's arguments (imports every command's module)."""
    return _parser(COMMANDS, with_arguments=True)[0]


def _given(argv: list[str]) -> Command | None:
    """The command the first word that is not an option names (``wiremcp`` itself takes no option values)."""
    word = next((word for word in argv if not word.startswith("-")), None)
    return next((row for row in COMMANDS if row.name == word), None)


def run(argv: list[str]) -> int:
    """Parse ``argv`` (the words after ``wiremcp``) and run the command; its exit status."""
    row = _given(argv)
    if row is None:  # no command, or not one of ours: the parser says so (or prints the help, the version)
        _parser(COMMANDS, with_arguments=False)[0].parse_args(argv)
        raise AssertionError(argv)  # pragma: no cover  (parse_args exits)
    tail = None
    if row.tail and argv[:1] == [row.name] and "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    parser, subparsers = _parser((row,), with_arguments=True)
    args = parser.parse_args(argv)
    args.given = argv[1:]
    try:
        return row.load().handle(args, tail)
    except OptionsError as exc:
        subparsers[row.name].error(str(exc))
