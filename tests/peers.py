"""Foreign peers (other SDKs, client frameworks, hosts) in environments of their own.

The rules this module keeps:

- A peer is a name and a pinned set of packages, from PyPI (a virtual environment) or from the
  npm registry (a ``node_modules`` folder). The pins live in :data:`PYTHON_PEERS` and
  :data:`NODE_PEERS`, nowhere else; the docs' compatibility table quotes these versions.
- A peer is built once per machine and kept outside the clone, under
  ``$WIREMCP_PEER_CACHE`` (default ``~/.cache/wiremcp/peers``), in a folder named after the
  peer and a hash of its pins and of the Python that built it: a changed pin builds a new
  folder, an unchanged one is reused by the next run on the same machine (CI included).
- A folder counts as built only when its ``.complete`` marker exists; the marker is written
  last, so an interrupted build is started again, never half-used. Builds of the same peer
  from two processes take turns on a lock file.
- Nothing here skips: a peer that cannot be built fails the test that asked for it, with
  the installer's output in the message (.ci/run installs everything the suite needs).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

#: Python peers: name -> pip requirements (exact pins). pydantic 2.12 dropped a private helper that mcp
#: up to 1.20 imports (``eval_type_backport``): those releases get the pydantic 2.11 of their day.
PYTHON_PEERS: dict[str, tuple[str, ...]] = {
    "mcp-1.7.1": ("mcp==1.7.1", "pydantic==2.11.10"),
    "mcp-1.12.4": ("mcp==1.12.4", "pydantic==2.11.10"),
    "mcp-1.20.0": ("mcp==1.20.0", "pydantic==2.11.10"),
    "mcp-1.30.0": ("mcp==1.30.0",),
    # The client frameworks of the interop matrix (tests/interop/test_frameworks.py).
    "openai-agents-0.24.0": ("openai-agents==0.24.0",),
    "langchain-mcp-adapters-0.3.2": ("langchain-mcp-adapters==0.3.2",),
    "pydantic-ai-slim-2.68.0": ("pydantic-ai-slim[mcp]==2.68.0",),
    "fastmcp-4.2.3": ("fastmcp==4.2.3",),
    "mcp-use-1.7.1": ("mcp-use==1.7.1",),
    "llama-index-tools-mcp-0.6.0": ("llama-index-tools-mcp==0.6.0",),
}

#: Node peers: name -> npm package specs (exact pins).
NODE_PEERS: dict[str, tuple[str, ...]] = {
    # The host (tests/interop/test_claude_code.py).
    "claude-code-2.1.328": ("@anthropic-ai/claude-code@2.1.328",),
    # The TypeScript SDK's client, and its reference server (tests/interop/test_frameworks.py).
    "mcp-sdk-1.32.2": ("@modelcontextprotocol/sdk@1.32.2",),
    "server-everything-2026.8.31": ("@modelcontextprotocol/server-everything@2026.8.31",),
}


def cache_root() -> Path:
    return Path(os.environ.get("WIREMCP_PEER_CACHE") or Path.home() / ".cache" / "wiremcp" / "peers")


def _folder(name: str, pins: tuple[str, ...], kind: str) -> Path:
    key = "\n".join((kind, sys.version, *pins)).encode()
    return cache_root() / f"{name}-{hashlib.sha256(key).hexdigest()[:12]}"


def _run(argv: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def _build(folder: Path, make: "list[list[str]]", cwd_is_folder: bool = False) -> Path:
    folder.parent.mkdir(parents=True, exist_ok=True)
    marker = folder / ".complete"
    with open(str(folder) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for argv in make:
            _run(argv, cwd=folder if cwd_is_folder else None)
        marker.write_text("ok\n")
    return folder


def python_peer(name: str) -> Path:
    """The ``python`` of peer *name*'s environment, built on first use."""
    pins = PYTHON_PEERS[name]
    folder = _folder(name, pins, "python")
    python = folder / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    _build(folder, [[sys.executable, "-m", "venv", str(folder)], [*pip, *pins]])
    return python


def node_peer(name: str) -> Path:
    """The folder holding peer *name*'s ``node_modules``, installed on first use."""
    pins = NODE_PEERS[name]
    folder = _folder(name, pins, "node")
    npm = shutil.which("npm") or "npm"
    make = [[npm, "init", "-y"], [npm, "install", "--no-audit", "--no-fund", "--save-exact", *pins]]
    return _build(folder, make, cwd_is_folder=True)


def build_all(jobs: int = 2) -> dict[str, float]:
    """Build every peer not yet built (``jobs`` at a time); the seconds each took, by name."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    def one(name: str) -> tuple[str, float]:
        started = time.monotonic()
        if name in PYTHON_PEERS:
            python_peer(name)
        else:
            node_peer(name)
        return name, time.monotonic() - started

    names = [*PYTHON_PEERS, *NODE_PEERS]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return dict(pool.map(one, names))


def main(argv: list[str]) -> int:
    """``python tests/peers.py --build-all [--jobs N]``: build every peer, report the times."""
    import time

    if not argv or argv[0] != "--build-all":
        print("usage: python tests/peers.py --build-all [--jobs N]", file=sys.stderr)
        return 2
    jobs = int(argv[2]) if len(argv) > 2 and argv[1] == "--jobs" else 2
    started = time.monotonic()
    for name, seconds in build_all(jobs).items():
        print(f"peer {name}: {seconds:.1f}s", flush=True)
    print(f"peers: all built in {time.monotonic() - started:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
