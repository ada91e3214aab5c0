"""Registration errors told at the user's ``def``, and the warnings ``wiremcp dev`` shows (issue 28, item 4).

Each test runs the server file as a user would (``python server.py``,
``wiremcp run server.py``, ``wiremcp dev server.py``) in a real subprocess and
reads what a person reads on stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from wiremcp.server import SchemaError, Server
from wiremcp.server.schema import SchemaWarning

pytestmark = pytest.mark.slow

TYPO = textwrap.dedent(
    '''\
    from wiremcp import Server

    server = Server("typo")


    @server.tool()
    def search(query: "strr") -> str:
        return query


    if __name__ == "__main__":
        server.run()
    '''
)


def _wiremcp_frames(stderr: str) -> list[str]:
    src = str(Path(__file__).resolve().parents[2] / "src" / "wiremcp")
    frames = re.findall(r'^  File "([^"]+)", line \d+', stderr, re.M)
    return [f for f in frames if f.startswith(src) or os.sep + "wiremcp" + os.sep in f]


@pytest.mark.parametrize("how", ["python", "wiremcp run"])
def test_a_hint_typo_is_told_at_the_def_line_under_at_most_two_of_our_frames(tmp_path: Path, how: str) -> None:
    (tmp_path / "server.py").write_text(TYPO)
    argv = [sys.executable, "server.py"] if how == "python" else [sys.executable, "-m", "wiremcp", "run", "server.py"]
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode != 0
    err = out.stderr
    assert "server.py:7: in def search(query: strr) -> str: cannot resolve the type hints: name 'strr' is not defined" in err, err
    assert re.search(r'File "[^"]*server\.py", line 6, in <module>', err), err
    assert len(_wiremcp_frames(err)) <= 2, err
    assert "During handling" not in err and "direct cause" not in err, err
    assert "wiremcp.server.SchemaError: server.py:7:" in err, err


def test_errors_keep_their_type_for_resources_and_prompts(tmp_path: Path) -> None:
    server = Server("s")
    with pytest.raises(SchemaError, match=r"test_definition_errors\.py:\d+: in def bad\(x: 'nope'\) -> str: ") as info:

        @server.tool
        def bad(x: "nope") -> str:  # type: ignore[name-defined]  # noqa: F821
            return ""

    assert info.value.__cause__ is None and info.value.__suppress_context__

    with pytest.raises(TypeError, match=r"test_definition_errors\.py:\d+: in def note\(slug: str\) -> str: "):

        @server.resource("notes://{title}")
        def note(slug: str) -> str:
            return slug

    with pytest.raises(TypeError, match=r"test_definition_errors\.py:\d+: in def ask\(topic: 'missing'\) -> str: "):

        @server.prompt()
        def ask(topic: "missing") -> str:  # type: ignore[name-defined]  # noqa: F821
            return topic


def test_an_untyped_parameter_and_a_missing_return_annotation_warn_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = Server("s")
    monkeypatch.setenv("WIREMCP_SCHEMA_WARNINGS", "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)

        @server.tool()
        def search(query, limit: int = 3):  # type: ignore[no-untyped-def]
            return query

    messages = [str(w.message) for w in caught if issubclass(w.category, SchemaWarning)]
    assert any("parameter 'query' has no type hint" in m for m in messages), messages
    assert any("no return annotation" in m for m in messages), messages
    assert all(w.filename == __file__ for w in caught)
    assert {w.lineno for w in caught} == {search.__code__.co_firstlineno + 1}  # the def, below the decorator

    monkeypatch.delenv("WIREMCP_SCHEMA_WARNINGS")  # a plain run: not asked for
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")

        @server.tool()
        def other(query):  # type: ignore[no-untyped-def]
            return query

    assert not quiet


UNTYPED = textwrap.dedent(
    '''\
    from wiremcp import Server

    server = Server("untyped")


    @server.tool()
    def search(query, limit: int = 3) -> str:
        return query
    '''
)

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)


def test_a_plain_run_does_not_warn(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(UNTYPED)
    out = subprocess.run(
        [sys.executable, "-m", "wiremcp", "run", "server.py"], cwd=tmp_path, input=INITIALIZE, capture_output=True, timeout=60
    )
    assert b'"result"' in out.stdout, out
    assert b"SchemaWarning" not in out.stderr, out.stderr


def test_dev_shows_the_warning_for_an_untyped_parameter(tmp_path: Path) -> None:
    pytest.importorskip("watchfiles")
    (tmp_path / "server.py").write_text(UNTYPED)
    process = subprocess.Popen(
        [sys.executable, "-m", "wiremcp", "dev", "server.py"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        assert b'"result"' in process.stdout.readline()
        _, err = process.communicate(timeout=60)  # closes stdin: the host went away, dev stops
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = err.decode()
    assert re.search(
        r"server\.py:7: SchemaWarning: tool 'search': parameter 'query' has no type hint", text
    ), text
