"""The fused ``tools/call``, decoded and type-checked in one pass in C.

A fused call is the request a model makes over and over: a ``tools/call``
with ``name``, scalar ``arguments`` and the ``_meta`` every 2026-07-28
request carries, and nothing else. `decode_fused_call` is a msgspec
decoder that turns its bytes into a `FusedEnvelope` and checks, in the same
pass, every envelope and ``params`` rule `Server.handle` would check for it.
The pipeline's fused stage (`_intake.FastPath`) uses it, makes a `FusedCall`
and answers; anything the decoder refuses goes to the general stage
(`jsonrpc.Decoder`, then `Server.handle`), which gives the exact error. The
rules it keeps:

* It accepts a subset of what the general path accepts, never more: an
  object with exactly the members ``jsonrpc`` (``"2.0"``), ``id`` (a string or
  an integer), ``method`` (``"tools/call"``) and ``params``; ``params`` with
  ``name`` (a string), ``_meta`` (an object) and ``arguments`` (optional: an
  object or null) and no other member; ``_meta`` with the protocol version (a
  string), the client capabilities (an object) and, optionally, the client
  info (an object), and no other member; each argument a string, an integer,
  a number or a boolean. Whatever the arguments' schema says is checked
  afterwards against `Tool.fused_arguments`, in Python, as before.
* It reads JSON as orjson does (orjson is the general path's parser): both
  refuse a byte-order mark, invalid UTF-8, a lone surrogate, NaN and
  Infinity, control characters in strings and trailing data; both keep the
  last of repeated members. They differ in one place, integers beyond 64 bits
  (orjson makes a float of one above 2**64, msgspec keeps it exact), so
  integers here are bounded to the signed 64-bit range and any other goes to
  the general path.
* The size and nesting limits are the transport's (`jsonrpc.Decoder`). Every
  value has a bounded shape: the capabilities and the client info are
  objects whose values nest at most three levels (`_V3`), so a fused call nests
  at most `MAX_FUSED_DEPTH` levels (the default limit is 128), and no walk or
  count is needed; a call whose capabilities nest deeper is no fused call, and
  `FastPath` declines everything under a limit below that.
* A refusal is a `msgspec.DecodeError` (`msgspec.ValidationError` is one),
  which `FastPath.serve` turns into None. Nothing here raises otherwise.

`FastPath` imports this module (and msgspec with it) when it is first asked
for a fused call, not with `wiremcp`: a client, or a server that never
answers one, does not load it.
"""



from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

import msgspec
import orjson

from ..jsonrpc import Request
from ..protocol.meta import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION

if TYPE_CHECKING:
    from ._tools import Tool

__all__ = ["MAX_FUSED_DEPTH", "DecodeError", "FusedCall", "FusedEnvelope", "decode_fused_call"]

class FusedCall(msgspec.Struct, gc=False):
    """A fused ``tools/call``, decoded and checked, not yet run: `FastPath.serve`'s named result, handed to the transport's vet.

    ``id``: the request id; ``tool``: the `Tool` it names; ``arguments``: as
    sent; ``version``: its ``_meta`` protocol version; ``data``: its bytes.
    (A struct, made in C: the fused path makes one per call.)
    """

    id: Any
    tool: "Tool"
    arguments: dict[str, Any]
    version: str
    data: bytes

    def request(self) -> Request:
        """The same call as the general stage's `Request` (when the transport declines the fused reply)."""
        obj = orjson.loads(self.data)  # checked by the fused decoder: every envelope rule holds
        return Request(obj["id"], obj["method"], obj["params"])

#: What a refusal raises (`msgspec.ValidationError` is one).
DecodeError = msgspec.DecodeError

# orjson's integers (the general path's) are exact within 64 bits; beyond, it makes floats.
_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
#: The JSON values with at most N levels of arrays and objects. The capabilities' and the client info's
#: values are `_V3`: a client's ``extensions`` and its icons need three levels. (The decoder expands each
#: union into its own branches: a level more doubles the start-up cost of building it, ~5 M instructions.)
#: (Their integers need no bound: the fused path reads nothing in them but their shape.)
_V0 = Union[int, float, str, bool, None]
_V1 = Union[int, float, str, bool, None, list[_V0], dict[str, _V0]]
_V2 = Union[int, float, str, bool, None, list[_V1], dict[str, _V1]]
_V3 = Union[int, float, str, bool, None, list[_V2], dict[str, _V2]]
_NESTED = 3
#: The deepest a fused call nests: the message, ``params``, ``_meta``, the capabilities, their values.
MAX_FUSED_DEPTH = 4 + _NESTED


class FusedMeta(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``params._meta`` of a fused call: the version, the capabilities, the client info (or UNSET)."""

    version: str = msgspec.field(name=PROTOCOL_VERSION)
    capabilities: dict[str, _V3] = msgspec.field(name=CLIENT_CAPABILITIES)
    info: Union[dict[str, _V3], msgspec.UnsetType] = msgspec.field(name=CLIENT_INFO, default=msgspec.UNSET)


class FusedParams(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """``params`` of a fused call: the tool's name, ``_meta`` and scalar arguments (or None)."""

    name: str
    meta: FusedMeta = msgspec.field(name="_meta")
    arguments: Union[dict[str, Union[_Int64, float, str, bool]], None] = None


class FusedEnvelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A fused call, decoded: ``jsonrpc``, ``id``, ``method`` and ``params``."""

    jsonrpc: Literal["2.0"]
    id: Union[_Int64, str]
    method: Literal["tools/call"]
    params: FusedParams


#: bytes -> `FusedEnvelope`, or `DecodeError` for anything the general path must decide.
decode_fused_call = msgspec.json.Decoder(FusedEnvelope).decode
