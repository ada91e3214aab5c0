"""docs/architecture.md, Shape: the figures the source keeps, read from the source alone (ast).

The rules (issue 25's "done when", kept from now on):

* no module over 800 lines, no class over 500, no function over 100;
* no attribute of a live object replaced at run time (a callable assigned to
  another object's attribute is flagged by mypy as ``method-assign``; the
  ``ignore`` that silences it is what this test looks for);
* no JSON-RPC error object written by hand (a dict literal with a ``"code"``
  of -32768..-32000) outside the one funnel: ``jsonrpc/``,
  ``protocol/errors`` and ``server/_reply.py``;
* no import cycle between modules at import time (imports at module level,
  ``if TYPE_CHECKING:`` blocks excluded; an import inside a function runs
  later and cannot make one);
* ``wiremcp.server.__all__`` at most 45 names (tests/server/test_public_api.py
  checks what they are).

Vendored code (``_vendor/``) and static files are not ours and not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "wiremcp"
MAX_MODULE, MAX_CLASS, MAX_FUNCTION = 800, 500, 100
FUNNEL = ("jsonrpc/", "protocol/errors", "server/_reply.py")

FILES = sorted(p for p in PACKAGE.rglob("*.py") if not {"_vendor", "static"} & set(p.relative_to(PACKAGE).parts))


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in FILES}


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The package's own modules an import statement loads (the module, and submodules named in it)."""
    if isinstance(node, ast.Import):
        candidates = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
    return [c for c in candidates if c in MODULES and c != module]


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            lines.update(getattr(sub, "lineno", -1) for sub in ast.walk(node))
    return lines


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it is imported."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        edges: set[str] = set()
        for top in tree.body:
            if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for sub in ast.walk(top):
                if isinstance(sub, (ast.Import, ast.ImportFrom)) and sub.lineno not in skip:
                    edges.update(_targets(module, path, sub))
        graph[module] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _spans(tree: ast.Module, kinds: tuple[type, ...]) -> list[tuple[int, str]]:
    return [
        (node.end_lineno - node.lineno + 1, node.name)  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if isinstance(node, kinds)
    ]


def _raw_error_dicts(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "code":
                    try:
                        code = ast.literal_eval(value)
                    except ValueError:
                        continue
                    if isinstance(code, int) and -32768 <= code <= -32000:
                        lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_module_class_and_function_sizes(path):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert text.count("\n") <= MAX_MODULE, f"{text.count(chr(10))} lines: split the module"
    big_classes = [c for c in _spans(tree, (ast.ClassDef,)) if c[0] > MAX_CLASS]
    assert big_classes == [], f"classes over {MAX_CLASS} lines"
    long_functions = [f for f in _spans(tree, (ast.FunctionDef, ast.AsyncFunctionDef)) if f[0] > MAX_FUNCTION]
    assert long_functions == [], f"functions over {MAX_FUNCTION} lines"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_no_live_object_patched_and_no_hand_written_error(path):
    text = path.read_text(encoding="utf-8")
    patched = "ignore[method-assign]" in text
    assert not patched, "an attribute of a live object is replaced"
    rel = path.relative_to(PACKAGE).as_posix()
    if not rel.startswith(FUNNEL):
        assert _raw_error_dicts(ast.parse(text)) == [], "a JSON-RPC error written outside the funnel"


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_absolute_imports():
    graph = import_graph()
    assert "wiremcp.jsonrpc" in graph["wiremcp.protocol.errors"] or any(
        m.startswith("wiremcp.jsonrpc") for m in graph["wiremcp.protocol.errors"]
    )


def test_the_servers_public_names_are_few():
    import wiremcp.server

    assert len(wiremcp.server.__all__) <= 45
