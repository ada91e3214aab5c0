"""Every ```python block in the README and docs/ runs (the documentation's examples are real).

Blocks fenced as ```py are API sketches (a list of calls, not a program) and are not run.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "migrate").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _code(doc: Path) -> list[str]:
    return [match.group(1) for match in BLOCK.finditer(doc.read_text())]


def _blocks():
    for doc in DOCS:
        for i, _ in enumerate(_code(doc)):
            yield pytest.param(doc, i, id=f"{doc.name}-{i}")


def _run(doc: Path, code: str, namespace: dict) -> None:
    # dont_inherit: the blocks must not inherit this file's __future__ imports.
    # Top-level await is allowed, as in an asyncio REPL.
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compiled = compile(code, str(doc), "exec", flags=flags, dont_inherit=True)
    result = eval(compiled, namespace)
    if compiled.co_flags & inspect.CO_COROUTINE:
        asyncio.run(result)


@pytest.mark.parametrize("doc, index", list(_blocks()))
def test_doc_examples_run(doc, index, monkeypatch):
    """Block ``index`` of ``doc``, after the blocks before it, in a namespace of its own.

    Later blocks of a document build on earlier ones, so each test first runs
    the earlier blocks (setup) in a fresh module: a test's outcome does not
    depend on which other tests ran, or in what order (``-k``, ``-p randomly``,
    ``--lf``).
    """
    blocks = _code(doc)
    # A real module, so that dataclasses and TypedDict hints in examples resolve.
    module = types.ModuleType(f"doc_{doc.stem.replace('-', '_')}_{index}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.chdir(ROOT)
    # Examples may run `wiremcp ...` as a command: the one installed next to this Python.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    for earlier in blocks[:index]:
        _run(doc, earlier, module.__dict__)
    _run(doc, blocks[index], module.__dict__)
