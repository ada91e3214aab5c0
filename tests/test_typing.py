"""What a user's type checker sees (PEP 561: the package ships ``py.typed``).

mypy runs, as a subprocess, on a small program that uses the public API the
way the README does; the revealed types must be the library's own classes and
signatures, never ``Any``. ``wiremcp.Client`` is loaded lazily at run time
(a server never imports the client) but must still be visible statically.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "wiremcp"

PROGRAM = """\
import wiremcp

server = wiremcp.Server("typed", version="1.0.0")
reveal_type(server)  # [server]


@server.tool()
def echo(text: str) -> str:
    return text


reveal_type(echo)  # [tool]
reveal_type(wiremcp.Client)  # [Client]


async def main() -> None:
    async with wiremcp.Client.memory(server) as client:
        reveal_type(client)  # [client]
        result = await client.call_tool("echo", {"text": "hi"})
        reveal_type(result)  # [result]


@server.tool(annotations={"readOnlyHint": True})
async def greet(ctx: wiremcp.Context) -> str:
    reveal_type(ctx.report_progress)  # [progress]
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    reveal_type(answer["action"])  # [action]
    return "hi"


@server.tool(annotations={"readOnly": True})  # [annotation]: an error, the key is readOnlyHint
def misnamed() -> None:
    pass


@server.prompt
def review(code: str) -> str:
    return "Review: " + code


@server.resource("config://app")
def config() -> str:
    return "{}"


reveal_type(review)  # [prompt]
reveal_type(config)  # [resource]
reveal_type(wiremcp.text("hi"))  # [text]
reveal_type(wiremcp.run)  # [run]
wiremcp.NoSuchThing  # [typo]: an error, not Any
"""
#: The line of each ``# [name]`` marker above.
LINE = {m.group(1): n for n, text in enumerate(PROGRAM.splitlines(), 1) if (m := re.search(r"# \[(\w+)\]", text))}


def _mypy(tmp_path: Path, source: str) -> tuple[int, list[str]]:
    program = tmp_path / "program.py"
    program.write_text(source)
    # Run from an empty directory, so that the project's [tool.mypy] settings do
    # not apply: this is what a user's own project sees through site-packages.
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--hide-error-context",
         "--cache-dir", str(tmp_path / ".mypy_cache"), str(program)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MYPYPATH": ""},
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, lines


def test_the_package_ships_py_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()
    pyproject = (PACKAGE.parent.parent / "pyproject.toml").read_text()
    assert re.search(r'\[tool\.setuptools\.package-data\]\s*\n(#.*\n)*wiremcp = \["py\.typed"\]', pyproject)


@pytest.mark.slow
def test_public_api_is_typed_for_users(tmp_path: Path) -> None:
    code, lines = _mypy(tmp_path, PROGRAM)
    revealed = {}
    errors = []
    notes = []
    for line in lines:
        m = re.match(r".*program\.py:(\d+): (note|error): (.*)", line)
        assert m, line
        number, kind, text = int(m.group(1)), m.group(2), m.group(3)
        if kind == "note" and text.startswith("Revealed type is "):
            # mypy 1.x writes builtins.str where 2.x writes str
            revealed[number] = text[len("Revealed type is ") :].strip('"').replace("builtins.", "")
        elif kind == "error":
            errors.append((number, text))
        else:
            notes.append((number, text))
    assert code == 1, lines  # exactly the deliberate errors
    # `Server.tool` is overloaded (bare `@server.tool` and called `@server.tool(...)`): mypy may
    # report the bad annotation as a call matching no overload, whose notes name ToolAnnotations,
    # followed by "untyped decorator" on the same line.
    assert sorted({number for number, _ in errors}) == [LINE["annotation"], LINE["typo"]], errors
    on_annotation = [t for n, t in errors + notes if n == LINE["annotation"]]
    assert any("ToolAnnotations" in t for t in on_annotation), errors  # the wording differs between mypy versions
    assert errors[-1][1] == 'Module has no attribute "NoSuchThing"  [attr-defined]', errors
    seen = {name: revealed.get(number) for name, number in LINE.items() if name not in ("typo", "annotation")}
    assert seen["server"] == "wiremcp.server._server.Server"
    # the decorator hands back the function with its own signature, not Callable[..., Any]
    assert seen["tool"] == "def (text: str) -> str"
    assert seen["Client"].startswith("def (transport: wiremcp.client._transport.ClientTransport, *"), seen["Client"]
    assert seen["Client"].endswith(") -> wiremcp.client._client.Client"), seen["Client"]
    assert seen["client"] == "wiremcp.client._client.Client"
    assert seen["result"] == "wiremcp.client._results.CallToolResult"
    # (mypy 1.x writes Union[float, None] where 2.x writes float | None)
    assert seen["progress"].startswith("def (progress: float, total: ") and seen["progress"].endswith(") -> bool")
    assert "Any" not in seen["progress"], seen["progress"]
    assert seen["action"] in (
        "Literal['accept'] | Literal['decline'] | Literal['cancel']",
        "Union[Literal['accept'], Literal['decline'], Literal['cancel']]",  # mypy 1.x
    ), seen["action"]
    assert seen["prompt"] == "def (code: str) -> str"  # bare @server.prompt too
    assert seen["resource"] == "def () -> str"
    assert re.match(r"TypedDict\('?wiremcp\.server\._content\.TextContent'?, \{'type': Literal\['text'\], 'text': str", seen["text"]), seen["text"]
    assert seen["run"] == (
        "def (server: wiremcp.server._server.Server, transport: Literal['stdio'] | Literal['http'] =, **options: Any)"
    ) or seen["run"] == (  # mypy 1.x
        "def (server: wiremcp.server._server.Server, transport: Union[Literal['stdio'], Literal['http']] =, **options: Any)"
    )


def test_the_client_is_still_loaded_lazily() -> None:
    """Making `wiremcp.Client` visible statically must not import it at run time."""
    code = (
        "import sys, wiremcp;"
        "assert 'wiremcp.client' not in sys.modules, 'import wiremcp loaded the client';"
        "c = wiremcp.Client;"
        "assert c.__module__ == 'wiremcp.client._client', c.__module__;"
        "assert 'wiremcp.client' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
