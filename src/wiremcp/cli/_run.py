"""``wiremcp run``: find the `Server` in a file or module and serve it."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Literal

from ..server import Server

__all__ = ["load_server", "run_target"]

#: Attribute names tried, in order, when the target names none.
CONVENTIONAL_NAMES = ("server", "mcp", "app")


class TargetError(Exception):
    pass


def _load_module(spec: str) -> ModuleType:
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        path = os.path.abspath(spec)
        if not os.path.isfile(path):
            raise TargetError(f"no such file: {spec}")
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        name = "_wiremcp_target_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        module_spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        raise TargetError(f"cannot import {spec!r}: {exc}") from None


def load_server(target: str) -> Server:
    """The `Server` named by ``path.py``, ``path.py:attr``, ``pkg.mod`` or ``pkg.mod:attr``."""
    spec, _, attr = target.partition(":")
    if len(spec) == 1 and attr.startswith(("\\", "/")):  # a Windows drive letter, not an attribute
        spec, attr = target, ""
    module = _load_module(spec)
    if attr:
        obj = getattr(module, attr, None)
        if not isinstance(obj, Server):
            raise TargetError(f"{spec} has no Server named {attr!r}")
        return obj
    for name in CONVENTIONAL_NAMES:
        obj = getattr(module, name, None)
        if isinstance(obj, Server):
            return obj
    found = [v for v in vars(module).values() if isinstance(v, Server)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise TargetError(f"{spec} defines no wiremcp.Server")
    raise TargetError(f"{spec} defines several Servers; name one as {spec}:NAME")


def run_target(target: str, transport: Literal["stdio", "http"] = "stdio", **limits: Any) -> int:
    try:
        server = load_server(target)
    except TargetError as exc:
        print(f"wiremcp run: {exc}", file=sys.stderr)
        return 2
    server.prefer_durable_tasks()  # tasks survive a restart: SQLite under the user's state dir (docs/tasks.md)
    from .. import run

    try:
        run(server, transport, **limits)
    except KeyboardInterrupt:
        return 130
    return 0
