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
        (["dev", "--web", ECHO], f"wiremcp dev: --web needs uvicorn: {HINT}"),
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


# -- item 2: a refused connection, a busy port ---------------------------------------------------


def _free_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("args", [["inspect"], ["call", "{url}", "echo", "text=hi"], ["task", "get", "{url}", "T-1"]], ids=lambda a: a[0])
def test_a_refused_connection_is_one_plain_line(args: list[str]) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    words = [word.format(url=url) for word in args] if len(args) > 1 else [*args, url]
    done = _run(WIREMCP, *words)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"wiremcp {args[0]}: cannot connect to {url}: connection refused (is the server running, on that port?)\n"
    )


def test_an_unknown_host_is_named() -> None:
    done = _run(WIREMCP, "inspect", "http://no-such-host.invalid/mcp")
    assert done.returncode == 2
    assert done.stderr.startswith(
        "wiremcp inspect: cannot connect to http://no-such-host.invalid/mcp: no such host 'no-such-host.invalid' ("
    ), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)


def test_proxy_to_a_refused_upstream_is_one_plain_line() -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    done = subprocess.run([*WIREMCP, "proxy", url], input=INITIALIZE, capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode() == f"wiremcp proxy: cannot connect to {url}: connection refused (is the server running, on that port?)\n"


def _in_use(port: int, option: str) -> str:
    return f"127.0.0.1:{port} is already in use; stop what runs there, or pick another port with {option} (0 picks a free one)"


@pytest.mark.parametrize(
    ("args", "command", "option"),
    [
        (["run", "--http", "--port", "{port}", ECHO], "run", "--port"),
        (["proxy", "--http", "--port", "{port}", ECHO], "proxy", "--port"),
        (["inspect", "--web", "--web-port", "{port}", ECHO], "inspect", "--web-port"),
    ],
    ids=["run --http", "proxy --http", "inspect --web"],
)
def test_a_busy_port_is_the_same_sentence_for_every_command(busy_port: int, args: list[str], command: str, option: str) -> None:
    done = _run(WIREMCP, *[word.format(port=busy_port) for word in args])
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"wiremcp {command}: {_in_use(busy_port, option)}\n")


def test_a_busy_port_for_wiremcp_run_in_a_script(busy_port: int, tmp_path: Path) -> None:
    """``wiremcp.run(server, "http", port=...)``: the same sentence, not uvicorn's ``[Errno 98]``."""
    script = tmp_path / "server.py"
    script.write_text(
        "import wiremcp\n"
        "server = wiremcp.Server('mine')\n"
        f"wiremcp.run(server, 'http', port={busy_port})\n"
    )
    done = _run([sys.executable, "-P"], str(script))
    assert (done.returncode, done.stderr) == (1, f"wiremcp: {_in_use(busy_port, 'the port argument')}\n")


# -- item 3: words in the wrong order ------------------------------------------------------------

NOTES = '''
import pathlib
import wiremcp

pathlib.Path("started").write_text("yes")  # the test checks that a wrong line starts no server

server = wiremcp.Server("notes")


@server.tool()
def search(query: str = "all") -> str:
    """Search the notes."""
    return f"found: {query}"


if __name__ == "__main__":
    wiremcp.run(server)
'''


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    (tmp_path / "notes.py").write_text(NOTES)
    return tmp_path


def _suggested(stderr: str) -> list[str]:
    """The command line a message shows (after its last ": "), as words."""
    import shlex

    return shlex.split(stderr.rstrip("\n").rsplit(": ", 1)[1])


@pytest.mark.parametrize(
    ("given", "message", "shown"),
    [
        (
            ["call", "--era", "legacy", "--", "PY", "notes.py", "search"],
            "wiremcp call: the tool name goes before --, the server's command after it: ",
            ["wiremcp", "call", "--era", "legacy", "search", "--", "PY", "notes.py"],
        ),
        (
            ["call", "--", "PY", "notes.py", "search", "query=wire"],
            "wiremcp call: the tool name and its arguments go before --, the server's command after it: ",
            ["wiremcp", "call", "search", "query=wire", "--", "PY", "notes.py"],
        ),
    ],
    ids=["call --era legacy -- cmd search", "call -- cmd search key=value"],
)
def test_the_tool_after_double_dash_shows_the_right_order(notes: Path, given: list[str], message: str, shown: list[str]) -> None:
    words = [sys.executable if word == "PY" else word for word in given]
    done = subprocess.run([*WIREMCP, *words], cwd=notes, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    right = [sys.executable if word == "PY" else word for word in shown]
    import shlex

    assert (done.returncode, done.stdout, done.stderr) == (2, "", message + shlex.join(right) + "\n")
    assert not (notes / "started").exists()  # said before the server was started
    # the line shown is the one that works
    again = subprocess.run([*WIREMCP, *right[1:]], cwd=notes, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (again.returncode, again.stdout.strip()) == (0, "found: wire" if "query=wire" in right else "found: all"), again.stderr


def test_inspect_with_a_tool_after_the_file_shows_call(notes: Path) -> None:
    """``inspect notes.py search`` used to say "cannot start 'notes.py': No such file or directory"."""
    done = subprocess.run(
        [*WIREMCP, "inspect", "notes.py", "search"], cwd=notes, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", "wiremcp inspect: inspect takes one TARGET, not 'search' after it; to call the tool: wiremcp call notes.py search\n"
    )
    assert not (notes / "started").exists()
    again = subprocess.run(
        [*WIREMCP, *_suggested(done.stderr)[1:]], cwd=notes, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert (again.returncode, again.stdout.strip()) == (0, "found: all"), again.stderr


def test_call_with_a_target_alone_says_what_is_missing(notes: Path) -> None:
    done = subprocess.run([*WIREMCP, "call", "notes.py"], cwd=notes, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stderr) == (
        2, "wiremcp call: call wants TOOL after TARGET: wiremcp call [OPTIONS] TARGET TOOL [key=value ... | JSON]\n"
    )
    assert not (notes / "started").exists()


def test_a_stdio_command_that_cannot_start_keeps_its_own_words() -> None:
    """Only a URL's connection is explained (`unreachable`); a missing command still says which."""
    done = _run(WIREMCP, "inspect", "--", "no-such-command-for-wiremcp")
    assert (done.returncode, done.stderr) == (
        2,
        "wiremcp inspect: cannot start 'no-such-command-for-wiremcp': "
        "[Errno 2] No such file or directory: 'no-such-command-for-wiremcp'\n",
    )
