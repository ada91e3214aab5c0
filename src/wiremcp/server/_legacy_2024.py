"""What a session that negotiated 2024-11-05 gets differently: the oldest revision a legacy client may speak.

Clients that know only 2024-11-05 are still deployed (official mcp releases up to 1.7, hosts on the
HTTP+SSE transport); they refuse an ``initialize`` answered with any other version. 2025-03-26 is
2024-11-05 plus (its changelog): the OAuth authorization framework, Streamable HTTP in place of
HTTP+SSE, JSON-RPC batching, tool annotations, audio content, the ``completions`` capability and
a ``message`` on progress notifications. The handlers are written once for every era; a 2024-11-05
session gets their results reshaped here, after the handler, so that a client validating against
its own schema (mcp 1.7.1 checks content types one by one) accepts them. The rules:

* ``initialize``: the capabilities are those 2024-11-05 defines (``experimental``, ``logging``,
  ``prompts``, ``resources``, ``tools``): no ``completions`` (``completion/complete`` itself is
  2024-11-05 and is still answered), nor the ``tasks`` or ``extensions`` of later revisions;
* ``tools/list``: each tool lacks ``annotations``;
* content (``tools/call`` results' ``content``, ``prompts/get`` messages' ``content``): an item of
  a type 2024-11-05 does not have (``audio``; ``resource_link``, from 2025-06-18) becomes a
  ``text`` item that says what it was, never dropped in silence; ``text``, ``image`` and
  ``resource`` items pass unchanged;
* ``notifications/progress`` lacks ``message``;
* batching: never accepted by wiremcp in any era, nothing to do; authorization and transports
  are the transport's (HTTP+SSE: `wiremcp.transports.http._legacy_sse`).

Every legacy session, not only 2024-11-05's, gets its results through `legacy_result`: no
``resultType`` (a 2026-07-28 member; no legacy schema has it).

Fields newer revisions added elsewhere (``title``, ``outputSchema``, ``structuredContent``,
``_meta``) are left: 2024-11-05's schema lets objects carry more properties, and its clients ignore
them. Results are copied where changed, never edited in place (they may be cached and shared).
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable

from ..protocol import methods

__all__ = ["OLDEST", "initialize_result", "legacy_result", "reshape", "reshape_emit"]

#: The revision handled here.
OLDEST = "2024-11-05"
#: Server capabilities 2024-11-05 defines.
_CAPABILITIES = frozenset({"experimental", "logging", "prompts", "resources", "tools"})
#: Content types 2024-11-05 defines.
_CONTENT_TYPES = frozenset({"text", "image", "resource"})


def initialize_result(result: dict[str, Any]) -> dict[str, Any]:
    """The ``initialize`` result for a 2024-11-05 client."""
    caps = result.get("capabilities")
    if type(caps) is dict and not caps.keys() <= _CAPABILITIES:
        result = {**result, "capabilities": {k: v for k, v in caps.items() if k in _CAPABILITIES}}
    return result


def _item(item: Any) -> Any:
    if type(item) is not dict or item.get("type") in _CONTENT_TYPES:
        return item
    kind = item.get("type")
    if kind == "audio":
        text = f"[audio content ({item.get('mimeType', 'unknown type')}): not representable in MCP 2024-11-05]"
    elif kind == "resource_link":
        text = f"[resource link: {item.get('uri')}" + (f" ({item['name']})" if item.get("name") else "") + "]"
    else:
        text = f"[{kind} content: not representable in MCP 2024-11-05]"
    return {"type": "text", "text": text}


def _content(items: Any) -> Any:
    if type(items) is not list or all(type(i) is not dict or i.get("type") in _CONTENT_TYPES for i in items):
        return items
    return [_item(i) for i in items]


def _result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    if method == methods.TOOLS_LIST:
        tools = result.get("tools")
        if type(tools) is list and any(type(t) is dict and "annotations" in t for t in tools):
            tools = [{k: v for k, v in t.items() if k != "annotations"} if type(t) is dict else t for t in tools]
            return {**result, "tools": tools}
    elif method == methods.TOOLS_CALL:
        content = _content(result.get("content"))
        if content is not result.get("content"):
            return {**result, "content": content}
    elif method == methods.PROMPTS_GET:
        messages = result.get("messages")
        if type(messages) is list:
            changed = [
                {**m, "content": _item(m["content"])} if type(m) is dict and _item(m.get("content")) is not m.get("content") else m
                for m in messages
            ]
            if any(a is not b for a, b in zip(changed, messages)):
                return {**result, "messages": changed}
    return result


async def _later(method: str, pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return _result(method, await pending)


def reshape(method: str, result: dict[str, Any] | Awaitable[dict[str, Any]]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """The result of ``method`` (or an awaitable of it) as a 2024-11-05 client reads it."""
    if inspect.isawaitable(result):
        return _later(method, result)
    return _result(method, result)


#: Members of a result that exist only in 2026-07-28 (its schema.json; none is in 2025-11-25's):
#: the result's kind and the caching hints.
MODERN_ONLY_RESULT_MEMBERS = frozenset({"resultType", "ttlMs", "cacheScope"})


def _without_result_type(result: dict[str, Any]) -> dict[str, Any]:
    if type(result) is dict and not MODERN_ONLY_RESULT_MEMBERS.isdisjoint(result):
        return {k: v for k, v in result.items() if k not in MODERN_ONLY_RESULT_MEMBERS}
    return result


async def _later_without(pending: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    return _without_result_type(await pending)


def legacy_result(result: dict[str, Any] | Awaitable[dict[str, Any]]) -> dict[str, Any] | Awaitable[dict[str, Any]]:
    """A result (or an awaitable of it) for any legacy session: without ``resultType``, ``ttlMs`` and
    ``cacheScope`` (members of 2026-07-28 only), copied when one is there."""
    if inspect.isawaitable(result):
        return _later_without(result)
    return _without_result_type(result)


def reshape_emit(emit: Any) -> Any:
    """``emit`` (method, params) for a 2024-11-05 session: progress notifications lose ``message``."""
    if emit is None:
        return None

    def emit_2024(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/progress" and "message" in params:
            params = {k: v for k, v in params.items() if k != "message"}
        emit(method, params)

    return emit_2024
