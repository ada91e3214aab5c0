"""``wiremcp read``'s "did you mean" never offers the template that already matched (issue 28, item 8).

A template's function that says "not found" (`ResourceNotFound`) for one of
its URIs makes the read fail with the URI's own not-found error; the hint
must not send the user back to that same template. A URI no template
matches still gets the close ones. Real subprocesses, as a user types them.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SERVER = textwrap.dedent(
    '''\
    from wiremcp import Server
    from wiremcp.protocol import ResourceNotFound

    server = Server("notes")
    NOTES = {"todo": "buy milk"}


    @server.resource("notes://{title}")
    def note(title: str) -> str:
        """One note."""
        if title not in NOTES:
            raise ResourceNotFound(f"notes://{title}")
        return NOTES[title]
    '''
)


def _read(tmp_path: Path, uri: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "notes.py").write_text(SERVER)
    return subprocess.run(
        [sys.executable, "-m", "wiremcp", "read", "notes.py", uri],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )


def test_a_uri_the_template_matched_gets_no_suggestion_of_that_template(tmp_path: Path) -> None:
    out = _read(tmp_path, "notes://nope")
    assert out.returncode != 0
    said = out.stdout + out.stderr  # `read` prints the error as its result
    assert "Resource not found: notes://nope" in said, said
    assert "did you mean" not in said, said


def test_a_uri_no_template_matches_still_gets_the_close_one(tmp_path: Path) -> None:
    out = _read(tmp_path, "note://nope")
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert "Resource not found: note://nope; did you mean 'notes://{title}'?" in said, said


def test_a_uri_the_template_serves_is_read(tmp_path: Path) -> None:
    out = _read(tmp_path, "notes://todo")
    assert out.returncode == 0 and "buy milk" in out.stdout, out
