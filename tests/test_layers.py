"""DESIGN.md, Layers: a layer imports only the layers below it.

jsonrpc → protocol → server | client → transports → cli (top-level package
and examples may use anything). Checked on the source, imports inside
functions included, so a lazy import cannot hide a dependency upwards.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "wiremcp"
#: auth (the OAuth client, wiremcp.auth) sits beside transports: it uses the client's public names
#: (ClientError) and is handed to a transport as a plain object, so neither imports the other.
RANK = {"jsonrpc": 0, "protocol": 1, "server": 2, "client": 2, "auth": 3, "transports": 3, "cli": 4}
#: Deliberate, documented exceptions: (importing layer, imported layer) -> reason.
ALLOWED = {
    # Client.stdio / Client.http / Client.memory are conveniences that build the
    # default transport, as httpx.Client builds its default transport; the
    # imports are lazy, so `import wiremcp.client` loads no transport.
    ("client", "transports"): "Client's convenience constructors",
}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "wiremcp" or len(parts) < 2:
        return None
    return parts[1] if parts[1] in RANK else None


def _resolve(path: Path, level: int, module: str | None) -> str:
    """The absolute name of a relative import (``from ..x import y`` in ``path``)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    parts.pop()  # the module itself (or __init__): what remains is its package
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.append(_resolve(path, node.level, node.module) if node.level else (node.module or ""))
    return out


def test_the_checker_resolves_relative_imports():
    server = PACKAGE / "server" / "_server.py"
    assert _resolve(server, 2, "jsonrpc") == "wiremcp.jsonrpc"
    assert _resolve(server, 1, "_tools") == "wiremcp.server._tools"
    assert _resolve(PACKAGE / "server" / "__init__.py", 1, "_server") == "wiremcp.server._server"
    assert _resolve(PACKAGE / "transports" / "http" / "_app.py", 3, "server") == "wiremcp.server"


FILES = sorted(p for p in PACKAGE.rglob("*.py") if _layer_of("wiremcp." + p.relative_to(PACKAGE).parts[0]) is not None)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_layer_imports_only_below(path):
    own = path.relative_to(PACKAGE).parts[0]
    for module in _imports(path):
        other = _layer_of(module)
        if other is None or other == own:
            continue
        if (own, other) in ALLOWED:
            continue
        assert RANK[other] < RANK[own], f"{path.relative_to(PACKAGE)} ({own}) imports {module} ({other})"


def test_stdio_server_imports_no_http_or_client_code():
    import subprocess
    import sys

    code = (
        "import sys, wiremcp, wiremcp.transports.stdio, wiremcp.cli._run;"
        "bad = [m for m in sys.modules if m.startswith(('wiremcp.client', 'wiremcp.transports.http', 'wiremcp.auth', 'uvicorn', 'httpx', 'pydantic', 'jwt', 'cryptography'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
