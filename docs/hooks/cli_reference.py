"""The ``wiremcp`` subcommands, read from the argument parser itself.

`commands` lists ``[]`` for ``wiremcp`` and the words of each subcommand the
parser lists in its help (``task get`` too), in the order of ``--help``; the
CLI reference (docs/reference/cli.md, written by docs/hooks/generated.py) shows
each one's ``--help``, so it lists exactly the commands the parser knows.

The parser is the one ``wiremcp.cli._commands.full_parser()`` builds (the table
of commands, every subparser added). A tree without that function builds its
parser inside ``wiremcp.cli.main``; there the subcommands are recorded while
``wiremcp --help`` builds it (`_recorded`), which gives the same list.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any


def commands() -> list[list[str]]:
    """``[[]]`` for ``wiremcp`` itself, then the words of each subcommand, in the order of ``--help``."""
    try:
        from wiremcp.cli._commands import full_parser  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return _recorded()
    return _walk(full_parser(), [])


def _walk(parser: argparse.ArgumentParser, words: list[str]) -> list[list[str]]:
    """``words``, then each subcommand ``parser`` lists in its help, depth first."""
    found = [words]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for listed in action._choices_actions:
                found += _walk(action.choices[listed.dest], [*words, listed.dest])
    return found


def _recorded() -> list[list[str]]:
    """The subcommands added while ``wiremcp --help`` builds its parser (a tree without ``full_parser``)."""
    from wiremcp.cli import main

    found: list[list[str]] = [[]]
    original = argparse._SubParsersAction.add_parser

    def recording(self: Any, name: str, **kwargs: Any) -> Any:
        parser = original(self, name, **kwargs)
        words = parser.prog.split()[1:]
        if words not in found and kwargs.get("help") is not argparse.SUPPRESS:
            found.append(words)
        return parser

    setattr(argparse._SubParsersAction, "add_parser", recording)  # restored below
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
    finally:
        setattr(argparse._SubParsersAction, "add_parser", original)
    return found
