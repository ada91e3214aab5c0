"""``wiremcp run``: find the `Server` a TARGET names (`_target`) and serve it.

Rules:

* a target that names no Server is one message on stderr, exit status 2;
* over HTTP the address is tried before the server starts: a port in use is
  one line naming ``host:port`` and ``--port``, exit status 2;
* over stdio nothing goes to stdout but MCP, and with ``--log-level INFO``
  one line on stderr says what is served (name, version, transport, tools);
* Ctrl-C ends the server with exit status 130 and no traceback;
* a server with telemetry on gets the OpenTelemetry SDK set up from the
  ``OTEL_*`` variables, unless it set up its own (``_otel.py``), in each
  worker too;
* ``--log-format json`` makes every log line on stderr one JSON object and
  adds one line per request (``_request_log.py``), in each worker
  too; ``--metrics PORT`` serves Prometheus metrics at ``/metrics`` on that
  port of ``--host`` (``_prometheus.py``), apart from the MCP
  endpoint but behind its ``Host``/``Origin`` lists, and only with one
  process (each worker would count alone).

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
  ``complete`` result, as a single process does (`MCPApp`'s lifespan);
* ``--log-level`` and ``--log-format`` hold in every worker as in the
  parent (they travel in ``WIREMCP_RUN_LOG_LEVEL`` and
  ``WIREMCP_RUN_LOG_FORMAT``; a spawned worker starts with no logging set
  up), and each worker logs one line at INFO when it starts: its process id
  and what it serves.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from typing import TYPE_CHECKING, Any, Literal

from .. import run as serve
from ._output import INTERRUPTED, OK, OptionsError, fail, install_hint
from ._run_caps import CAP_OPTIONS, add_cap_options, cap_options
from ._target import CONVENTIONAL_NAMES, TargetError, load_server

if TYPE_CHECKING:
    from ..server import Server

__all__ = [
    "add_arguments",
    "handle",
    "CONVENTIONAL_NAMES",
    "TargetError",
    "load_server",
    "run_target",
    "address_problem",
    "worker_app",
    "WORKERS_TARGET_ENV",
    "WORKERS_OPTIONS_ENV",
]

#: The target each worker loads, and the JSON of the app options (path, allowed hosts and origins, body size).
WORKERS_TARGET_ENV = "WIREMCP_RUN_TARGET"
WORKERS_OPTIONS_ENV = "WIREMCP_RUN_APP_OPTIONS"
#: ``--log-format`` and ``--log-level`` for the workers.
WORKERS_LOG_FORMAT_ENV = "WIREMCP_RUN_LOG_FORMAT"
WORKERS_LOG_LEVEL_ENV = "WIREMCP_RUN_LOG_LEVEL"
#: The stderr log line format of ``wiremcp run`` (the parent's and each worker's).
LOG_LINE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("wiremcp.cli")


#: ``wiremcp run`` flags of the task caps (docs/limits.md); each becomes its ``WIREMCP_*`` setting (`TASK_LIMIT_ENV`).
TASK_LIMIT_FLAGS = (
    ("--max-tasks", "N", "live tasks the task store keeps; past it a new task gets -32000 (HTTP 503) (default: 10000)"),
    ("--max-tasks-per-owner", "N", "live tasks one caller may hold; past it -32000 (HTTP 429) (default: 1000)"),
    ("--task-max-ttl", "MS", "longest TTL a task is kept, in ms; a longer requested TTL is clamped (default: 86400000)"),
)
#: ``run`` options that mean something only with ``--http``.
_HTTP_ONLY = ("host", "port", "path", "allow_host", "allow_origin", "metrics", "legacy_sse", *CAP_OPTIONS)


def add_arguments(run: argparse.ArgumentParser, command: str) -> None:
    """The arguments of ``wiremcp run``."""
    run.add_argument("target", help="path/to/server.py or package.module, optionally :attribute")
    run.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,  # --log-level info, as uvicorn spells it, or INFO
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="level of the server's own log, written to stderr (default: WARNING)",
    )
    run.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="json: every stderr log line is a JSON object, plus one line per request (docs/observability.md)",
    )
    run.add_argument(
        "--max-message-size",
        type=int,
        default=None,
        metavar="BYTES",
        help="largest message accepted (default: 16 MiB); longer lines get a -32600 reply (HTTP: 413)",
    )
    for flag, metavar, what in TASK_LIMIT_FLAGS:
        run.add_argument(flag, type=int, default=None, metavar=metavar, help=what)
    http = run.add_argument_group("Streamable HTTP (needs the [http] extra)")
    http.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    http.add_argument("--host", help="address to bind (default: 127.0.0.1)")
    http.add_argument("--port", type=int, help="port to bind; 0 picks a free one (default: 8000)")
    http.add_argument("--path", help="path of the MCP endpoint (default: /mcp)")
    http.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="worker processes sharing the port (needs WIREMCP_STATE_KEY; share state with WIREMCP_REDIS_URL)",
    )
    http.add_argument(
        "--allow-host",
        action="append",
        metavar="HOST[:PORT]",
        help="a Host header to accept, repeatable; replaces the local defaults ('*' accepts any)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="an Origin to accept, e.g. https://app.example.com, repeatable; replaces the local defaults",
    )
    http.add_argument(
        "--legacy-sse",
        action="store_true",
        default=None,
        help="also serve the deprecated 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages) for old hosts",
    )
    http.add_argument(
        "--metrics",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (needs the [otel] extra; 0 picks a free port)",
    )
    add_cap_options(http)  # the endpoint's caps (_run_caps)


def handle(args: argparse.Namespace, tail: list[str] | None) -> int:
    """``wiremcp run``: check the options, set up the log, serve (`run_target`)."""
    export_task_limits(args)
    if not args.http:
        given = [f"--{name.replace('_', '-')}" for name in _HTTP_ONLY if getattr(args, name) is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise OptionsError(f"{', '.join(given)} {verb} only with --http (stdio has no address)")
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format=LOG_LINE_FORMAT)
    if not args.http:
        limits = {} if args.max_message_size is None else {"max_message_size": args.max_message_size}
        return run_target(args.target, workers=args.workers, log_format=args.log_format, **limits)
    if importlib.util.find_spec("uvicorn") is None:
        return fail("run", f"--http needs uvicorn: {install_hint('http')}")
    return run_target(
        args.target, "http", workers=args.workers, log_format=args.log_format, metrics_port=args.metrics, **_http_options(args)
    )


def _http_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `serve_http` options of ``wiremcp run --http`` (with the defaults of the help)."""
    options: dict[str, Any] = {
        "host": "127.0.0.1" if args.host is None else args.host,
        "port": 8000 if args.port is None else args.port,
        "path": "/mcp" if args.path is None else args.path,
        "log_level": args.log_level.lower(),
    }
    if args.max_message_size is not None:
        options["max_body_size"] = args.max_message_size
    if args.allow_host:
        options["allowed_hosts"] = args.allow_host
    if args.allow_origin:
        options["allowed_origins"] = args.allow_origin
    options.update(cap_options(args))
    if args.legacy_sse:
        if args.workers > 1:  # its sessions live in one process: a POST must reach the worker holding the stream
            raise OptionsError("--legacy-sse serves its sessions from one process; it does not combine with --workers")
        options["legacy_sse"] = True
    return options


def address_problem(host: str, port: int, option: str = "--port") -> str | None:
    """Why ``host:port`` cannot be bound, or None when it can (`wiremcp.transports.http.address_problem`:
    the one message for a busy port, ``run``'s, ``proxy``'s, ``inspect --web``'s and ``wiremcp.run``'s)."""
    from ..transports.http import address_problem as problem  # HTTP only: stdio never loads it

    return problem(host, port, option)


#: The ``wiremcp run`` task caps and the settings they become (`Server` reads them when built).
TASK_LIMIT_ENV = {"max_tasks": "WIREMCP_MAX_TASKS", "max_tasks_per_owner": "WIREMCP_MAX_OWNER_TASKS", "task_max_ttl": "WIREMCP_TASK_MAX_TTL_MS"}


def export_task_limits(args: Any) -> None:
    """``--max-tasks``, ``--max-tasks-per-owner``, ``--task-max-ttl``: set their variables (workers inherit them)."""
    for name, variable in TASK_LIMIT_ENV.items():
        if getattr(args, name, None) is not None:
            os.environ[variable] = str(getattr(args, name))


def run_target(
    target: str,
    transport: Literal["stdio", "http"] = "stdio",
    workers: int = 1,
    *,
    log_format: Literal["text", "json"] = "text",
    metrics_port: int | None = None,
    **limits: Any,
) -> int:
    """Serve the `Server` ``target`` names (see the module's rules); the exit status."""
    if log_format == "json":
        json_records()  # before the first line, so that every line is JSON
    try:
        server = load_server(target)
    except TargetError as exc:
        return fail("run", str(exc))
    problem = _start_problem(transport, workers, metrics_port, limits)
    if problem is not None:
        return fail("run", problem)
    if transport == "stdio":
        log.info(
            "serving %r version %s over stdio, %d tool(s)", server.name, server.version or "?", len(server.tools)
        )
    server.prefer_durable_tasks()  # tasks survive a restart: SQLite under the user's state dir (docs/tasks.md)
    if workers > 1:
        os.environ[WORKERS_LOG_FORMAT_ENV] = log_format
        os.environ[WORKERS_LOG_LEVEL_ENV] = logging.getLevelName(logging.getLogger().level)
        return _run_workers(server, target, workers, **limits)
    problem = observe(server, log_format)
    if problem is None and metrics_port is not None:
        problem = _serve_metrics(server, metrics_port, **limits)
    if problem is not None:
        return fail("run", problem)
    try:
        serve(server, transport, **limits)
    except KeyboardInterrupt:
        return INTERRUPTED
    return OK


def _start_problem(transport: str, workers: int, metrics_port: int | None, limits: dict[str, Any]) -> str | None:
    """Why the server cannot start as asked (the workers, the address), or None."""
    if workers < 1:
        return "--workers must be at least 1"
    if metrics_port is not None and workers > 1:
        return "--metrics serves one process's counts; it does not combine with --workers"
    if transport != "http":
        return "--workers needs --http (stdio serves one client)" if workers > 1 else None
    host = limits.get("host", "127.0.0.1")
    problem = address_problem(host, limits.get("port", 8000))
    if problem is None and metrics_port is not None:
        problem = address_problem(host, metrics_port, "--metrics")
    return problem


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
        return fail(
            "run",
            f"--workers {workers} needs a requestState key shared by the workers: set "
            "WIREMCP_STATE_KEY (16+ bytes; several, comma-separated, to rotate) or Server(state_keys=...)",
        )
    if not server.backend.shared:
        print(
            f"wiremcp run: warning: {workers} workers without WIREMCP_REDIS_URL share no state: change "
            "notifications reach only the listeners of the worker where the change happens, and a legacy "
            "(2025-11-25) session works only while its requests reach the worker that opened it",
            file=sys.stderr,
            flush=True,
        )
    from ..transports.http import from_environment, uvicorn_config  # HTTP only: a stdio server never loads it

    options = from_environment(options)  # WIREMCP_* caps; the uvicorn ones are the supervisor's to apply
    engine = {name: options.pop(name) for name in ("limit_concurrency", "max_head_size", "trusted_proxies") if name in options}
    allowed_hosts = options.pop("allowed_hosts", None)
    if allowed_hosts is None and host not in ("", "0.0.0.0", "::") and host not in ("localhost", "127.0.0.1", "::1"):
        allowed_hosts = ["localhost", "127.0.0.1", "[::1]", f"[{host}]" if ":" in host else host]
    if allowed_hosts is not None:
        options["allowed_hosts"] = list(allowed_hosts)
    options["path"] = path
    os.environ[WORKERS_TARGET_ENV] = target
    os.environ[WORKERS_OPTIONS_ENV] = json.dumps(options)
    config = uvicorn_config(f"{__name__}:worker_app", host=host, port=port, log_level=log_level, **engine)
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
        return INTERRUPTED
    finally:
        sock.close()
    return OK


def worker_app() -> Any:
    """The ASGI app of one worker (uvicorn calls this factory in each worker process).

    Its lifespan watches SIGTERM and SIGINT as with one process (transports/http/_shutdown.py):
    a worker told to stop ends its streams with their result first.
    """
    import json

    from ..transports.http import MCPApp  # HTTP only, as above

    server = load_server(os.environ[WORKERS_TARGET_ENV])
    server.prefer_durable_tasks()  # as with one process: SQLite unless a store (or Redis) was chosen
    log_format = os.environ.get(WORKERS_LOG_FORMAT_ENV, "text")
    if not logging.getLogger().handlers:  # a spawned worker: stderr, at the parent's level
        logging.basicConfig(
            stream=sys.stderr, level=os.environ.get(WORKERS_LOG_LEVEL_ENV, "WARNING"), format=LOG_LINE_FORMAT
        )
    problem = observe(server, "json" if log_format == "json" else "text")
    if problem is not None:
        raise SystemExit(f"wiremcp run: {problem}")
    log.info(
        "worker %d: serving %r version %s over Streamable HTTP, %d tool(s)",
        os.getpid(), server.name, server.version or "?", len(server.tools),
    )  # fmt: skip
    return MCPApp(server, **json.loads(os.environ.get(WORKERS_OPTIONS_ENV, "{}")))


def observe(server: Any, log_format: Literal["text", "json"]) -> str | None:
    """The OpenTelemetry SDK (when the server's telemetry is on) and the JSON log; what went wrong, or None."""
    if getattr(server, "telemetry", False):
        from ._otel import configure_sdk  # telemetry on only: the OpenTelemetry SDK is the [otel] extra

        try:
            configure_sdk(server.name)
        except (ValueError, ImportError) as exc:
            return str(exc)
    if log_format == "json":
        from ._request_log import install_request_log  # --log-format json only: not in a plain start

        json_records()
        requests = logging.getLogger("wiremcp.requests")
        requests.setLevel(logging.INFO)  # one line per request whatever --log-level says
        install_request_log(server, requests)
    return None


def json_records() -> None:
    """Every handler of the root logger writes JSON lines from now on."""
    from ._request_log import JSONFormatter  # --log-format json only, as above

    for handler in logging.getLogger().handlers:
        handler.setFormatter(JSONFormatter())


def _serve_metrics(server: Any, metrics_port: int, host: str = "127.0.0.1", **limits: Any) -> str | None:
    from ._prometheus import install_metrics, serve_metrics  # --metrics only (HTTP)

    try:
        registry = install_metrics(server)
    except ImportError as exc:
        return str(exc)
    lists = {"allowed_hosts": limits.get("allowed_hosts"), "allowed_origins": limits.get("allowed_origins")}
    bound = serve_metrics(registry, host, metrics_port, **lists)  # the MCP endpoint's Host and Origin lists
    log.info("metrics at http://%s:%d/metrics", f"[{host}]" if ":" in host else host, bound)
    return None
