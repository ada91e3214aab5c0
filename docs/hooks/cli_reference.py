"""The ``wiremcp`` subcommands, read from the argument parser itself.

`commands` walks the parser built from the CLI's table of commands
(`wiremcp.cli._commands.full_parser`, every command with its arguments), so
the CLI reference (docs/reference/cli.md, written by docs/hooks/generated.py)
lists exactly the commands the parser knows, nested ones (``task get``)
included, each with the ``--help`` it prints.
"""

from __future__ import annotations

import argparse


def commands() -> list[list[str]]:
    """``[[]]`` for ``wiremcp`` itself, then ``[name]`` for each subcommand, in the order of ``--help``."""
    from wiremcp.cli._commands import full_parser

    found: list[list[str]] = [[]]

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for listed in action._choices_actions:  # the subcommands --help lists, in its order
                    found.append([*words, listed.dest])
                    walk(action.choices[listed.dest], [*words, listed.dest])

    walk(full_parser(), [])
    return found
