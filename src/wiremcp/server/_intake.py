"""The front of the server pipeline: one message's bytes, decoded once, into what the engine acts on.

Every transport hands the bytes of each message it reads to
`ServerConnection.receive` (stdio: `LineServer` and, before the event loop,
`serve_before_loop`; HTTP: `MCPApp`), and `receive` begins here. The rules
this module keeps:

* **The fused stage comes first** (`FastPath.serve`, one call: the hot path): a fused ``tools/call``
  (`_fused_call`: ``name``, scalar ``arguments``, the usual ``_meta`` and
  nothing else) is decoded and type-checked in one msgspec pass, and checked
  against the tool (an inline synchronous function with a scalar schema,
  `Tool.fused_arguments`) and the decoder's limits. What it accepts is a
  `FusedCall` (`_fused_call`: a msgspec struct, made in C, only for a transport's ``vet``), which every rule `Server.handle` keeps holds for; nothing has
  run yet, so that the transport may still check what is its own (an id in
  flight, a free slot, the HTTP headers). Anything else, every problem
  included, is None, never an exception: the general stage decides.
* **A plain ``def`` tool keeps its worker thread** (`Tool.fused_threaded`:
  the same scalar tool, not inline): on the event loop, where the
  connection passes ``begin`` (stdio's `LineServer`), the fused stage
  converts the arguments, hands the run to the server's `Workers` and
  returns the connection's `PostedCall` for it, in flight like any other
  (its id taken, cancellable, in the transport's in-flight cap). No task
  awaits it: the worker's completion callback on the loop (`_settle`) makes
  its result as `Tool._finish`, `Engine.after` and `Engine._rounds` make it
  and its reply as `Call.finish` does (`reply_complete`, `reply_failed`),
  writes it and hands the call to the transport's end (``over``); a call
  cancelled by then (its state) is dropped. The general path's bytes,
  without its layers, its task or its future. Without ``begin`` (HTTP, the stdio front) it
  is None, as before: the general stage decides.
* **A fused call's reply is built by the one funnel** (`_reply.reply_complete`,
  `reply_failed`) from the result of the run the tool prepared when it was
  made (`Tool.fused_arguments`, a `FusedArguments`: no method of the tool is
  called, none of its private members read), with the server's result
  decoration (``_meta`` with the server info): byte for byte the reply
  `Server.handle` would give. When converting the arguments fails, `serve`
  returns None before the tool ran, and the general stage decides.
* **The general stage parses once** (`decode_message`,
  `Decoder.decode_common`): a request of the four members only is taken on
  four checks; anything else gets `Decoder.decode`'s verdict (the exact
  error) from the same parse.
* The server's pipeline is fixed once serving starts (`Server.freeze`), so
  whether the fused stage can apply at all (no middleware, no observers)
  is decided once, when the `FastPath` is made.

msgspec (and `_fused_call`) is imported with the first fused call, not with
`wiremcp`: a server that never sees one does not load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Container

import orjson

from ..jsonrpc import Batch, Decoder, JSONRPCError, Message
from ..protocol import methods
from ._call import CallState
from ._mrtr import InputRequired, input_required_result
from ._reply import Reply, reply_complete, reply_failed, reply_ok

if TYPE_CHECKING:
    from ._call import PostedCall
    from ._fused_call import FusedCall, FusedEnvelope
    from ._server import Server
    from ._tools import Tool

__all__ = ["FastPath", "decode_message"]

_RUNNING = CallState.RUNNING
_REPLIED = CallState.REPLIED


class FastPath:
    """The fused stage of one server's pipeline: `serve` a message's bytes when they are a fused call."""

    __slots__ = ("server", "decoder", "enabled", "_max_size", "_tools", "_decode", "_refused", "_made", "_settled")

    def __init__(self, server: Server, decoder: Decoder) -> None:
        self.server = server
        self.decoder = decoder
        self._max_size = decoder.max_size  # (the decoder's limits are fixed: read once)
        pipeline = server.freeze()  # fixed from now on: middleware and observers see every request
        #: Whether any message can be a fused call on this server (none with middleware or observers).
        self.enabled = not server.middlewares and not pipeline.observers
        #: `Server.get_tool`'s lookup, bound once: the server's tool table (one dict, changed in place) read directly.
        self._tools: Callable[[str], Tool | None] = server._tools.get
        self._decode: Callable[[bytes], FusedEnvelope] | None = None
        self._made: type[FusedCall] | None = None
        self._refused: type[Exception] = Exception
        #: `_settle`, bound once: the worker pool's callback for each threaded call.
        self._settled = self._settle

    def serve(
        self,
        data: bytes,
        in_flight: Container[Any] = (),
        vet: Callable[[Any, FusedCall], bool] | None = None,
        headers: Any = None,
        begin: Callable[[Any, bytes, Any], PostedCall] | None = None,
    ) -> Reply | PostedCall | None:
        """The reply to the fused call in ``data``, its tool run; or None, nothing run: the general stage decides.

        ``in_flight``: the ids of the requests in flight (a fused call reusing
        one is declined). ``vet``: the transport's own test of the
        `FusedCall` before it runs, ``vet(headers, call)`` (False declines;
        ``headers`` is the transport's, handed through as they are, so that
        the transport makes nothing per request). ``begin``: on the event
        loop, the connection's start of a call in flight, ``begin(id, data, fused)``
        (`ServerConnection.receive`): a tool run in the worker pool
        (`Tool.fused_threaded`) is handed to `Workers.post` and its
        `PostedCall` returned, already running: `_settle` writes its reply
        (without ``begin``, None: the general stage decides). One call does it all, checking, running and
        encoding (see the module docs): the fused path is the hot one.
        """
        server = self.server
        if not self.enabled or server.forwarder is not None:
            return None
        if len(data) > self._max_size:
            return None
        decode = self._decode
        if decode is None:
            decode = self._load()
            if decode is None:
                return None  # the nesting limit is below what a fused call may nest: never one
        try:
            envelope = decode(data)
        except self._refused:
            return None
        params = envelope.params
        version = params.meta.version
        if version not in server.supported_versions:
            return None
        tool = self._tools(params.name)
        if tool is None:
            return None
        fused = tool.fused_arguments
        threaded = fused is None
        if fused is None:
            fused = tool.fused_threaded
            if fused is None or begin is None:
                return None
        arguments = params.arguments
        if arguments is None:
            arguments = {}
        types, required, text_block, convert, fn, failed, result = fused
        for key, value in arguments.items():
            allowed = types.get(key)
            if allowed is None or type(value) not in allowed:
                return None
        if required and len(arguments) != len(types) and not arguments.keys() >= required:
            return None  # (every key is a property: holding them all, it holds the required ones)
        id_ = envelope.id
        if id_ in in_flight or (vet is not None and not vet(headers, self._made(id_, tool, arguments, version, data))):  # type: ignore[misc]  # set with `_decode`
            return None
        if threaded:  # `Tool.call`'s run in the worker pool: the arguments converted here, as `_run` does
            if convert is not None:
                try:
                    arguments = convert(arguments)
                except Exception:
                    return None
            posted = begin(id_, data, fused)  # type: ignore[misc]  # threaded: begin is set
            try:
                server.workers.post(fn, arguments, posted, self._settled)
            except Exception as exc:  # no thread to run it: the tool's failure, as `Tool._finish` makes it
                self._settle(posted, None, exc)
            return posted
        try:  # `Tool.call`'s run, inline (`FusedArguments`)
            if convert is not None:  # pure: a problem leaves the call to the general stage, nothing run
                try:
                    arguments = convert(arguments)
                except Exception:
                    return None
            try:
                value = fn(**arguments)
            except JSONRPCError:
                raise  # a deliberate protocol error stays one (as in `Tool._run`)
            except Exception as exc:
                out = failed(exc, server.mask_errors)
            else:
                if type(value) is str and text_block:
                    out = {"resultType": "complete", "content": [{"type": "text", "text": value}]}  # `_unstructured`
                else:
                    out = result(value)
        except BaseException as exc:  # noqa: BLE001 - answered as `handle` and `Call.start` answer it
            return self._raised(id_, data, exc)
        return reply_complete(id_, out, server._result_meta)  # with the server's result decoration (`Server._complete`)

    def _settle(self, call: PostedCall, value: Any, exc: BaseException | None) -> None:
        """On the loop, the worker's callback: a threaded fused call's reply, written; nothing once it is cancelled.

        The result is the general path's (`Tool._finish`, `Engine.after`,
        `Engine._rounds`, `Call.finish`): the value made into a result, an
        `Exception` into the tool's failure, a `JSONRPCError` or any other
        `BaseException` into an error reply, `InputRequired` into an
        ``input_required`` result. Then the call is `REPLIED` and handed to
        its ``over`` (the transport frees its id and slot).
        """
        if call.state is not _RUNNING:
            return  # cancelled: no reply (its id and slot were freed then, `PostedCall.cancel`)
        server = self.server
        fused = call.fused
        try:
            try:
                if exc is None:
                    if type(value) is str and fused[2]:  # text_block: `_unstructured`
                        out = {"resultType": "complete", "content": [{"type": "text", "text": value}]}
                    else:
                        out = fused[6](value)  # result
                elif isinstance(exc, Exception) and not isinstance(exc, JSONRPCError):
                    out = fused[5](exc, server.mask_errors)  # failed
                else:
                    raise exc  # a deliberate protocol error stays one (as in `Tool._finish`), InputRequired is asked
            except InputRequired as ask:  # as `Engine._rounds`
                reply = reply_ok(call.id, self._input_required(call.data, ask))
            else:
                reply = reply_complete(call.id, out, server._result_meta)  # `Engine.complete`'s decoration
        except BaseException as failure:  # noqa: BLE001 - every failure gets its reply (as `Call.finish`)
            reply = reply_failed(call.id, failure)
        call.state = _REPLIED
        try:
            call.write(reply[0])
        finally:
            call.over(call)

    def _input_required(self, data: bytes, exc: InputRequired) -> dict[str, Any]:
        """A threaded fused call's `InputRequired`: the ``input_required`` result `Engine._rounds` makes."""
        from ._engine import _rerun_warning

        server = self.server
        params = orjson.loads(data)["params"]
        if exc.visible:
            _rerun_warning(server, methods.TOOLS_CALL, params, exc)
        return server._complete(input_required_result(server.state_sealer, methods.TOOLS_CALL, params, exc))

    @property
    def loaded(self) -> bool:
        """Whether the fused stage is loaded (msgspec imported), or off for good."""
        return self._decode is not None or not self.enabled

    def load(self) -> None:
        """Load the fused stage now rather than with the first fused call (see `loaded`)."""
        if self._decode is None and self.enabled:
            self._load()

    def check(self, data: bytes) -> FusedCall | None:
        """The `FusedCall` `serve` would answer in ``data``, without running it; or None (for tests and tools)."""
        found: list[FusedCall] = []

        def keep(_: Any, call: FusedCall) -> bool:
            found.append(call)
            return False  # declined: nothing runs

        self.serve(data, (), keep)
        return found[0] if found else None

    def _load(self) -> Callable[[bytes], FusedEnvelope] | None:
        """`_fused_call.decode_fused_call`, imported (with msgspec) on the first fused call.

        None, and the stage off, under a nesting limit below `_fused_call.MAX_FUSED_DEPTH`: a fused
        call nests at most that deep, so no walk or count is needed, and under a lower limit the
        stage declines everything.
        """
        from ._fused_call import MAX_FUSED_DEPTH, DecodeError, FusedCall, decode_fused_call

        if self.decoder.max_depth < MAX_FUSED_DEPTH:
            self.enabled = False
            return None
        self._made = FusedCall
        self._decode = decode_fused_call
        self._refused = DecodeError
        return decode_fused_call

    def _raised(self, id_: Any, data: bytes, exc: BaseException) -> Reply:
        """The tool raised past its own failure handling: `InputRequired` as `handle`, the rest as `Call.start`."""
        if isinstance(exc, InputRequired):
            server = self.server
            params = orjson.loads(data)["params"]
            return reply_ok(id_, server._complete(input_required_result(server.state_sealer, methods.TOOLS_CALL, params, exc)))
        return reply_failed(id_, exc)


def decode_message(decoder: Decoder, data: bytes) -> Message | Batch:
    """One message of ``data``, from one parse: `Decoder.decode_common` (the common request first).

    Raises what `Decoder.decode` raises (the exact error to answer).
    """
    return decoder.decode_common(data)
