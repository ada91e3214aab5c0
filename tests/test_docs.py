"""Every ```python block in the README and docs/ runs (the documentation's examples are real)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
    for doc in DOCS:
        for i, match in enumerate(BLOCK.finditer(doc.read_text())):
            yield pytest.param(doc, match.group(1), id=f"{doc.name}-{i}")


@pytest.mark.parametrize("doc, code", list(_blocks()))
def test_doc_examples_run(doc, code, monkeypatch, tmp_path):
    # Blocks of one document share a namespace, in order: later blocks build on earlier ones.
    namespace = _NAMESPACES.setdefault(doc, {"__name__": f"doc_{doc.stem}"})
    monkeypatch.chdir(ROOT)
    exec(compile(code, str(doc), "exec"), namespace)


_NAMESPACES: dict[Path, dict] = {}
