"""MkDocs hooks: the site from the committed pages, with links that leave docs/ mapped.

Rules this module keeps:

- The pages in docs/ are plain Markdown that reads on a code host: what is
  generated (tutorial code included from examples/, wire captures, the CLI
  reference, the conformance, settings and error tables) is committed in the
  page between HTML comments, written by docs/hooks/generated.py and checked
  current by tests/test_docs_generated.py (``python tests/test_docs_generated.py``
  rewrites it). The build renders the pages as they are, adding only the one
  section a code host reader gets by a link: ``<!-- generated: benchmarks -->``
  (bench/README.md, where each figure lives once).

- A link from docs/ to a file of the repository outside docs/ (``../examples/x.py``)
  keeps working on the code host; on the site it points at a copy of that file
  published under ``repo/`` (bench/README.md maps to the benchmarks page). A
  link to a file that does not exist is a warning, and the strict build fails.
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generated  # noqa: E402  (docs/hooks/generated.py, beside this file)

sys.path.pop(0)

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
log = logging.getLogger("mkdocs.hooks.wiremcp")

#: Where copies of repository files linked from the docs are published.
REPO_PREFIX = "repo"
#: Files outside docs/ that have a page of their own on the site.
MAPPED = {"bench/README.md": "reference/benchmarks.md", "README.md": "index.md"}

BENCHMARKS = re.compile(r"^(<!-- generated: benchmarks -->\n)(<!-- /generated -->\n)", re.M)
LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def _outside_target(page_src: str, target: str) -> str | None:
    """The repository path a relative link of a page leads to when it leaves docs/, else None."""
    if "://" in target or target.startswith(("/", "mailto:")):
        return None
    joined = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), target))
    if joined.startswith("docs/") or joined == "docs":
        return None
    return joined


def _outside_links() -> set[str]:
    found: set[str] = set()
    for doc in DOCS.rglob("*.md"):
        src = doc.relative_to(DOCS).as_posix()
        for match in LINK.finditer(doc.read_text()):
            path = _outside_target(src, match["target"])
            if path is not None and path not in MAPPED and (ROOT / path).is_file():
                found.add(path)
    return found


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path in sorted(_outside_links()):
        files.append(File.generated(config, f"{REPO_PREFIX}/{path}", abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    src = page.file.src_uri
    markdown = BENCHMARKS.sub(lambda m: m.group(1) + generated.benchmarks() + m.group(2), markdown)
    return LINK.sub(lambda m: _relink(m, src), markdown)


def _relink(match: re.Match[str], src: str) -> str:
    target, anchor = match["target"], match["anchor"] or ""
    path = _outside_target(src, target)
    if path is None:
        return match.group(0)
    if not (ROOT / path).exists():
        log.warning("%s: the link %s leads to %s, which is not in the repository", src, target, path)
        return match.group(0)
    site_path = MAPPED.get(path, f"{REPO_PREFIX}/{path}")
    if (ROOT / path).is_dir():
        log.warning("%s: the link %s leads to a folder; link a file", src, target)
        return match.group(0)
    return f"]({posixpath.relpath(site_path, posixpath.dirname(src) or '.')}{anchor})"
