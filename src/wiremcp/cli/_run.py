"""``wiremcp run``: find the `Server` a TARGET names (`_target`) and serve it.

Rules:

* a target that names no Server is one message on stderr, exit status 2;
* over HTTP the address is tried before the server starts: a port in use is
  one line naming ``host:port`` and ``--port``, exit status 2;
* over stdio nothing goes to stdout but MCP, and with ``--log-level INFO``
  one line on stderr says what is served (name, version, transport, tools);
* Ctrl-C ends the server with exit status 130 and no traceback;
* a server with telemetry on gets the OpenTelemetry SDK set up from the
  ``OTEL_*`` variables, unless it set up its own (``_otel.py``);
* ``--log-format json`` makes every log line on stderr one JSON object and
  adds one line per request (``server/_request_log.py``); ``--metrics PORT``
  serves Prometheus metrics at ``/metrics`` on that port of ``--host``
  (``server/_prometheus.py``), apart from the MCP endpoint.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
from typing import Any, Literal

from ._target import CONVENTIONAL_NAMES, TargetError, load_server

__all__ = ["CONVENTIONAL_NAMES", "TargetError", "load_server", "run_target", "address_problem"]

log = logging.getLogger("wiremcp.cli")


def address_problem(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be bound (as uvicorn binds it), or None when it can."""
    if port == 0:
        return None
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return f"cannot bind {host}:{port}: {exc.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            if exc.errno == errno.EADDRINUSE:
                return f"{shown} is already in use; stop what runs there, or pick another port with --port (0 picks a free one)"
            return f"cannot bind {shown}: {exc.strerror}"
    return None


def run_target(
    target: str,
    transport: Literal["stdio", "http"] = "stdio",
    *,
    log_format: Literal["text", "json"] = "text",
    metrics_port: int | None = None,
    **limits: Any,
) -> int:
    try:
        server = load_server(target)
    except TargetError as exc:
        print(f"wiremcp run: {exc}", file=sys.stderr)
        return 2
    if transport == "http":
        host = limits.get("host", "127.0.0.1")
        problem = address_problem(host, limits.get("port", 8000))
        if problem is None and metrics_port is not None:
            problem = address_problem(host, metrics_port)
            if problem is not None:
                problem = problem.replace("--port", "--metrics")
        if problem is not None:
            print(f"wiremcp run: {problem}", file=sys.stderr)
            return 2
    if getattr(server, "telemetry", False):
        from ._otel import configure_sdk

        try:
            configure_sdk(server.name)
        except (ValueError, ImportError) as exc:
            print(f"wiremcp run: {exc}", file=sys.stderr)
            return 2
    if log_format == "json":
        from ..server._request_log import JSONFormatter, install_request_log

        for handler in logging.getLogger().handlers:
            handler.setFormatter(JSONFormatter())
        requests = logging.getLogger("wiremcp.requests")
        requests.setLevel(logging.INFO)  # one line per request whatever --log-level says
        install_request_log(server, requests)
    if metrics_port is not None:
        from ..server._prometheus import install_metrics, serve_metrics

        try:
            registry = install_metrics(server)
        except ImportError as exc:
            print(f"wiremcp run: {exc}", file=sys.stderr)
            return 2
        host = limits.get("host", "127.0.0.1")
        bound = serve_metrics(registry, host, metrics_port)
        shown = f"[{host}]" if ":" in host else host
        log.info("metrics at http://%s:%d/metrics", shown, bound)
    else:
        log.info(
            "serving %r version %s over stdio, %d tool(s)", server.name, server.version or "?", len(server.tools)
        )
    server.prefer_durable_tasks()  # tasks survive a restart: SQLite under the user's state dir (docs/tasks.md)
    from .. import run

    try:
        run(server, transport, **limits)
    except KeyboardInterrupt:
        return 130
    return 0
