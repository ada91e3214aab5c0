"""Candidate HTTP libraries for wiremcp's client transport, measured by client_bench.py.

Each candidate is a complete `ClientTransport` (wiremcp.client._transport):
JSON and SSE replies, non-2xx bodies kept, ``abandon`` closes the stream,
legacy ``Mcp-Session-Id`` + GET stream + DELETE. All but the first share
`wiremcp.transports.http.client.HTTPTransport`'s protocol logic and replace
only the three methods that touch the HTTP library (``_connect``,
``_exchange``, ``_close_http``), so the measurement differs by the library
alone:

* ``httpx-asis``: the transport as it was before aiohttp (httpx 0.28, one
  ``AsyncClient``, ``client.stream`` per POST, SSE lines by
  ``aiter_lines``), kept verbatim below as `HttpxAsIs`;
* ``httpx-tuned``: httpx 0.28, one ``AsyncClient`` (HTTP/1.1 only, pool
  limits set, ``trust_env`` off, no per-request client setup), requests
  built once with ``build_request`` and sent with ``send(stream=True)``,
  read whole unless the reply is SSE;
* ``httpx2-tuned``: the same on httpx2 (pydantic's maintained fork of httpx,
  which the official SDK uses), when it is installed;
* ``httpcore``: httpcore 1.0's ``AsyncConnectionPool`` directly (httpx's own
  transport layer, without httpx);
* ``aiohttp``: what wiremcp ships (`HTTPTransport` itself).

Not part of wiremcp: bench code, imported only by client_bench.py's workers.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, AsyncIterator, Hashable
from urllib.parse import urlsplit

import orjson

from wiremcp.client import ConnectionClosed, HTTPError, Receiver
from wiremcp.transports.http.client import HTTPTransport, _Reply

log = logging.getLogger("wiremcp.bench")


class HttpxTuned(HTTPTransport):
    """httpx (or httpx2) under `HTTPTransport`: one AsyncClient, HTTP/1.1, nothing per request but the request."""

    module = "httpx"

    async def _connect(self) -> None:
        httpx: Any = __import__(self.module)
        self._http = httpx.AsyncClient(
            http1=True,
            http2=False,
            trust_env=False,
            timeout=httpx.Timeout(None, connect=self.connect_timeout),
            limits=httpx.Limits(max_connections=self.max_connections, max_keepalive_connections=self.max_connections),
        )

    async def _exchange(self, method: str, headers: dict[str, str], body: bytes | None) -> Any:
        client: Any = self._http
        resp = await client.send(client.build_request(method, self.url, content=body, headers=headers), stream=True)
        return _HttpxReply(resp)

    async def _close_http(self) -> None:
        if self._http is not None:
            await self._http.aclose()


class _HttpxReply(_Reply):
    """An httpx response as `HTTPTransport` reads it."""

    __slots__ = ()

    def __init__(self, resp: Any) -> None:
        self.status = resp.status_code
        self.headers = resp.headers
        self._resp = resp

    async def read(self) -> bytes:
        return await self._resp.aread()

    def chunks(self) -> AsyncIterator[bytes]:
        return self._resp.aiter_bytes()

    def release(self) -> None:
        asyncio.get_running_loop().create_task(self._resp.aclose())  # a no-op once the body was read

    def close(self) -> None:
        asyncio.get_running_loop().create_task(self._resp.aclose())


class Httpx2Tuned(HttpxTuned):
    module = "httpx2"


class HttpcorePool(HTTPTransport):
    """httpcore's AsyncConnectionPool under `HTTPTransport` (the layer httpx sits on)."""

    async def _connect(self) -> None:
        import httpcore

        self._http = httpcore.AsyncConnectionPool(
            max_connections=self.max_connections, max_keepalive_connections=self.max_connections,
        )
        self._timeouts = {"connect": self.connect_timeout}
        self._host = (b"Host", urlsplit(self.url).netloc.encode("ascii"))

    async def _exchange(self, method: str, headers: dict[str, str], body: bytes | None) -> Any:
        import httpcore

        pool: Any = self._http
        raw = [self._host, *((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items())]
        if body is not None:
            raw.append((b"Content-Length", str(len(body)).encode()))
        request = httpcore.Request(method, self.url, headers=raw, content=body, extensions={"timeout": self._timeouts})
        return _HttpcoreReply(await pool.handle_async_request(request))

    async def _close_http(self) -> None:
        if self._http is not None:
            await self._http.aclose()


class _HttpcoreReply(_HttpxReply):
    __slots__ = ()

    def __init__(self, resp: Any) -> None:
        self.status = resp.status
        self.headers = _Headers(resp.headers)
        self._resp = resp

    def chunks(self) -> AsyncIterator[bytes]:
        return self._resp.aiter_stream()


class _Headers(dict[str, str]):
    """httpcore's raw header list as a case-insensitive ``get`` (lower-cased names)."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        super().__init__((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in raw)

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


CANDIDATES: dict[str, Any] = {
    "aiohttp": HTTPTransport,
    "httpx-asis": None,  # filled in below
    "httpx-tuned": HttpxTuned,
    "httpx2-tuned": Httpx2Tuned,
    "httpcore": HttpcorePool,
}


# ---------------------------------------------------------------------------
# The transport as it was before the change, verbatim but for its name and imports.

#: Seconds to establish a TCP (and TLS) connection. Waiting for a reply is
#: bounded by the client's per-request timeout, not here.
DEFAULT_CONNECT_TIMEOUT = 10.0
_ACCEPT = "application/json, text/event-stream"


class HttpxAsIs:
    """wiremcp's HTTP transport before the change (httpx), verbatim."""

    cancel_by_notification = False
    mirrors_headers = True

    def __init__(
        self,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        http_client: Any = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.cache_key: Hashable = ("http", parts.scheme, parts.netloc.lower())
        self.session_id: str | None = None
        self._http = http_client
        self._own_http = http_client is None
        self._receiver: Receiver | None = None
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False
        self._legacy: str | None = None  # the negotiated 2025-11-25-era version, once initialized

    async def open(self, receiver: Receiver) -> None:
        self._receiver = receiver
        if self._http is None:
            try:
                import httpx
            except ImportError:
                raise ImportError("the HTTP client transport needs httpx: pip install 'wiremcp[http]'") from None
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(None, connect=self.connect_timeout),
                limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            )

    def send(
        self, data: bytes, *, id: Any = None, method: str | None = None, params: Any = None, headers: Any = None
    ) -> None:
        if self._closed:
            raise ConnectionClosed("the HTTP transport is closed")
        task = asyncio.get_running_loop().create_task(self._post(data, id, method, headers))
        if id is not None:
            self._tasks[id] = task
        else:
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    def send_raw(self, data: bytes) -> None:
        self.send(data)

    def abandon(self, id: Any) -> None:
        task = self._tasks.pop(id, None)
        if task is not None:
            task.cancel()

    def legacy_session_started(self, version: str) -> None:
        """2025-11-25: open the GET stream on which the server may send requests and notifications."""
        self._legacy = version
        task = asyncio.get_running_loop().create_task(self._listen_legacy(version))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _listen_legacy(self, version: str) -> None:
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        headers = self._request_headers({"MCP-Protocol-Version": version})
        headers["Accept"] = "text/event-stream"
        del headers["Content-Type"]
        try:
            async with self._http.stream("GET", self.url, headers=headers) as resp:
                kind = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if resp.status_code != 200 or kind != "text/event-stream":
                    log.debug("no GET stream (HTTP %d); server requests come on POST streams only", resp.status_code)
                    return
                async for event in _sse_events(resp):
                    receiver.message(event, None, None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the GET stream is optional
            log.debug("the GET stream ended: %r", exc)

    def _request_headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": _ACCEPT}
        if self.headers:
            headers.update(self.headers)
        if extra:
            headers.update(extra)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    async def _post(self, data: bytes, id: Any, method: str | None, extra: dict[str, str] | None) -> None:
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        answered = False
        try:
            async with self._http.stream("POST", self.url, content=data, headers=self._request_headers(extra)) as resp:
                status = resp.status_code
                session = resp.headers.get("mcp-session-id")
                if session:
                    self.session_id = session
                kind = resp.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                error_status = status if status >= 400 else None
                if kind == "text/event-stream" and status < 400:
                    cursor = _Cursor()
                    async for event in _sse_events(resp, cursor):
                        answered = True
                        receiver.message(event, id, None)
                    body = b""
                    if id is not None and self._legacy is not None and cursor.last_id is not None:
                        if not await self._resume(id, cursor):
                            receiver.request_failed(
                                id, ConnectionClosed(f"the SSE stream for {method} ended and could not be resumed")
                            )
                        return
                else:
                    body = await resp.aread()
                    if body and (kind == "application/json" or body[:1] == b"{"):
                        try:
                            obj = orjson.loads(body)
                        except orjson.JSONDecodeError:
                            obj = None
                        if type(obj) is dict and ("result" in obj or "error" in obj or "method" in obj):
                            answered = True
                            receiver.message(body, id, error_status)
                if id is not None and not answered:
                    receiver.request_failed(id, HTTPError(status, body, method))
                elif id is None and status >= 400:
                    log.warning("the server refused a notification or response with HTTP %d: %r", status, body[:200])
                elif id is not None:
                    # The stream ended; if the reply never came this fails the request (a no-op otherwise).
                    receiver.request_failed(
                        id, ConnectionClosed(f"the server closed the response stream for {method} without replying")
                    )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - httpx errors, and anything else, fail the request
            if id is not None:
                receiver.request_failed(id, ConnectionClosed(f"HTTP POST to {self.url} failed: {exc!r}"))
            else:
                log.warning("HTTP POST to %s failed: %r", self.url, exc)
        finally:
            if id is not None and self._tasks.get(id) is asyncio.current_task():
                del self._tasks[id]

    async def _resume(self, id: Any, cursor: _Cursor) -> bool:
        """2025-11-25 resumability: GET with Last-Event-ID after the server's retry delay.

        Returns True once the reply to ``id`` came (or nothing is left to wait
        for). Used only with legacy servers; 2026-07-28 streams do not resume.
        """
        receiver = self._receiver
        assert receiver is not None and self._http is not None
        for _ in range(_MAX_RESUMES):
            if cursor.answered(id):
                return True
            await asyncio.sleep((cursor.retry_ms if cursor.retry_ms is not None else 1000) / 1000)
            headers = self._request_headers({"MCP-Protocol-Version": self._legacy or "", "Last-Event-ID": cursor.last_id or ""})
            headers["Accept"] = "text/event-stream"
            del headers["Content-Type"]
            async with self._http.stream("GET", self.url, headers=headers) as resp:
                if resp.status_code != 200:
                    return False
                async for event in _sse_events(resp, cursor):
                    receiver.message(event, id, None)
        return cursor.answered(id)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [*self._tasks.values(), *self._background]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        if self._http is not None:
            if self.session_id is not None:
                try:  # 2025-11-25 transports: end the session
                    await self._http.delete(self.url, headers=self._request_headers(None))
                except Exception:  # noqa: BLE001 - best effort
                    pass
            if self._own_http:
                await self._http.aclose()


#: GET reconnections tried for one legacy request whose SSE stream ended early.
_MAX_RESUMES = 3


class _Cursor:
    """Where an SSE stream got to: the last event id, the server's retry delay, reply ids seen."""

    __slots__ = ("last_id", "retry_ms", "replied")

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self.replied: set[Any] = set()

    def answered(self, id: Any) -> bool:
        return id in self.replied


async def _sse_events(resp: Any, cursor: _Cursor | None = None) -> Any:
    """The ``data`` of each SSE event (text/event-stream framing), as bytes."""
    data: list[str] = []
    async for line in resp.aiter_lines():
        if not line:
            if data:
                event = "\n".join(data).encode("utf-8")
                data = []
                if cursor is not None and b'"method"' not in event:
                    try:
                        obj = orjson.loads(event)
                        if type(obj) is dict and "id" in obj:
                            cursor.replied.add(obj["id"])
                    except orjson.JSONDecodeError:
                        pass
                yield event
            continue
        if line[0] == ":":
            continue  # a comment: keep-alive
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif cursor is not None:
            if field == "id":
                cursor.last_id = value
            elif field == "retry" and value.isdigit():
                cursor.retry_ms = int(value)
    if data:
        yield "\n".join(data).encode("utf-8")


CANDIDATES["httpx-asis"] = HttpxAsIs
