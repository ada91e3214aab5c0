"""``wiremcp run``: find the `Server` in a file or module and serve it.

``--http --workers N`` (N > 1) serves on N uvicorn worker processes that
share one listening socket (docs/deploy.md). Rules:

* every worker loads the target itself (`worker_app`, the factory uvicorn
  imports in each worker; the target and the app options travel in the
  ``WIREMCP_RUN_*`` environment variables);
* the parent loads the target first, so a broken target fails once, with
  the usual message, before any worker starts;
* several workers need a shared requestState key: without
  ``WIREMCP_STATE_KEY`` (or ``Server(state_keys=...)``) it is an error at
  start-up, since a retry reaching another worker would fail verification;
* without ``WIREMCP_REDIS_URL`` (or a shared ``backend=``) the workers share
  nothing else: a warning says that change notifications and legacy
  sessions then stay within one worker;
* a worker told to stop (SIGTERM, SIGINT; uvicorn's supervisor passes
  them on) first ends its open ``subscriptions/listen`` streams with their
  ``complete`` result, as a single process does (`MCPApp`'s lifespan).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Literal

from ..server import Server

__all__ = ["load_server", "run_target", "worker_app", "WORKERS_TARGET_ENV", "WORKERS_OPTIONS_ENV"]

#: The target each worker loads, and the JSON of the app options (path, allowed hosts and origins, body size).
WORKERS_TARGET_ENV = "WIREMCP_RUN_TARGET"
WORKERS_OPTIONS_ENV = "WIREMCP_RUN_APP_OPTIONS"

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


def run_target(target: str, transport: Literal["stdio", "http"] = "stdio", workers: int = 1, **limits: Any) -> int:
    try:
        server = load_server(target)
    except TargetError as exc:
        print(f"wiremcp run: {exc}", file=sys.stderr)
        return 2
    if workers < 1:
        print("wiremcp run: --workers must be at least 1", file=sys.stderr)
        return 2
    if workers > 1:
        if transport != "http":
            print("wiremcp run: --workers needs --http (stdio serves one client)", file=sys.stderr)
            return 2
        return _run_workers(server, target, workers, **limits)
    from .. import run

    try:
        run(server, transport, **limits)
    except KeyboardInterrupt:
        return 130
    return 0


def _run_workers(
    server: Server,
    target: str,
    workers: int,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    log_level: str | None = None,
    **options: Any,
) -> int:
    """Serve ``target`` on ``workers`` uvicorn worker processes (see the module docs)."""
    import json

    if not server.state_sealer.configured:
        print(
            f"wiremcp run: --workers {workers} needs a requestState key shared by the workers: set "
            "WIREMCP_STATE_KEY (16+ bytes; several, comma-separated, to rotate) or Server(state_keys=...)",
            file=sys.stderr,
        )
        return 2
    if not server.backend.shared:
        print(
            f"wiremcp run: warning: {workers} workers without WIREMCP_REDIS_URL share no state: change "
            "notifications reach only the listeners of the worker where the change happens, and a legacy "
            "(2025-11-25) session works only while its requests reach the worker that opened it",
            file=sys.stderr,
            flush=True,
        )
    from ..transports.http import uvicorn_config

    allowed_hosts = options.pop("allowed_hosts", None)
    if allowed_hosts is None and host not in ("", "0.0.0.0", "::") and host not in ("localhost", "127.0.0.1", "::1"):
        allowed_hosts = ["localhost", "127.0.0.1", "[::1]", f"[{host}]" if ":" in host else host]
    if allowed_hosts is not None:
        options["allowed_hosts"] = list(allowed_hosts)
    options["path"] = path
    os.environ[WORKERS_TARGET_ENV] = target
    os.environ[WORKERS_OPTIONS_ENV] = json.dumps(options)
    config = uvicorn_config(f"{__name__}:worker_app", host=host, port=port, log_level=log_level)
    config.factory = True
    config.workers = workers
    sock = config.bind_socket()
    print(
        f"wiremcp: serving {server.name!r} (Streamable HTTP, {workers} workers) at "
        f"http://{f'[{host}]' if ':' in host else host}:{sock.getsockname()[1]}{path}",
        file=sys.stderr,
        flush=True,
    )
    from uvicorn.supervisors import Multiprocess

    try:
        Multiprocess(config, sockets=[sock]).run()
    except KeyboardInterrupt:
        return 130
    finally:
        sock.close()
    return 0


def worker_app() -> Any:
    """The ASGI app of one worker (uvicorn calls this factory in each worker process).

    Its lifespan watches SIGTERM and SIGINT as with one process (transports/http/_shutdown.py):
    a worker told to stop ends its streams with their result first.
    """
    import json

    from ..transports.http import MCPApp

    server = load_server(os.environ[WORKERS_TARGET_ENV])
    return MCPApp(server, **json.loads(os.environ.get(WORKERS_OPTIONS_ENV, "{}")))
