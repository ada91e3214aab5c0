"""The docs read on a code host: what is generated is committed, current, and every page is in the nav.

- Each page of docs/ that has generated sections (docs/hooks/generated.py:
  tutorial code included from examples/, wire captures run anew, the CLI
  reference from the parsers, the conformance, settings and error tables) is
  what the generator makes now, once what differs between two runs (task ids,
  time stamps, sealed request states, timings) is masked. A capture of a
  third-party server (``npx -y PACKAGE@VERSION``) runs the peer of
  tests/peers.py pinned to that version: built on first use, never skipped. When one differs,
  ``python tests/test_docs_generated.py`` rewrites every page (commit the
  result).
- No page hides its content behind a marker: every section is filled in (only
  the benchmarks, a link to bench/README.md on a code host, are filled in by
  the site build).
- Every page of docs/ is in mkdocs.yml's nav.
"""

from __future__ import annotations

import difflib
import importlib.util
import os
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("docs_generated", ROOT / "docs" / "hooks" / "generated.py")
assert _spec is not None and _spec.loader is not None
generated = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generated)


def _with_sections() -> list[Path]:
    return [
        page for page in generated.pages()
        if any(kind.search(page.read_text()) for kind in (generated.WIRE, generated.INCLUDE, generated.GENERATED))
    ]


@pytest.fixture(autouse=True)
def _this_tree(monkeypatch):
    """Captures run this tree's wiremcp (docs/hooks/generated.py sets PYTHONPATH to its src/)."""
    monkeypatch.chdir(ROOT)


@pytest.mark.slow
#: a capture of a third-party server runs its peer of tests/peers.py, which CI builds in the background: it may
#: wait for that build on the peer's lock file (as tests/check/test_check_peers.py does), never skips
@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", _with_sections(), ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_generated_sections_are_current(page):
    committed = page.read_text()
    made = generated.rewrite(committed)
    if generated.normalize(made) != generated.normalize(committed):
        diff = difflib.unified_diff(
            generated.normalize(committed).splitlines(), generated.normalize(made).splitlines(),
            "committed", "generated now", lineterm="", n=1,
        )
        pytest.fail(
            f"{page.relative_to(ROOT)} is not current; run `python tests/test_docs_generated.py` and commit:\n"
            + "\n".join(list(diff)[:60])
        )


def test_no_section_is_left_empty():
    """A marker with nothing under it shows nothing on a code host (only the benchmarks are the site's)."""
    empty = []
    for page in generated.pages():
        text = page.read_text()
        for kind, name in ((generated.INCLUDE, "path"), (generated.GENERATED, "name"), (generated.WIRE, "cmd")):
            for match in kind.finditer(text):
                if not match["body"].strip() and match[name] not in generated.SITE_ONLY:
                    empty.append(f"{page.relative_to(ROOT)}: {match[name].strip()}")
        # a marker without its end marker is not a section: it would hide nothing but fill nothing either
        for opening in ("<!-- include:", "<!-- generated:", "<!-- wire -->"):
            closing = {"<!-- include:": "<!-- /include -->", "<!-- generated:": "<!-- /generated -->", "<!-- wire -->": "<!-- /wire -->"}[opening]
            if text.count(opening) != text.count(closing):
                empty.append(f"{page.relative_to(ROOT)}: {text.count(opening)} {opening} but {text.count(closing)} {closing}")
    assert not empty, "sections with nothing to read on a code host:\n" + "\n".join(empty)


def _nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(value) for value in nav.values()))
    return set()


def test_every_page_is_in_the_nav():
    in_nav = _nav_pages(yaml.safe_load(_nav_block())["nav"])
    pages = {page.relative_to(ROOT / "docs").as_posix() for page in generated.pages()}
    assert not pages - in_nav, f"pages of docs/ missing from mkdocs.yml's nav: {sorted(pages - in_nav)}"
    assert not in_nav - pages, f"nav entries with no page: {sorted(in_nav - pages)}"


def _nav_block() -> str:
    """The ``nav:`` block of mkdocs.yml (the rest may hold tags a safe YAML loader refuses)."""
    text = (ROOT / "mkdocs.yml").read_text()
    return text[text.index("\nnav:\n") + 1 :]


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT / "src"))
    for page in _with_sections():
        text = page.read_text()
        made = generated.rewrite(text)
        if generated.normalize(made) != generated.normalize(text):
            page.write_text(made)
            print(f"rewrote {page.relative_to(ROOT)}")
