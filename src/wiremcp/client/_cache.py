"""Results kept for their ``ttlMs`` (server/utilities/caching.mdx).

Rules it keeps:

* only complete results are stored, and only when ``ttlMs`` is a positive
  integer (absent, 0 or negative: not kept); the entry is fresh until
  ``now + ttlMs`` on the caller's clock (every method takes ``now``: the
  cache reads no clock);
* the key is the method and the params without ``_meta``, with object keys
  sorted, so that the same request in another spelling hits;
* a result that came from an MRTR retry is never stored (the caller does not
  offer it: "Cache Key");
* ``notifications/*/list_changed`` drops every entry of the matching list
  methods, ``notifications/resources/updated`` the ``resources/read`` entry
  of its URI ("Interaction with Notifications");
* one cache per client: ``cacheScope`` "private" and "public" are kept
  alike, since one client has one authorization context.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..protocol import methods

__all__ = ["ResultCache", "INVALIDATES"]

#: Which cached methods each list_changed notification makes stale.
INVALIDATES: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": (methods.TOOLS_LIST,),
    "notifications/prompts/list_changed": (methods.PROMPTS_LIST,),
    "notifications/resources/list_changed": (methods.RESOURCES_LIST, methods.RESOURCES_TEMPLATES_LIST),
}
_RESOURCES_UPDATED = "notifications/resources/updated"

Key = tuple[str, bytes]


def _key(method: str, params: dict[str, Any] | None) -> Key:
    if params and "_meta" in params:
        params = {k: v for k, v in params.items() if k != "_meta"}
    return method, orjson.dumps(params or {}, option=orjson.OPT_SORT_KEYS)


class ResultCache:
    """Complete results by method and params, each until its ``ttlMs`` runs out."""

    __slots__ = ("enabled", "_entries")

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._entries: dict[Key, tuple[float, dict[str, Any]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, method: str, params: dict[str, Any] | None, now: float) -> dict[str, Any] | None:
        """The fresh result for this request, or ``None`` (a stale one is dropped)."""
        if not self.enabled:
            return None
        key = _key(method, params)
        hit = self._entries.get(key)
        if hit is None:
            return None
        if now < hit[0]:
            return hit[1]
        del self._entries[key]
        return None

    def put(self, method: str, params: dict[str, Any] | None, result: dict[str, Any], now: float) -> bool:
        """Keep ``result`` for its ``ttlMs``; returns whether it was kept."""
        if not self.enabled:
            return False
        ttl = result.get("ttlMs")
        if type(ttl) is not int or ttl <= 0:
            return False
        self._entries[_key(method, params)] = (now + ttl / 1000.0, result)
        return True

    def invalidate(self, *methods_: str) -> None:
        """Drop the results of these methods, or every result when none is named."""
        if not methods_:
            self._entries.clear()
            return
        for key in [k for k in self._entries if k[0] in methods_]:
            del self._entries[key]

    def notified(self, method: str, params: dict[str, Any]) -> None:
        """Apply a notification: list_changed and resources/updated make entries stale."""
        stale = INVALIDATES.get(method)
        if stale is not None:
            self.invalidate(*stale)
        elif method == _RESOURCES_UPDATED and type(params.get("uri")) is str:
            self._entries.pop(_key(methods.RESOURCES_READ, {"uri": params["uri"]}), None)
