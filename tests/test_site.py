"""The documentation site (mkdocs.yml, docs/): it builds in strict mode, and it documents every public name.

- The strict build fails on a broken link, a missing anchor, an unresolved
  cross-reference or a page missing from the nav's targets (docs/hooks/site.py):
  so does this test. The generated sections the pages hold (wire captures, the
  CLI reference...) are checked current by tests/test_docs_generated.py.
- Every public name (each name in the ``__all__`` of each public module of
  wiremcp, that is, no part of its dotted path starting with ``_``) that is a
  class or a function has a docstring of its own, and so has each public
  method and property of those classes (and of the wiremcp classes they
  inherit from); each public module is rendered by one of the API reference
  pages (``::: module``).
- The conformance record the site renders (docs/reference/conformance.json)
  was made with the suite conformance/package.json pins, and its totals are
  the ones tests/test_conformance.py asserts.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

import wiremcp

ROOT = Path(__file__).resolve().parent.parent
API_PAGES = ROOT / "docs" / "reference" / "api"

#: Public modules that are not API: the command line (its reference is generated from the
#: parsers) and the example servers (their source is the documentation).
NOT_API = ("wiremcp.cli", "wiremcp.examples", "wiremcp.__main__")


def public_modules() -> list[str]:
    names = ["wiremcp"]
    for info in pkgutil.walk_packages(wiremcp.__path__, "wiremcp."):
        if any(part.startswith("_") for part in info.name.split(".")) or info.name.startswith(NOT_API):
            continue
        names.append(info.name)
    return names


def own_docstring(obj: object) -> str | None:
    """The docstring written for ``obj`` itself: not inherited, not the signature a dataclass makes up."""
    doc = vars(obj).get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or not doc.strip():
        return None
    if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and doc.startswith(f"{obj.__name__}("):
        return None
    return doc


def test_every_public_name_has_a_docstring():
    missing = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        assert own_docstring(module), f"{module_name} has no module docstring"
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants are documented by the #: comments and the page around them
            if not getattr(obj, "__module__", "").startswith("wiremcp"):
                continue  # a re-export of another library's name (documented there)
            if own_docstring(obj) is None:
                missing.append(f"{module_name}.{name} ({obj.__module__}.{obj.__qualname__})")
    assert not missing, "public names without a docstring:\n" + "\n".join(sorted(set(missing)))


def _methods(klass: type) -> Iterator[tuple[str, object]]:
    """The public methods and properties of ``klass`` and of the wiremcp classes it inherits from, as functions."""
    for owner in klass.__mro__:
        if not owner.__module__.startswith("wiremcp"):
            continue
        for name, attr in vars(owner).items():
            if name.startswith("_"):
                continue
            if isinstance(attr, (staticmethod, classmethod)):
                attr = attr.__func__
            elif isinstance(attr, property):
                attr = attr.fget
            if inspect.isfunction(attr):
                yield f"{owner.__module__}.{owner.__qualname__}.{name}", attr


def test_every_public_method_has_a_docstring():
    """Each public method and property of a public class has a docstring of its own (an implementation
    of a `typing.Protocol`'s method too: the reference renders each class's members with their own text)."""
    missing = set()
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if not inspect.isclass(obj) or not obj.__module__.startswith("wiremcp"):
                continue
            for qualname, function in _methods(obj):
                doc = function.__doc__
                if not isinstance(doc, str) or not doc.strip():
                    missing.add(qualname)
    assert not missing, "public methods without a docstring:\n" + "\n".join(sorted(missing))


def test_every_public_name_is_on_a_reference_page():
    """Each public module is rendered by a page of docs/reference/api/ (``::: module``), or each of
    its public names is re-exported by a module that is (``wiremcp.transports.stdio.client``'s
    names are rendered with ``wiremcp.transports.stdio``)."""
    rendered = set()
    for page in API_PAGES.glob("*.md"):
        rendered |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(), re.M))
    on_pages = {id(getattr(importlib.import_module(m), n)) for m in rendered for n in importlib.import_module(m).__all__}
    missing = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        if module_name in rendered or not hasattr(module, "__all__"):
            continue
        missing += [f"{module_name}.{n}" for n in module.__all__ if id(getattr(module, n)) not in on_pages]
    assert not missing, f"public names no page of docs/reference/api/ renders: {missing}"


def test_conformance_record_is_current():
    spec = importlib.util.spec_from_file_location("conformance_record", ROOT / "docs" / "hooks" / "conformance.py")
    recorder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recorder)
    record = json.loads(recorder.RECORD.read_text())
    assert record["suite"] == recorder.pinned_suite(), "rerun `python docs/hooks/conformance.py`: the pinned suite changed"
    asserted = dict(re.findall(r'"server (\S+): (\d+/\d+) scenarios passed"', (ROOT / "tests" / "test_conformance.py").read_text()))
    recorded = {leg["revision"]: f"{leg['passed']}/{leg['total']}" for leg in record["legs"] if leg["side"] == "server"}
    assert asserted, "tests/test_conformance.py no longer asserts server totals in the form this test reads"
    for revision, total in asserted.items():
        assert recorded.get(revision) == total, (revision, recorded.get(revision), total)
    client_asserted = dict(re.findall(r'\("([\w-]+)", (\d+)\)', re.search(r"CLIENT_LEGS = \[(.*)\]", (ROOT / "tests" / "test_conformance.py").read_text())[1]))
    client_recorded = {leg["revision"]: leg for leg in record["legs"] if leg["side"] == "client"}
    for revision, total in client_asserted.items():
        leg = client_recorded.get(revision)
        assert leg is not None and leg["passed"] == leg["total"] == int(total), (revision, total)
    for leg in record["legs"]:
        scored = [s for s in leg["scenarios"] if s["scored"]]
        assert leg["total"] == len(scored) and leg["passed"] == sum(s["status"] == "pass" for s in scored), leg["revision"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_site_builds_strictly(tmp_path):
    """``mkdocs build --strict``: every warning (broken link, missing reference, failed capture) fails it."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=590,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    site = tmp_path / "site"
    assert (site / "search" / "search_index.json").is_file()
    api = (site / "reference" / "api" / "server" / "index.html").read_text()
    assert 'id="wiremcp.server.Server"' in api  # the reference is rendered, not an empty page
    wire = (site / "wire" / "index.html").read_text()
    assert "io.modelcontextprotocol/protocolVersion" in wire  # the captures ran
    cli = (site / "reference" / "cli" / "index.html").read_text()
    assert "usage: wiremcp call" in cli
