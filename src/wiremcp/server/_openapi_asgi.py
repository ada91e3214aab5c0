"""Calling an ASGI app in-process: one HTTP request through its ASGI interface (`from_fastapi`).

Not an HTTP client: the app's own interface (the ASGI 3 spec, HTTP
connection scope), driven the way an ASGI server would drive it for one
request. `asgi_send(app)` returns the `Send` that `_openapi` calls:

* the scope: ``http``, HTTP/1.1, scheme ``http``, server ``wiremcp:80``
  (the ``Host`` header too), client ``127.0.0.1``, ``path`` decoded and
  ``raw_path`` as sent, the query string, the headers in lower case;
* ``receive`` gives the body in one ``http.request`` message, then waits
  until the response is complete and answers ``http.disconnect``;
* the answer is the ``http.response.start`` status and ``content-type`` and
  the ``http.response.body`` parts joined; an app that returns without
  starting a response, or raises before it, is a 500, as uvicorn answers
  it (the exception is logged); one that raises after answering (Starlette
  re-raises after its 500) keeps the answer it sent.

The app's lifespan (startup/shutdown events) is not run here.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable
from urllib.parse import unquote

__all__ = ["asgi_send"]

Message = dict[str, Any]
log = logging.getLogger("wiremcp.server")


def asgi_send(app: Callable[..., Awaitable[None]]) -> Callable[[str, str, list[tuple[str, str]], bytes | None], Awaitable[tuple[int, str, bytes]]]:
    """The request sender of `_openapi` for ``app``."""

    async def send(method: str, target: str, headers: list[tuple[str, str]], body: bytes | None) -> tuple[int, str, bytes]:
        path, _, query = target.partition("?")
        raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers]
        raw.append((b"host", b"wiremcp"))
        if body is not None:
            raw.append((b"content-length", str(len(body)).encode()))
        scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": unquote(path),
            "raw_path": path.encode("latin-1"),
            "query_string": query.encode("latin-1"),
            "root_path": "",
            "headers": raw,
            "server": ("wiremcp", 80),
            "client": ("127.0.0.1", 0),
        }
        done = asyncio.Event()
        sent_body = False
        status = 0
        content_type = ""
        parts: list[bytes] = []

        async def receive() -> Message:
            nonlocal sent_body
            if not sent_body:
                sent_body = True
                return {"type": "http.request", "body": body or b"", "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def reply(message: Message) -> None:
            nonlocal status, content_type
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for name, value in message.get("headers", ()):
                    if bytes(name).lower() == b"content-type":
                        content_type = bytes(value).decode("latin-1")
            elif message["type"] == "http.response.body":
                parts.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    done.set()

        try:
            await app(scope, receive, reply)
        except Exception as exc:  # Starlette re-raises after sending its 500: the answer sent stands
            log.error("the ASGI app raised %s on %s %s", type(exc).__name__, method, path, exc_info=exc)
            if status == 0:
                return 500, "text/plain", b"Internal Server Error"
        finally:
            done.set()
        if status == 0:
            return 500, "text/plain", b"the app returned without a response"
        return status, content_type, b"".join(parts)

    return send
