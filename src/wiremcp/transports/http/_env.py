"""The HTTP endpoint's caps from ``WIREMCP_*`` environment variables (`serve_http`, ``wiremcp run --http``).

Rules (those of the `Server` settings, server/_settings.py):

* an option given to `serve_http` (or on the ``wiremcp run`` command line)
  wins over the environment; the environment wins over the default;
* a value that does not parse is a `ValueError` naming the variable, never
  a silent default;
* a per-client cap or ``limit_concurrency`` reads a positive integer, or
  ``off`` (no cap: ``None``); the sizes read a positive integer;
  ``WIREMCP_TRUSTED_PROXIES`` reads addresses or networks separated by
  commas (``*`` trusts any: only when nothing else can reach the server).

=============================  ===================================  ============
option                         variable                             default
=============================  ===================================  ============
``max_sessions``               ``WIREMCP_MAX_SESSIONS``             10000
``max_sessions_per_client``    ``WIREMCP_MAX_SESSIONS_PER_CLIENT``  1000
``max_listens_per_client``     ``WIREMCP_MAX_LISTENS_PER_CLIENT``   256
``limit_concurrency``          ``WIREMCP_LIMIT_CONCURRENCY``        1000
``max_head_size``              ``WIREMCP_MAX_HEAD_SIZE``            65536
``trusted_proxies``            ``WIREMCP_TRUSTED_PROXIES``          (none)
=============================  ===================================  ============

docs/limits.md says what each one bounds; docs/deploy.md when to trust a proxy.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

__all__ = ["HTTP_ENV", "from_environment", "parse_cap", "parse_size", "parse_addresses"]


def parse_cap(text: str) -> int | None:
    """A positive count, or ``off``/``none`` for no cap."""
    low = text.strip().lower()
    if low in ("off", "none"):
        return None
    return parse_size(low)


def parse_size(text: str) -> int:
    """A positive integer."""
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"{text!r} is not positive")
    return value


def parse_addresses(text: str) -> list[str]:
    """Addresses or networks (``10.0.0.0/8``), separated by commas."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    if not found:
        raise ValueError("no address (list them separated by commas)")
    return found


#: Option → (variable, parser).
HTTP_ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    "max_sessions": ("WIREMCP_MAX_SESSIONS", parse_size),
    "max_sessions_per_client": ("WIREMCP_MAX_SESSIONS_PER_CLIENT", parse_cap),
    "max_listens_per_client": ("WIREMCP_MAX_LISTENS_PER_CLIENT", parse_cap),
    "limit_concurrency": ("WIREMCP_LIMIT_CONCURRENCY", parse_cap),
    "max_head_size": ("WIREMCP_MAX_HEAD_SIZE", parse_size),
    "trusted_proxies": ("WIREMCP_TRUSTED_PROXIES", parse_addresses),
}


def from_environment(options: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``options`` with each cap it does not name read from its variable, when that is set."""
    env = os.environ if environ is None else environ
    filled = dict(options)
    for name, (variable, parse) in HTTP_ENV.items():
        raw = env.get(variable)
        if name in filled or raw is None or raw == "":
            continue
        try:
            filled[name] = parse(raw)
        except ValueError as exc:
            raise ValueError(f"{variable}={raw!r}: {exc}") from None
    return filled
