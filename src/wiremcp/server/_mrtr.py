"""Multi round-trip requests (basic/patterns/mrtr.mdx): the server side.

A handler that needs input from the client (elicitation, sampling, roots)
asks through its `Context` (``await ctx.elicit(...)``). Under 2026-07-28 a
request cannot wait for the answer, so:

1. the ask finds no answer and raises `InputRequired` naming what it needs
   (only after checking the client declared the capability: otherwise
   -32021 with ``data.requiredCapabilities``, basic/index.mdx);
2. `Server.handle` turns it into ``{"resultType": "input_required",
   "inputRequests": {...}, "requestState": ...}``; the sealed state carries
   the answers gathered in earlier rounds and is bound to this request
   (method + salient params) and an expiry (`wiremcp.protocol.state`);
3. the client retries with ``inputResponses`` (a new id); `begin` verifies
   the state (a tampered, expired or foreign state is -32602) and the
   handler runs again from the top, finding its answers this time.

The caller is bound too (`caller`): when the request is authenticated (a
transport set `current_auth` to its verified access token, as Streamable
HTTP with a ``ResourceServer`` does), the state is sealed for the token's
issuer, subject and client id (`_authorization.caller`: the same user
through another OAuth client is another caller) and refused for any other
caller, or for an unauthenticated retry. Where requests are
not authenticated (stdio) there is no caller to bind. What the seal
guarantees is listed in `wiremcp.protocol.state`.

Only ``tools/call``, ``prompts/get`` and ``resources/read`` may answer with
``input_required`` (mrtr.mdx, Supported Requests). Keys of responses the
server did not ask for are ignored; a request whose answer is missing is
asked again rather than failed (mrtr.mdx, Error Handling).
"""

from __future__ import annotations

from typing import Any

from ..jsonrpc import InvalidParams
from ..protocol import methods
from ..protocol.errors import MissingClientCapability
from ..protocol.meta import RequestMeta
from ..protocol.state import StateSealer, request_digest
from ._schema import compile_validator

__all__ = [
    "caller",
    "InputRequired",
    "MRTR_METHODS",
    "CAPABILITY_OF",
    "begin",
    "salient",
    "input_required_result",
    "check_capabilities",
    "check_answer",
]

MRTR_METHODS = frozenset({methods.TOOLS_CALL, methods.PROMPTS_GET, methods.RESOURCES_READ})

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"
#: The client capability each input request needs.
CAPABILITY_OF = {ELICIT: "elicitation", SAMPLE: "sampling", ROOTS: "roots"}


def caller() -> str | None:
    """Who sent the request being served, for binding its requestState; ``None`` when unauthenticated.

    The verified access token in `current_auth` names the caller: its issuer,
    subject and client id (`_authorization.caller`).
    """
    from ._authorization import caller as who  # imports _context, which imports this module: at call time

    return who()


class InputRequired(BaseException):
    """Raised inside a handler when it needs input the request did not carry.

    A `BaseException`, like `asyncio.CancelledError`, so that a handler's
    ``except Exception`` (or a tool wrapper's) does not swallow it: tool code
    must let it propagate to `Server.handle`.
    """

    #: Under ``wiremcp dev`` only: the visible work the handler did before asking (``"progress"``,
    #: ``"a log message"``), which the engine warns will be done again (`_definition.warn_rerun`).
    visible: tuple[str, ...] = ()

    def __init__(self, input_requests: dict[str, dict[str, Any]], answers: dict[str, Any] | None = None) -> None:
        super().__init__("input required")
        self.input_requests = input_requests
        self.answers = answers or {}


def salient(method: str, params: dict[str, Any]) -> Any:
    """What identifies a request for the purpose of binding its requestState."""
    if method == methods.RESOURCES_READ:
        return params.get("uri")
    return [params.get("name"), params.get("arguments") or {}]


def begin(sealer: StateSealer, method: str, params: dict[str, Any], meta: RequestMeta) -> None:
    """Verify a retry's ``requestState`` and gather its answers into ``meta.inputs``."""
    state = params.get("requestState")
    responses = params.get("inputResponses")
    if state is None and responses is None:
        return
    if responses is not None and type(responses) is not dict:
        raise InvalidParams("Invalid params: inputResponses must be an object keyed by input request")
    answers: dict[str, Any] = {}
    if state is not None:
        sealed = sealer.open(state, request_digest(method, salient(method, params)), caller())
        if type(sealed) is dict:
            answers.update(sealed)
    if responses:
        answers.update(responses)
    meta.inputs = answers


def input_required_result(sealer: StateSealer, method: str, params: dict[str, Any], exc: InputRequired) -> dict[str, Any]:
    digest = request_digest(method, salient(method, params))
    return {
        "resultType": "input_required",
        "inputRequests": exc.input_requests,
        "requestState": sealer.seal(digest, exc.answers, caller()),
    }


def check_capabilities(requests: dict[str, dict[str, Any]], capabilities: dict[str, Any]) -> None:
    """-32021 unless the client declared what every request needs (mrtr.mdx, requirement 7)."""
    missing: dict[str, Any] = {}
    for request in requests.values():
        method = request["method"]
        name = CAPABILITY_OF[method]
        declared = capabilities.get(name)
        if method == ELICIT:
            mode = (request.get("params") or {}).get("mode", "form")
            ok = type(declared) is dict and (mode in declared or (mode == "form" and not declared))
            if not ok:
                missing["elicitation"] = {mode: {}} if declared else ({} if mode == "form" else {"url": {}})
        elif type(declared) is not dict:
            missing[name] = {}
    if missing:
        raise MissingClientCapability(missing)


def check_answer(key: str, request: dict[str, Any], answer: Any) -> None:
    """-32602 unless ``answer`` is a well-formed result for ``request`` (mrtr.mdx, Error Handling)."""
    where = f"inputResponses[{key!r}]"
    if type(answer) is not dict:
        raise InvalidParams(f"Invalid params: {where} must be an object (the client's result)")
    method = request["method"]
    if method == ELICIT:
        action = answer.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise InvalidParams(f"Invalid params: {where}.action must be accept, decline or cancel")
        schema = (request.get("params") or {}).get("requestedSchema")
        if action == "accept" and schema is not None and "content" in answer:
            problem = compile_validator(schema, "content")(answer.get("content"))
            if problem is not None:
                raise InvalidParams(f"Invalid params: {where} does not match the requested schema: {problem}")
    elif method == SAMPLE:
        if answer.get("role") not in ("assistant", "user") or "content" not in answer:
            raise InvalidParams(f"Invalid params: {where} must be a CreateMessageResult with role and content")
    elif method == ROOTS:
        if type(answer.get("roots")) is not list:
            raise InvalidParams(f"Invalid params: {where} must be a ListRootsResult with a roots array")
