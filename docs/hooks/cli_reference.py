"""The ``wiremcp`` subcommands, read from the argument parsers themselves.

`commands` builds the parser of ``wiremcp --help`` (every subcommand is added
to it) and records each subcommand as it is added, so the CLI reference
(docs/reference/cli.md, filled in by docs/hooks/site.py) lists exactly the
commands the parsers know, each with the ``--help`` they print.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any


def commands() -> list[list[str]]:
    """``[[]]`` for ``wiremcp`` itself, then ``[name]`` for each subcommand, in the order of ``--help``."""
    from wiremcp.cli import main

    found: list[list[str]] = [[]]
    original = argparse._SubParsersAction.add_parser

    def recording(self: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser = original(self, name, **kwargs)
        words = parser.prog.split()[1:]
        if words not in found and kwargs.get("help") is not argparse.SUPPRESS:
            found.append(words)
        return parser

    argparse._SubParsersAction.add_parser = recording  # type: ignore[method-assign]  # restored below
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main(["--help"])
    finally:
        argparse._SubParsersAction.add_parser = original  # type: ignore[method-assign]
    return found
