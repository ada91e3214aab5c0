"""The rules of the wire checker (`_wirecheck`) as rules of ``wiremcp check``: ``wire-<code>``.

Every conversation a probe holds crosses the same `WireChecker` that ``tap``
and ``validate`` use; each problem it finds in what the server wrote is a
finding of the rule ``wire-<its code>``. `CODES` lists each code the
checker can report with the rule's severity, title, quote and source (a
test keeps it in step with the codes written in `_wirecheck`).
"""

from __future__ import annotations

from .._wirecheck import Problem
from ._findings import Finding, Rule, Severity, rule

__all__ = ["CHECKER_RULES", "finding_of"]

_BASIC = "basic/index.mdx (2026-07-28)"
_JSONRPC = "JSON-RPC 2.0 specification"
_E: Severity = "error"
_W: Severity = "warning"

#: code -> (severity, title, quote, source)
CODES: dict[str, tuple[Severity, str, str, str]] = {
    "parse-error": (_E, "Every line the server writes is one JSON message",
                    "The server MUST NOT write anything to its stdout that is not a valid MCP message.", "basic/transports/stdio.mdx"),
    "not-an-object": (_E, "A message is a JSON object", "A JSON-RPC message is a Request, Notification or Response object.", _JSONRPC),
    "batch": (_E, "The server sends no batches",
              "Messages are individual JSON-RPC requests, notifications, or responses (JSON-RPC batching was removed in 2025-06-18).",
              "basic/transports/stdio.mdx; changelog 2025-06-18"),
    "bad-jsonrpc": (_E, 'Every message says "jsonrpc": "2.0"',
                    'All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification. ("jsonrpc" MUST be exactly "2.0".)',
                    _BASIC),
    "invalid-envelope": (_E, "A message is a request, a notification or a response",
                         "Responses MUST include the same ID as the request they correspond to; a request has a method and an id.", _BASIC),
    "bad-params": (_E, "params is an object", "params?: { [key: string]: unknown }", _BASIC),
    "bad-method": (_E, "method is a string", "method: string", _BASIC),
    "reserved-method": (_W, "No method starts with rpc.",
                        "Method names that begin with the word rpc followed by a period character (U+002E or ASCII 46) are reserved.", _JSONRPC),
    "bad-error": (_E, "An error has an integer code and a string message",
                  "Error responses MUST include an error field with a code and message. Error codes MUST be integers.", _BASIC),
    "result-and-error": (_E, "A response has a result or an error, not both",
                         "Either the result member or error member MUST be included, but both members MUST NOT be included.", _JSONRPC),
    "bad-id": (_E, "Request ids are strings or integers", "Requests MUST include a string or integer ID.", _BASIC),
    "null-id": (_E, "Ids are never null (except an error to an unreadable request)",
                "Unlike base JSON-RPC, the ID MUST NOT be null.", _BASIC),
    "duplicate-id": (_E, "The server does not reuse an id in flight",
                     "The request ID MUST NOT match the ID of any other request the sender has issued and not yet received a response for.", _BASIC),
    "unknown-id": (_E, "A response answers a request that was sent",
                   "Result responses MUST include the same ID as the request they correspond to.", _BASIC),
    "already-answered": (_E, "A request is answered once",
                         "Responses are sent in reply to requests, containing either the result or error of the operation.", _BASIC),
    "never-answered": (_E, "Every request is answered",
                       "Responses are sent in reply to requests, containing either the result or error of the operation.", _BASIC),
    "unknown-method": (_E, "The server sends only methods its revision defines", "(schema.json of the revision)", "schema.json"),
    "wrong-direction": (_E, "The server sends only server-side methods", "(schema.json: ServerRequest, ServerNotification)", "schema.json"),
    "removed-method": (_E, "No method 2026-07-28 removed", "(changelog.mdx of 2026-07-28: removed methods)", "changelog.mdx (2026-07-28)"),
    "server-request": (_E, "A modern server sends no requests",
                       "The server MUST NOT write JSON-RPC requests to stdout.", "basic/transports/stdio.mdx (2026-07-28)"),
    "missing-meta": (_E, "Modern requests carry their _meta",
                     "fields marked as required MUST be included on every request.", "basic/index.mdx (2026-07-28), _meta"),
    "unknown-version": (_E, "The server chooses a protocol version that exists",
                        "Otherwise, the server MUST respond with another protocol version it supports.", "basic/lifecycle.mdx (2025-11-25)"),
    "bad-meta": (_E, "_meta is an object", "_meta?: { [key: string]: unknown }", "basic/index.mdx, _meta"),
    "bad-meta-key": (_E, "_meta keys have the reserved format",
                     "If specified, MUST be a series of labels separated by dots (.), followed by a slash (/).", "basic/index.mdx, _meta"),
    "missing-result-type": (_E, "Modern results carry resultType",
                            "The result MUST include a resultType field to indicate the type of the result.", _BASIC),
    "bad-result-type": (_E, "resultType is complete or input_required",
                        "A resultType of any value unrecognized by the client MUST be considered invalid.", _BASIC),
    "missing-cache-hints": (_E, "Cacheable modern results carry ttlMs and cacheScope",
                            "Servers MUST include caching hints (ttlMs, cacheScope) on the results of cacheable requests.", "caching.mdx (2026-07-28)"),
    "bad-cache-hints": (_E, "Caching hints have the right types",
                        'ttlMs is an integer >= 0; cacheScope is "public" or "private".', "caching.mdx (2026-07-28)"),
    "retired-error-code": (_E, "No retired error code",
                           "Implementations of this protocol version MUST NOT emit these codes: -32002.", _BASIC),
    "legacy-result-type": (_W, "A legacy session's results carry no resultType",
                           "resultType is a 2026-07-28 member; earlier revisions' results have no such member.", "schema.mdx, Result"),
    "mrtr-not-allowed": (_E, "Only tools/call, prompts/get and resources/read ask for input",
                         "(mrtr.mdx) input_required answers tools/call, prompts/get or resources/read", "basic/patterns/mrtr.mdx"),
    "mrtr-empty": (_E, "An InputRequiredResult asks for something",
                   "An InputRequiredResult MUST include inputRequests or requestState.", "basic/patterns/mrtr.mdx"),
    "mrtr-bad-input-request": (_E, "Input requests are of the allowed kinds",
                               "(mrtr.mdx) elicitation/create, sampling/createMessage or roots/list", "basic/patterns/mrtr.mdx"),
    "mrtr-undeclared-capability": (_E, "Input requests use only declared capabilities",
                                   "A server MUST NOT rely on capabilities the client has not declared.", "basic/index.mdx (2026-07-28)"),
    "unknown-request-state": (_E, "requestState is echoed", "clients MUST echo it exactly", "basic/patterns/mrtr.mdx"),
    "unexpected-input-response": (_E, "inputResponses answer what was asked", "(mrtr.mdx)", "basic/patterns/mrtr.mdx"),
    "cancel-unknown": (_W, "Cancellations name requests that were sent",
                       "Cancellation notifications MUST only reference requests that were previously issued.", "basic/patterns/cancellation.mdx"),
    "schema": (_E, "Every message matches the revision's schema", "(schema.json of the revision)", "schema.json"),
    "bad-result": (_E, "A result is an object", "result: { [key: string]: unknown }", _BASIC),
}

#: code -> the rule ``wire-<code>``
CHECKER_RULES: dict[str, Rule] = {
    code: rule(f"wire-{code}", "wire", severity, title, quote, source) for code, (severity, title, quote, source) in CODES.items()
}

_OTHER = rule(
    "wire-checker", "wire", "error", "Every message passes the wire checker",
    "(wiremcp's wire checker, the rules of `wiremcp tap`)", "docs/tap.md",
)


def finding_of(found: Problem, envelopes: tuple[str, ...]) -> Finding:
    """The finding of one problem the checker found in what the server wrote."""
    checked = CHECKER_RULES.get(found["code"], _OTHER)
    return Finding(checked, found["message"], found["code"], envelopes)
