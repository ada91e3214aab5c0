"""The CLI's shape: one table of commands, one parser, each command loading only its own module, no import cycle.

The behaviour of each command is tested where the command is (test_cli_edges.py,
test_tap.py, test_install.py, ...); these tests hold the structure that keeps
``wiremcp run`` quick to start and the modules of cli/ independent of each other.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wiremcp.cli._commands import COMMANDS, full_parser
from wiremcp.cli._install import HOSTS

CLI = Path(__file__).resolve().parents[2] / "src" / "wiremcp" / "cli"


def _loaded_after(argv: list[str]) -> set[str]:
    """The wiremcp modules loaded by ``wiremcp ARGV`` (run in a fresh interpreter, up to the command's start)."""
    code = (
        "import contextlib, io, sys\n"
        "from wiremcp.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('wiremcp')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def _command_modules(loaded: set[str]) -> set[str]:
    modules = {f"wiremcp.cli.{row.module}" for row in COMMANDS}
    return loaded & modules


@pytest.mark.parametrize(
    ("argv", "own"),
    [
        (["run", "--help"], {"wiremcp.cli._run"}),
        (["validate", "--help"], {"wiremcp.cli._validate"}),
        (["tap", "--help"], {"wiremcp.cli._tap"}),
        (["install", "--help"], {"wiremcp.cli._install"}),
        (["--help"], set()),
        (["no-such-command"], set()),
    ],
)
def test_a_command_loads_its_own_module_and_no_other_commands(argv: list[str], own: set[str]) -> None:
    loaded = _loaded_after(argv)
    assert "wiremcp.cli" in loaded, loaded
    assert _command_modules(loaded) == own


def test_run_loads_no_client_and_no_http_before_it_serves() -> None:
    loaded = _loaded_after(["run", "--help"])
    assert not [m for m in loaded if m.startswith(("wiremcp.client", "wiremcp.transports.http", "wiremcp.auth"))], loaded


def test_the_help_lists_the_table_in_its_order() -> None:
    helps = full_parser().format_help()
    places = [re.search(rf"^    {row.name}\b", helps, re.M).start() for row in COMMANDS]  # type: ignore[union-attr]
    assert places == sorted(places)
    for row in COMMANDS:
        assert row.help.split()[0] in helps


def test_install_help_names_every_host() -> None:
    (install,) = [row for row in COMMANDS if row.name == "install"]
    assert install.help.endswith(f"({', '.join(HOSTS)})")


def test_every_command_module_has_its_two_functions() -> None:
    for row in COMMANDS:
        module = row.load()
        assert callable(module.add_arguments) and callable(module.handle), row.module


def _imports(path: Path) -> set[str]:
    """The cli modules ``path`` imports anywhere (in functions too), but for type checkers only."""
    tree = ast.parse(path.read_text())
    skip = {
        id(sub)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for sub in ast.walk(node)
    }
    package = path.parent.relative_to(CLI.parent).parts  # ("cli",) or ("cli", "_web")
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.level or id(node) in skip:
            continue
        base = list(package[: len(package) - node.level + 1])
        if not base or base[0] != "cli":
            continue  # another layer of wiremcp
        names = [node.module] if node.module else [alias.name for alias in node.names]
        for name in names:
            found.add(_existing([*base, *name.split(".")]))
    return found


def _existing(parts: list[str]) -> str:
    """The module or package ``parts`` names, or the package holding the name (``from . import install_hint``)."""
    while len(parts) > 1:
        where = CLI.parent.joinpath(*parts)
        if where.with_suffix(".py").exists() or (where / "__init__.py").exists():
            break
        parts = parts[:-1]
    return ".".join(parts)


def _module_name(path: Path) -> str:
    parts = path.relative_to(CLI.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycle_among_the_cli_modules() -> None:
    graph: dict[str, set[str]] = {}
    for path in CLI.rglob("*.py"):
        graph.setdefault(_module_name(path), set()).update(_imports(path))
    for start in graph:
        graph[start].discard(start)
    cycles = []
    for start in sorted(graph):
        seen, todo = set(), list(graph[start])
        while todo:
            module = todo.pop()
            if module == start:
                cycles.append(start)
                break
            if module not in seen:
                seen.add(module)
                todo.extend(graph.get(module, ()))
    assert cycles == [], f"modules of cli/ in an import cycle: {cycles}"
