"""DNS-rebinding protection and content negotiation for the MCP endpoint.

Rules (streamable-http.mdx, "Security & Endpoint" and "Sending Messages"):

* ``Host`` must name an allowed host, else 403. By default: ``localhost``,
  ``127.0.0.1`` and ``[::1]`` on any port, and the address the connection
  arrived at (an IP literal in ``Host`` is never a rebinding: a rebound page
  carries the attacker's host name). A list given by the user replaces the
  defaults; ``"*"`` turns the check off.
* ``Origin``, when present, must be an allowed origin, else 403 (the
  specification's MUST). By default: ``http`` or ``https`` on ``localhost``,
  ``127.0.0.1`` or ``[::1]``, any port. ``"*"`` allows every origin.
* An entry without a port matches any port; one with a port matches only it.
  Host names compare case-insensitively.
* ``Content-Type`` must be ``application/json`` (parameters such as
  ``charset`` allowed), else 415.
* ``Accept`` must admit both ``application/json`` and ``text/event-stream``
  (``*/*``, ``application/*`` and ``text/*`` count; ``q=0`` excludes), else
  406. A request without ``Accept`` is refused: the client MUST send both.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "HostGuard",
    "is_json_content_type",
    "accepts_json_and_sse",
]

DEFAULT_ALLOWED_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
DEFAULT_ALLOWED_ORIGINS: tuple[str, ...] = (
    "http://localhost",
    "http://127.0.0.1",
    "http://[::1]",
    "https://localhost",
    "https://127.0.0.1",
    "https://[::1]",
)

#: Allowed Host/Origin values remembered before the memory starts over.
_SEEN_MAX = 64


def _split_authority(value: str) -> tuple[str, str | None]:
    """``host[:port]`` -> (lower-cased host, port or None); IPv6 stays bracketed."""
    value = value.lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        rest = value[end + 1 :]
        return value[: end + 1], (rest[1:] if rest.startswith(":") else None)
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        return value, None
    return host, port


def _rules(entries: Iterable[str]) -> tuple[bool, dict[str, frozenset[str] | None]]:
    """(allow all, {host: allowed ports or None for any})."""
    table: dict[str, set[str] | None] = {}
    for entry in entries:
        if entry == "*":
            return True, {}
        host, port = _split_authority(entry)
        if port is None:
            table[host] = None
        else:
            ports = table.setdefault(host, set())
            if ports is not None:  # None: this host is already allowed on any port
                ports.add(port)
    return False, {h: (None if p is None else frozenset(p)) for h, p in table.items()}


def _allowed(table: dict[str, frozenset[str] | None], host: str, port: str | None) -> bool:
    if host not in table:
        return False
    ports = table[host]
    return ports is None or port in ports


class HostGuard:
    """Decides whether a request's ``Host`` and ``Origin`` may reach the endpoint."""

    __slots__ = (
        "_any_host",
        "_hosts",
        "_any_origin",
        "_origins",
        "_local_default",
        "_seen_hosts",
        "_seen_origins",
        "seen_hosts",
    )

    def __init__(self, allowed_hosts: Iterable[str] | None = None, allowed_origins: Iterable[str] | None = None) -> None:
        self._local_default = allowed_hosts is None
        self._any_host, self._hosts = _rules(DEFAULT_ALLOWED_HOSTS if allowed_hosts is None else allowed_hosts)
        origins: dict[str, frozenset[str] | None] = {}
        self._any_origin = False
        for entry in DEFAULT_ALLOWED_ORIGINS if allowed_origins is None else allowed_origins:
            if entry == "*":
                self._any_origin = True
                break
            scheme, sep, authority = entry.partition("://")
            if not sep:  # "null" and other opaque origins: matched whole
                origins[entry.lower()] = None
                continue
            host, port = _split_authority(authority.rstrip("/"))
            key = f"{scheme.lower()}://{host}"
            if port is None:
                origins[key] = None
            elif key not in origins or origins[key] is not None:
                origins[key] = frozenset({*(origins.get(key) or ()), port})
        self._origins = origins
        # Host and Origin values already found allowed by the lists (clients repeat them),
        # each in its own set: a value allowed as one is never taken for the other.
        self._seen_hosts: set[bytes] = set()
        self._seen_origins: set[bytes] = set()
        #: The same set, for a caller's inline test of the usual case (a Host seen before, no
        #: Origin: nothing to check), which skips a call to `request_problem` on every request.
        self.seen_hosts = self._seen_hosts

    def request_problem(self, headers: Mapping[bytes, bytes], scope: Mapping[str, Any]) -> str | None:
        """Why a request's ``Host`` or ``Origin`` is refused (the 403 of the module docs), or ``None``.

        The DNS-rebinding gate, run once per request: ``Host`` first, then
        ``Origin``. ``headers`` maps lower-case field names to raw values;
        ``scope`` is the ASGI scope, whose ``server`` (the address the
        connection arrived at) is read only for a ``Host`` not allowed before.
        In the usual case (a ``Host`` allowed before, no ``Origin``) this is
        two lookups and no further call.
        """
        host = headers.get(b"host")
        problem = None if host in self._seen_hosts else self.host_problem(host, scope.get("server"))
        if problem is None:
            origin = headers.get(b"origin")
            if origin is not None:
                problem = self.origin_problem(origin)
        return problem

    def host_problem(self, host: bytes | None, server: tuple[str, int | None] | None) -> str | None:
        """Why ``Host`` is refused, or ``None`` when it is allowed."""
        if self._any_host:
            return None
        if host is None:
            return "the request has no Host header"
        if host in self._seen_hosts:
            return None
        name, port = _split_authority(host.decode("latin-1"))
        if _allowed(self._hosts, name, port):
            _remember(self._seen_hosts, host)
            return None
        if self._local_default and server is not None and server[1] is not None:
            # The address the connection arrived at, as an IP literal.
            local = server[0].lower()
            if ":" in local:
                local = f"[{local}]"
            if name == local and port == str(server[1]):
                return None
        return f"Host {host.decode('latin-1')!r} is not allowed (DNS-rebinding protection; see allowed_hosts)"

    def origin_problem(self, origin: bytes | None) -> str | None:
        """Why ``Origin`` is refused, or ``None`` when it is absent or allowed."""
        if origin is None or self._any_origin:
            return None
        if origin in self._seen_origins:
            return None
        text = origin.decode("latin-1").strip()
        scheme, sep, authority = text.partition("://")
        if sep:
            host, port = _split_authority(authority)
            if _allowed(self._origins, f"{scheme.lower()}://{host}", port):
                _remember(self._seen_origins, origin)
                return None
        elif text.lower() in self._origins:
            _remember(self._seen_origins, origin)
            return None
        return f"Origin {text!r} is not allowed (DNS-rebinding protection; see allowed_origins)"


def _remember(seen: set[bytes], value: bytes) -> None:
    if len(seen) >= _SEEN_MAX:
        seen.clear()
    seen.add(value)


def is_json_content_type(value: bytes | None) -> bool:
    if value is None:
        return False
    if value == b"application/json":
        return True
    return value.split(b";", 1)[0].strip().lower() == b"application/json"


def accepts_json_and_sse(value: bytes | None) -> bool:
    if value is None:
        return False
    if value == b"application/json, text/event-stream":
        return True  # what conforming clients send, without parsing
    json = sse = False
    for item in value.lower().split(b","):
        media, _, rest = item.partition(b";")
        media = media.strip()
        if _q_is_zero(rest):
            continue
        if media == b"*/*":
            json = sse = True
        elif media in (b"application/json", b"application/*"):
            json = True
        elif media in (b"text/event-stream", b"text/*"):
            sse = True
    return json and sse


def _q_is_zero(params: bytes) -> bool:
    for param in params.split(b";"):
        name, _, val = param.partition(b"=")
        if name.strip() == b"q":
            try:
                return float(val.strip()) == 0
            except ValueError:
                return False
    return False
