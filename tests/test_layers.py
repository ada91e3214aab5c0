"""docs/architecture.md, Layers: a layer imports only the layers below it, and only their public names.

jsonrpc → protocol → auth → server | client → transports → cli (top-level
package and examples may use anything). ``auth`` (OAuth: wiremcp.auth.server
verifies tokens) sits below server and client, which may use it; the server
core does not (``ctx.auth`` is duck-typed), only the HTTP transport does. Checked on the source, imports inside
functions included, so a lazy import cannot hide a dependency upwards.

Public means: no part of the imported module's dotted name, and no imported
name, starts with ``_`` (``from ...server._reply import settle`` and
``from ...server import _reply`` both fail). Within its own layer a module may
import what it likes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "wiremcp"
#: auth (wiremcp.auth) sits between client and transports: its OAuth client uses the client's public
#: names (ClientError) and is handed to a transport as a plain object; its resource-server side
#: (wiremcp.auth.server) is used by the HTTP server transport (transports/http/_auth.py).
#: backends (wiremcp.backends) holds the state several worker processes share (docs/deploy.md): the
#: server builds its change bus from it and the HTTP transport its legacy sessions; it imports no server.
#: bridge (wiremcp.proxy) serves one server through a client to another: it needs server, client and
#: the client's transports, and the CLI's `wiremcp proxy` uses it.
#: group (wiremcp.ClientGroup) is one client over many servers: it builds each server's transport.
RANK = {"jsonrpc": 0, "protocol": 1, "backends": 1.5, "server": 2, "client": 2, "auth": 2.5, "transports": 3, "bridge": 3.5, "group": 3.5, "cli": 4}
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
    return [module for module, _ in _imported_names(path)]


def _imported_names(path: Path) -> list[tuple[str, list[str]]]:
    """Each import of ``path``: the absolute module and the names taken from it (none for ``import x``)."""
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _resolve(path, node.level, node.module) if node.level else (node.module or "")
            out.append((module, [alias.name for alias in node.names]))
    return out


def _private_part(module: str, names: list[str]) -> str | None:
    """The first private part of an import (a module name part or an imported name), if any."""
    for part in module.split(".")[1:] + names:
        if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
            return part
    return None


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


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(PACKAGE)) for p in FILES])
def test_layer_imports_only_public_names_of_other_layers(path):
    own = path.relative_to(PACKAGE).parts[0]
    for module, names in _imported_names(path):
        other = _layer_of(module)
        if other is None or other == own or (own, other) in ALLOWED:
            continue
        private = _private_part(module, names)
        assert private is None, (
            f"{path.relative_to(PACKAGE)} ({own}) imports the private {private!r} of {other} ({module}); "
            f"use the names {other}/__init__.py exports"
        )


def test_the_checker_finds_private_imports():
    assert _private_part("wiremcp.server._reply", ["settle"]) == "_reply"
    assert _private_part("wiremcp.server", ["_reply"]) == "_reply"
    assert _private_part("wiremcp.client", ["ConnectionClosed", "Receiver"]) is None
    assert _private_part("wiremcp.protocol.meta", ["PROTOCOL_VERSION"]) is None
    assert _private_part("wiremcp.server.__init__", []) is None


def test_the_checker_reads_every_form_of_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "import wiremcp.client._errors\n"
        "from wiremcp.server._reply import settle\n"
        "def lazy():\n    from wiremcp.server import _legacy\n"
    )
    found = _imported_names(source)
    assert [_private_part(m, n) for m, n in found] == ["_errors", "_reply", "_legacy"]


def test_stdio_server_imports_no_http_or_client_code():
    import subprocess
    import sys

    code = (
        "import sys, wiremcp, wiremcp.transports.stdio, wiremcp.cli._run;"
        "bad = [m for m in sys.modules if m.startswith(('wiremcp.client', 'wiremcp.transports.http', 'uvicorn', 'httpx', 'pydantic',"
        " 'wiremcp.auth', 'jwt', 'cryptography', 'redis', 'wiremcp.backends.redis'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
