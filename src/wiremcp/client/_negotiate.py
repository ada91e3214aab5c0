"""The I/O of the era decision for `Client`: the probe, the fallback, and a late answer.

Rules it keeps (2026-07-28 basic/transports/stdio.mdx and
streamable-http.mdx, "Backward Compatibility"; basic/versioning.mdx):

* stdio.mdx: "The server returns any other error, or does not respond within
  a reasonable timeout: the server is legacy." A server process that is still
  starting up is slow, not legacy: a legacy server answers the probe with an
  error or not at all once it reads it, but it reads nothing before it runs.
  So on stdio the ``probe_timeout`` clock starts at the process' first output
  (any byte on stdout or stderr: the transport's ``first_output``); a process
  that has written nothing gets the client's request ``timeout`` (or
  `DEFAULT_STARTUP` when calls have none) to start, after which the clock
  starts anyway, so a mute legacy server still falls back;
* the stdio probe is never abandoned when its clock runs out: ``initialize``
  follows, and the first answer decides (stdio keeps order: the probe's reply,
  if any, comes before the one to ``initialize``). A late DiscoverResult or a
  late recognized modern error means modern, and whatever ``initialize`` gets
  back is ignored (versioning.mdx: "a recognized modern JSON-RPC error ...
  identifies a modern server: the client retries with a supported version
  rather than falling back"); the ``initialize`` result means legacy, and the
  probe is then cancelled (``notifications/cancelled``: the server is
  initialized by then);
* a -32022 in reply to the fallback ``initialize`` means modern too
  (`ClientProtocol.initialize_refused`): a modern server that decided the
  connection's era with the probe's answer refuses ``initialize``;
* Streamable HTTP: the probe has ``probe_timeout`` from when it is sent, and
  no reply in time is a `RequestTimeout`, never the legacy era (every HTTP
  request gets a status); a 4xx without a modern error body means legacy.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..protocol import Era, methods
from ._eras import Initialize, Probe, Ready, Step
from ._errors import HTTPError, RemoteError, RequestTimeout
from ._options import DEFAULT, CallOptions, Default

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["negotiate_era", "DEFAULT_STARTUP"]

#: Seconds a stdio server that has written nothing gets to start when calls have no timeout.
DEFAULT_STARTUP = 60.0
_NO_OPTIONS = CallOptions()


async def negotiate_era(client: Client) -> None:
    """Walk the protocol's `Negotiation` until the era is decided, sending what it asks for."""
    proto = client._proto
    step = proto.start()
    if type(step) is Probe and proto.silence_means_legacy:
        step = await _probe_on_stdio(client)
    while type(step) is Probe:
        step = await _probe(client)
    if type(step) is Initialize:
        try:
            result = await client._roundtrip("initialize", proto.initialize_params(step), _NO_OPTIONS, cancel_on_timeout=False)
        except RemoteError as exc:
            if proto.initialize_refused(exc) is None:
                raise
        else:
            await _legacy_started(client, result)


async def _probe(client: Client) -> Step:
    """A probe with ``probe_timeout`` from when it is sent (HTTP; a stdio server that already answered once)."""
    proto = client._proto
    try:
        result = await client._roundtrip(
            methods.DISCOVER, {}, CallOptions(timeout=client.probe_timeout), cancel_on_timeout=not proto.silence_means_legacy
        )
    except RequestTimeout as exc:
        try:
            return proto.probe_silent(client.probe_timeout)
        except RequestTimeout as timeout:
            raise timeout from exc
    except HTTPError as exc:
        following = proto.probe_http_error(exc.status)
        if following is None:
            raise
        return following
    except RemoteError as exc:
        return proto.probe_refused(exc)
    return proto.probe_answered(result, time.monotonic())


def _start(client: Client, method: str, params: dict[str, Any], timeout: float | None | Default) -> asyncio.Task[dict[str, Any]]:
    """One request (not cancelled on timeout) through ``_roundtrip`` (so telemetry sees it), as a task."""
    task = asyncio.ensure_future(client._roundtrip(method, params, CallOptions(timeout=timeout), cancel_on_timeout=False))
    task.add_done_callback(_retrieve)
    return task


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # a reply nobody waits for any more is not an unhandled error


def _heard(client: Client, probe: asyncio.Future[dict[str, Any]]) -> Step:
    """The step the probe's reply leads to (a reply that is no JSON-RPC answer, e.g. the connection's end, is raised)."""
    exc = probe.exception()
    if exc is None:
        return client._proto.probe_answered(probe.result(), time.monotonic())
    if isinstance(exc, RemoteError):
        return client._proto.probe_refused(exc)
    raise exc


async def _probe_on_stdio(client: Client) -> Step:
    """One probe, never abandoned: what answers it, or the fallback ``initialize`` once it is late."""
    proto = client._proto
    probe = _start(client, methods.DISCOVER, {}, None)
    started = getattr(client.transport, "first_output", None)
    if isinstance(started, asyncio.Future) and not started.done():
        startup = client.timeout if client.timeout is not None else DEFAULT_STARTUP
        await asyncio.wait((probe, started), timeout=startup, return_when=asyncio.FIRST_COMPLETED)
    if not probe.done():
        await asyncio.wait((probe,), timeout=client.probe_timeout)
    if probe.done():
        return _heard(client, probe)
    # Late: fall back, and keep listening for the probe's answer.
    fallback = proto.probe_silent(client.probe_timeout)
    assert type(fallback) is Initialize
    init = _start(client, "initialize", proto.initialize_params(fallback), DEFAULT)
    await asyncio.wait((probe, init), return_when=asyncio.FIRST_COMPLETED)
    if probe.done() and not probe.cancelled() and (probe.exception() is None or isinstance(probe.exception(), RemoteError)):
        late = _heard(client, probe)
        if type(late) is Ready:
            return late  # modern after all: the reply to initialize (-32022 or a result) is ignored
        if type(late) is Probe:
            return late  # modern, at another version: ask again
    await asyncio.wait((init,))
    exc = init.exception()
    if exc is None:
        await _legacy_started(client, init.result())
        probe.cancel()  # legacy: stop waiting; the server, initialized now, is told with notifications/cancelled
        return Ready(Era.LEGACY, proto.protocol_version or fallback.version)  # decided by `_legacy_started`
    probe.cancel()
    if isinstance(exc, RemoteError):
        step = proto.initialize_refused(exc)
        if step is not None:
            return step
    raise exc


async def _legacy_started(client: Client, result: dict[str, Any]) -> None:
    """The ``initialize`` result: the legacy era is decided; send ``notifications/initialized``."""
    proto = client._proto
    client._write(proto.initialized(result))
    started = getattr(client.transport, "legacy_session_started", None)
    if started is not None:  # e.g. HTTP: open the 2025-11-25 GET stream for server requests
        opening = started(proto.protocol_version)
        if opening is not None:  # nothing more is sent before the stream is open (bounded)
            await opening
