"""Multi round-trip requests from the client's side (basic/patterns/mrtr.mdx), one step at a time.

Rules it keeps:

* ``resultType`` absent or ``"complete"`` ends the call (basic/index.mdx,
  "ResultType"); ``"input_required"`` is valid only on tools/call,
  resources/read and prompts/get in the modern era; anything else is a
  `ProtocolViolation`;
* an InputRequiredResult carries ``inputRequests`` (an object of request
  objects) or ``requestState`` (a string) or both (Server Requirement 6);
* every input request must be one the client declared a capability for
  (``elicitation/create``, ``sampling/createMessage``, ``roots/list``);
  one it did not is the server breaking Requirement 7, refused before any
  callback is asked;
* the retry carries the original params plus only this round's
  ``inputResponses`` and the ``requestState`` exactly as received, never
  one otherwise (Client Requirements 1-3); it goes out under a new id,
  which is the sender's business;
* at most ``max_rounds`` retries, then `ProtocolViolation`.

`MultiRoundCall` holds one call's progress: ``params`` is what to send next,
`receive` takes each result and returns ``None`` (complete) or the
`InputRound` to answer, `respond` takes the answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..protocol import methods
from ._errors import ProtocolViolation

__all__ = ["MultiRoundCall", "InputRound", "InputRequest", "INPUT_METHODS", "MRTR_METHODS", "check_complete"]

MRTR_METHODS = frozenset({methods.TOOLS_CALL, methods.RESOURCES_READ, methods.PROMPTS_GET})
#: Input request method -> the client capability (and callback) that answers it.
INPUT_METHODS = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def check_complete(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """``result`` if it is complete; `ProtocolViolation` for any other ``resultType``."""
    kind = result.get("resultType")
    if kind is None or kind == "complete":
        return result
    raise ProtocolViolation(f"{method} returned resultType {kind!r}, which is not valid for this request")


def undeclared(method: str, kind: str | None) -> ProtocolViolation:
    return ProtocolViolation(
        f"the server asked for {method!r}, which this client did not declare "
        f"(configure {kind or 'a callback'} on the Client)"
    )


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One entry of ``inputRequests``: its key, method, the capability that answers it, and params."""

    key: str
    method: str
    kind: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class InputRound:
    """What one InputRequiredResult asks: the requests in the order sent, and the state to echo."""

    requests: tuple[InputRequest, ...]
    state: str | None


class MultiRoundCall:
    """One call through its input rounds."""

    __slots__ = ("method", "original", "params", "rounds", "max_rounds", "modern", "declared", "_round")

    def __init__(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        max_rounds: int,
        modern: bool,
        declared: frozenset[str],
    ) -> None:
        self.method = method
        self.original = params
        #: The params to send next.
        self.params = params
        #: Retries so far (0 while the first request is out).
        self.rounds = 0
        self.max_rounds = max_rounds
        self.modern = modern
        self.declared = declared
        self._round: InputRound | None = None

    def receive(self, result: dict[str, Any]) -> InputRound | None:
        """``None`` when ``result`` is complete, else the round of input to answer."""
        kind = result.get("resultType")
        if kind is None or kind == "complete":
            return None
        method = self.method
        if kind != "input_required" or method not in MRTR_METHODS or not self.modern:
            raise ProtocolViolation(f"{method} returned resultType {kind!r}, which is not valid for this request")
        self.rounds += 1
        if self.rounds > self.max_rounds:
            raise ProtocolViolation(f"{method} still needed input after {self.max_rounds} rounds; giving up")
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if requests is None and state is None:
            raise ProtocolViolation("an InputRequiredResult must carry inputRequests or requestState")
        if requests is not None and type(requests) is not dict:
            raise ProtocolViolation("inputRequests must be an object")
        if state is not None and type(state) is not str:
            raise ProtocolViolation("requestState must be a string")
        asks: list[InputRequest] = []
        for key, ask in (requests or {}).items():
            if type(ask) is not dict or type(ask.get("method")) is not str:
                raise ProtocolViolation(f"inputRequests[{key!r}] is not a request object")
            capability = INPUT_METHODS.get(ask["method"])
            if capability is None or capability not in self.declared:
                raise undeclared(ask["method"], capability)
            params = ask.get("params")
            asks.append(InputRequest(key, ask["method"], capability, params if type(params) is dict else {}))
        self._round = InputRound(tuple(asks), state)
        return self._round

    def respond(self, responses: dict[str, Any]) -> dict[str, Any]:
        """The retry's params: the original ones, this round's ``inputResponses``, the ``requestState`` as received."""
        round_ = self._round
        if round_ is None:
            raise RuntimeError("respond() before receive() asked for input")
        self._round = None
        current = dict(self.original) if self.original is not None else {}
        if round_.requests:
            missing = [r.key for r in round_.requests if r.key not in responses]
            if missing:
                raise ValueError(f"no response for input request(s) {', '.join(missing)}")
            current["inputResponses"] = {r.key: responses[r.key] for r in round_.requests}
        if round_.state is not None:
            current["requestState"] = round_.state
        self.params = current
        return current
