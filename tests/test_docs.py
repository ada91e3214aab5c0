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
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks():
    for doc in DOCS:
        for i, match in enumerate(BLOCK.finditer(doc.read_text())):
            yield pytest.param(doc, match.group(1), id=f"{doc.name}-{i}")


@pytest.mark.parametrize("doc, code", list(_blocks()))
def test_doc_examples_run(doc, code, monkeypatch, tmp_path):
    # Blocks of one document share a namespace, in order: later blocks build on earlier ones.
    if doc not in _NAMESPACES:
        # A real module, so that dataclasses and TypedDict hints in examples resolve.
        module = types.ModuleType(f"doc_{doc.stem.replace('-', '_')}")
        sys.modules[module.__name__] = module
        _NAMESPACES[doc] = module.__dict__
    monkeypatch.chdir(ROOT)
    # Examples may run `wiremcp ...` as a command: the one installed next to this Python.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    # dont_inherit: the blocks must not inherit this file's __future__ imports.
    # Top-level await is allowed, as in an asyncio REPL.
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compiled = compile(code, str(doc), "exec", flags=flags, dont_inherit=True)
    result = eval(compiled, _NAMESPACES[doc])
    if compiled.co_flags & inspect.CO_COROUTINE:
        asyncio.run(result)


_NAMESPACES: dict[Path, dict] = {}
