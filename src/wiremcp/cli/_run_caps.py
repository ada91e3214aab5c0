"""``wiremcp run --http``: the endpoint's caps as command-line options.

Each option names a `serve_http` option and has a ``WIREMCP_*`` variable
(``wiremcp.transports.http.HTTP_ENV``); the option wins over the variable,
which wins over the default (docs/limits.md lists them). A per-client cap
or ``--limit-concurrency`` takes a positive count or ``off``.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_cap_options", "cap_options", "CAP_OPTIONS"]

#: The options' destinations (each applies only with --http).
CAP_OPTIONS = (
    "max_sessions",
    "max_sessions_per_client",
    "max_listens_per_client",
    "limit_concurrency",
    "max_head_size",
    "trusted_proxy",
)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value


def _cap(text: str) -> int | str:
    return "off" if text.strip().lower() in ("off", "none") else _count(text)


def add_cap_options(group: Any) -> None:
    """The cap options, in ``group`` (the Streamable HTTP group of ``wiremcp run``)."""
    group.add_argument("--max-sessions", type=_count, metavar="N", help="live 2025-11-25 sessions (default: 10000)")
    group.add_argument(
        "--max-sessions-per-client", type=_cap, metavar="N|off",
        help="live legacy sessions per client: per token principal, else per address (default: 1000)",
    )  # fmt: skip
    group.add_argument(
        "--max-listens-per-client", type=_cap, metavar="N|off",
        help="open subscriptions/listen streams per client, counted as above (default: 256)",
    )  # fmt: skip
    group.add_argument(
        "--limit-concurrency", type=_cap, metavar="N|off", help="open connections before 503 (default: 1000)"
    )
    group.add_argument("--max-head-size", type=_count, metavar="BYTES", help="request line and headers (default: 65536)")
    group.add_argument(
        "--trusted-proxy", action="append", metavar="ADDRESS",
        help="a reverse proxy whose X-Forwarded-For names the client (address or network), repeatable",
    )  # fmt: skip


def cap_options(args: argparse.Namespace) -> dict[str, Any]:
    """The `serve_http` options the command line gave (``off``: None, no cap)."""
    given: dict[str, Any] = {}
    for name in CAP_OPTIONS:
        value = getattr(args, name)
        if value is None:
            continue
        if name == "trusted_proxy":
            given["trusted_proxies"] = list(value)
        else:
            given[name] = None if value == "off" else value
    return given
