"""The front of the server pipeline: one message's bytes, decoded once, into what the engine acts on.

Every transport hands the bytes of each message it reads to
`ServerConnection.receive` (stdio: `LineServer` and, before the event loop,
`serve_before_loop`; HTTP: `MCPApp`), and `receive` begins here. The rules
this module keeps:

* **The fused stage comes first** (`FastPath`): a fused ``tools/call``
  (`_fused_call`: ``name``, scalar ``arguments``, the usual ``_meta`` and
  nothing else) is decoded and type-checked in one msgspec pass, and checked
  against the tool (an inline synchronous function with a scalar schema,
  `Tool.fused_arguments`) and the decoder's limits. What it accepts is a
  `FusedCall` (`_fused_call`: a msgspec struct, made in C), which every rule `Server.handle` keeps holds for; nothing has
  run yet, so that the transport may still check what is its own (an id in
  flight, a free slot, the HTTP headers). Anything else, every problem
  included, is None, never an exception: the general stage decides.
* **A fused call's reply is built by the one funnel** (`_reply.reply_ok`,
  `reply_failed`) from the result the tool's own method makes
  (`Tool.run_inline`), with the server's result decoration
  (``_meta`` with the server info): byte for byte the reply `Server.handle`
  would give. When converting the arguments fails, `FusedCall.answer`
  returns None before the tool ran, and the general stage decides.
* **The general stage decodes once** (`decode_message`): a request of the
  four members only is taken from the parse `Decoder.request_dict` made;
  anything else is parsed by `Decoder.decode`, which gives the exact error.
* The server's pipeline is fixed once serving starts (`Server.freeze`), so
  whether the fused stage can apply at all (no middleware, no observers)
  is decided once, when the `FastPath` is made.

msgspec (and `_fused_call`) is imported with the first fused call, not with
`wiremcp`: a server that never sees one does not load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import orjson

from ..jsonrpc import Batch, Decoder, Message, Request
from ..protocol import methods
from ._mrtr import InputRequired, input_required_result
from ._reply import Reply, reply_failed, reply_ok

if TYPE_CHECKING:
    from ._fused_call import FusedCall, FusedEnvelope
    from ._server import Server

__all__ = ["FastPath", "decode_message"]


class FastPath:
    """The fused stage of one server's pipeline: `check` a message's bytes, `answer` a `FusedCall`."""

    __slots__ = ("server", "decoder", "enabled", "_get_tool", "_decode", "_refused", "_depth", "_made")

    def __init__(self, server: Server, decoder: Decoder) -> None:
        self.server = server
        self.decoder = decoder
        pipeline = server.freeze()  # fixed from now on: middleware and observers see every request
        #: Whether any message can be a fused call on this server (none with middleware or observers).
        self.enabled = not server.middlewares and not pipeline.observers
        self._get_tool = server.get_tool
        self._decode: Callable[[bytes], FusedEnvelope] | None = None
        self._made: type[FusedCall] | None = None
        self._refused: type[Exception] = Exception
        self._depth = 0

    def check(self, data: bytes) -> FusedCall | None:
        """The fused call in ``data``, checked (see the module docs); or None: the general stage decides."""
        server = self.server
        if not self.enabled or server.forwarder is not None:
            return None
        decoder = self.decoder
        if len(data) > decoder.max_size:
            return None
        decode = self._decode
        if decode is None:
            decode = self._load()
        if decoder.max_depth < self._depth:
            return None  # a fused call nests at most this deep (`_fused_call`): no walk or count needed
        try:
            envelope = decode(data)
        except self._refused:
            return None
        params = envelope.params
        version = params.meta.version
        if version not in server.supported_versions:
            return None
        tool = self._get_tool(params.name)
        if tool is None:
            return None
        fused = tool.fused_arguments
        if fused is None:
            return None
        arguments = params.arguments
        if arguments is None:
            arguments = {}
        types, required, _ = fused
        for key, value in arguments.items():
            allowed = types.get(key)
            if allowed is None or type(value) not in allowed:
                return None
        if required and len(arguments) != len(types) and not arguments.keys() >= required:
            return None  # (every key is a property: holding them all, it holds the required ones)
        return self._made(envelope.id, tool, arguments, version, data)  # type: ignore[misc]  # set with `_decode`

    def _load(self) -> Callable[[bytes], FusedEnvelope]:
        """`_fused_call.decode_fused_call`, imported (with msgspec) on the first fused call."""
        from ._fused_call import MAX_FUSED_DEPTH, DecodeError, FusedCall, decode_fused_call

        self._made = FusedCall
        self._decode = decode_fused_call
        self._refused = DecodeError
        self._depth = MAX_FUSED_DEPTH
        return decode_fused_call

    def answer(self, call: FusedCall) -> Reply | None:
        """Run the tool of ``call`` and make its reply; None (the tool has not run) when its arguments do not convert."""
        server = self.server
        try:
            out = call.tool.run_inline(call.arguments, server.mask_errors)
        except BaseException as exc:  # noqa: BLE001 - answered as `handle` and `Call.start` answer it
            return self._raised(call, exc)
        if out is None:
            return None
        shared = server._result_meta  # the server's result decoration (`Server._complete`)
        if shared is not None:
            own = out.get("_meta")
            out["_meta"] = shared if own is None else {**shared, **own}
        return reply_ok(call.id, out)

    def _raised(self, call: FusedCall, exc: BaseException) -> Reply:
        """The tool raised past its own failure handling: `InputRequired` as `handle`, the rest as `Call.start`."""
        if isinstance(exc, InputRequired):
            server = self.server
            params = orjson.loads(call.data)["params"]
            return reply_ok(call.id, server._complete(input_required_result(server.state_sealer, methods.TOOLS_CALL, params, exc)))
        return reply_failed(call.id, exc)


def decode_message(decoder: Decoder, data: bytes) -> Message | Batch:
    """One message of ``data``: a request of the four members from one parse, else `Decoder.decode`'s verdict.

    Raises what `Decoder.decode` raises (the exact error to answer).
    """
    obj = decoder.request_dict(data)
    if obj is not None:  # a request of the four members only: checked, no second look
        return Request(obj["id"], obj["method"], obj["params"])
    return decoder.decode(data)
