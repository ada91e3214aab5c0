"""Serving the local issuer on uvicorn, on loopback only unless forced.

Rules it keeps:

* the address is a loopback one (``127.0.0.0/8``, ``::1``, ``localhost``);
  another raises `NotLoopback` unless ``force=True`` -- the issuer mints a
  token for any subject to whoever holds its secret, and its tokens are for
  development only;
* the socket is bound before the issuer exists, so port 0 picks a free port
  and the issuer URL (``http://HOST:PORT``) names the port really bound;
* `serve` blocks until the process is stopped (Ctrl-C, SIGTERM);
  `serve_in_thread` runs the server in a thread for as long as its ``with``
  block, and returns once the server accepts connections.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any, Iterator

from .._ssrf import is_loopback_host
from ._app import issuer_app
from ._issuer import DevIssuer

__all__ = ["NotLoopback", "bind", "url_of", "serve", "serve_in_thread", "is_loopback"]


class NotLoopback(ValueError):
    """The issuer was asked to listen on an address others can reach."""


#: ``localhost`` or a loopback IP address (``127.0.0.0/8``, ``::1``): the SSRF guard's own test.
is_loopback = is_loopback_host


def bind(host: str = "127.0.0.1", port: int = 0, *, force: bool = False) -> socket.socket:
    """A listening socket for the issuer on ``host``:``port``."""
    if not is_loopback(host) and not force:
        raise NotLoopback(
            f"the development issuer listens on loopback only, not {host!r}: anyone who reaches it and holds its "
            "secret gets tokens for any user (force it only on a network you trust)"
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket, host: str) -> str:
    """``http://HOST:PORT`` for the bound socket (``localhost`` kept as given, IPv6 in brackets)."""
    port = sock.getsockname()[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _server(issuer: DevIssuer, log_level: str) -> Any:
    import uvicorn

    config = uvicorn.Config(issuer_app(issuer), lifespan="off", log_level=log_level, access_log=False)
    return uvicorn.Server(config)


def serve(issuer: DevIssuer, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve until stopped."""
    _server(issuer, log_level).run(sockets=[sock])


@contextlib.contextmanager
def serve_in_thread(issuer: DevIssuer, sock: socket.socket, *, startup_timeout: float = 30.0) -> Iterator[None]:
    """Serve in a thread while the block runs; the socket is closed after."""
    server = _server(issuer, "warning")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="wiremcp-dev-issuer", daemon=True)
    thread.start()
    try:
        ready = threading.Event()
        for _ in range(int(startup_timeout * 100)):
            if server.started or not thread.is_alive():
                ready.set()
                break
            ready.wait(0.01)
        if not server.started:
            raise RuntimeError("the development issuer did not start")
        yield
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
