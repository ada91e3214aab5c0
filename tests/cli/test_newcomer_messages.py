"""The messages a newcomer reads when a command cannot do what was asked (issue 28, items 1-3).

Each command runs as a user runs it, in its own process (``python -P -m
wiremcp``, or the same entry point under a wrapper that takes the ``[http]``
extra away), and the test reads what the person reads: the exact line on
stderr and the exit status (2: a usage or connection problem, cli/_output.py).

* item 1: without the ``[http]`` extra (aiohttp, uvicorn), every command that
  needs it says so in one line with an install command that works from a
  clone (`wiremcp.cli.install_hint`), never an ImportError's traceback;
* item 2: a refused connection and a busy port are one plain sentence each;
* item 3: words in the wrong order (the tool after ``--``, a tool name after
  ``inspect``'s target) are caught, and the right order is shown.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ECHO = str(ROOT / "examples" / "echo.py")
WIREMCP = [sys.executable, "-P", "-m", "wiremcp"]
#: The install command of the [http] extra, as README's "Installing" gives it.
HINT = "pip install -e '.[http]' in a clone of wiremcp, or pip install 'wiremcp[http]' once it is published"

#: ``wiremcp`` as on an install without the [http] extra: importing aiohttp or uvicorn fails.
WITHOUT_HTTP = [
    sys.executable,
    "-P",
    "-c",
    "import sys\n"
    "for name in ('aiohttp', 'uvicorn', 'httptools', 'uvloop'):\n"
    "    sys.modules[name] = None  # import raises ImportError, as when it is not installed\n"
    "from wiremcp.cli import main\n"
    "raise SystemExit(main())\n",
]


def _run(command: list[str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


URL = "http://127.0.0.1:9/mcp"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["inspect", URL], f"wiremcp inspect: a URL target needs aiohttp: {HINT}"),
        (["call", URL, "echo", "text=hi"], f"wiremcp call: a URL target needs aiohttp: {HINT}"),
        (["read", URL, "file:///x"], f"wiremcp read: a URL target needs aiohttp: {HINT}"),
        (["prompt", URL, "greet"], f"wiremcp prompt: a URL target needs aiohttp: {HINT}"),
        (["task", "get", URL, "T-1"], f"wiremcp task: a URL target needs aiohttp: {HINT}"),
        (["inspect", "--web", URL], f"wiremcp inspect: --web needs uvicorn: {HINT}"),
        (["login", URL], f"wiremcp login: logging in needs aiohttp: {HINT}"),
        (["proxy", URL], f"wiremcp proxy: a URL upstream needs aiohttp: {HINT}"),
        (["proxy", "--http", ECHO], f"wiremcp proxy: --http needs uvicorn: {HINT}"),
        (["run", "--http", ECHO], f"wiremcp run: --http needs uvicorn: {HINT}"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_without_the_http_extra_one_line_names_the_extra(args: list[str], line: str) -> None:
    done = _run(WITHOUT_HTTP, *args)
    assert (done.returncode, done.stderr, done.stdout) == (2, line + "\n", "")


def test_without_the_http_extra_a_stdio_target_still_works() -> None:
    """Only what needs the extra asks for it: a server file is reached over stdio as before."""
    done = _run(WITHOUT_HTTP, "call", "-q", ECHO, "echo", "text=hi")
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "hi", "")
