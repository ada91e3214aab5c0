"""docs/architecture.md, Layers: a layer imports only the layers below it, and only their public names.

The layer order is written in one place, `LAYERS` below; the "Layers" block
of docs/architecture.md is generated from it (run this file to rewrite it:
``python tests/test_layers.py``), and a test fails when the committed page
differs. Checked on the source, imports inside functions included, so a lazy
import cannot hide a dependency upwards.

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
ARCHITECTURE = PACKAGE.parent.parent / "docs" / "architecture.md"

#: The layer order, the one place it is written: (package, rank, what it holds). A layer imports only
#: layers of a lower rank; layers of the same rank do not import each other. docs/architecture.md's
#: "Layers" block is generated from this table (`render_layers`).
LAYERS: list[tuple[str, float, str]] = [
    ("jsonrpc", 0, "bytes ⇄ envelopes; exact errors; framing; id correlation. No I/O."),
    (
        "protocol",
        1,
        "MCP on top: revisions and eras, _meta, method names, error codes, sealed requestState, "
        "x-mcp-header rules, typed input answers.",
    ),
    (
        "backends",
        1.5,
        "the state several worker processes share (docs/deploy.md): the server builds its change bus "
        "from it, the HTTP transport its legacy sessions. Imports no server.",
    ),
    (
        "server",
        2,
        "Server (registration, dispatch, context, MRTR, subscriptions, the schema engine); "
        "server.transport: the server's transport contract.",
    ),
    ("client", 2, "ClientProtocol (sans-I/O) under the asyncio Client; the client's transport contract."),
    (
        "auth",
        2.5,
        "OAuth 2.1: the client flow (auth/*.py, using the client's public names) and the resource-server "
        "side (auth/server/, used by the HTTP server transport). Imported only when authorization is used.",
    ),
    (
        "transports",
        3,
        "stdio/, http/, memory/: each with its server and client side; sse/: the 2024-11-05 HTTP+SSE "
        "client, which the HTTP client falls back to.",
    ),
    ("bridge", 3.5, "wiremcp.proxy: a Server forwarding to a Client (either era, both ways)."),
    ("group", 3.5, "wiremcp.ClientGroup: one client over many servers (mcpServers JSON); builds each transport."),
    (
        "testing",
        3.5,
        "wiremcp.testing: a server and a client connected in one process, the pytest plugin, "
        "a headless-Chromium Apps host.",
    ),
    ("cli", 4, "wiremcp run, proxy, demo, inspect, call, read, prompt, login, ..."),
]
RANK = {name: rank for name, rank, _ in LAYERS}
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
        " 'wiremcp.auth', 'jwt', 'cryptography', 'redis', 'wiremcp.backends.redis', 'wiremcp.server.middleware'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


# The "Layers" block of docs/architecture.md, generated from LAYERS.

_BEGIN = "<!-- layers: generated from LAYERS in tests/test_layers.py; edit there, then run python tests/test_layers.py -->"
_END = "<!-- end of generated layers -->"


def render_layers() -> str:
    """The block between the markers: each layer with what it holds, and the order in one line."""
    import textwrap

    lines = ["```", "wiremcp/"]
    for name, _, holds in LAYERS:
        wrapped = textwrap.wrap(holds, width=64)
        lines.append(f"  {name + '/':<12} {wrapped[0]}")
        lines.extend(f"  {'':<12} {rest}" for rest in wrapped[1:])
    lines.append("```")
    ranks = sorted(set(RANK.values()))
    order = " → ".join(" | ".join(name for name, rank, _ in LAYERS if rank == r) for r in ranks)
    lines += ["", f"The order, lowest first (`|` joins layers of one rank, which do not import each other): {order}."]
    return "\n".join([_BEGIN, *lines, _END])


def _with_layers(page: str) -> str:
    start, end = page.index(_BEGIN), page.index(_END) + len(_END)
    return page[:start] + render_layers() + page[end:]


def test_the_architecture_page_draws_this_order():
    page = ARCHITECTURE.read_text()
    assert _BEGIN in page and _END in page, f"{ARCHITECTURE.name} lost its generated-layers markers"
    assert page == _with_layers(page), (
        "docs/architecture.md's Layers block differs from LAYERS in tests/test_layers.py; "
        "regenerate it with: python tests/test_layers.py"
    )


def test_every_package_has_a_rank():
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    unranked = packages - set(RANK) - {"_vendor", "examples"}
    assert unranked == set(), f"give {sorted(unranked)} a rank in LAYERS"


if __name__ == "__main__":
    ARCHITECTURE.write_text(_with_layers(ARCHITECTURE.read_text()))
    print(f"rewrote the Layers block of {ARCHITECTURE}")
