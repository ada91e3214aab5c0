"""List changes a stream still holds unsent: one copy is as good as many (legacy sessions' streams).

A ``notifications/tools/list_changed`` (and its ``prompts`` and
``resources`` siblings) says only "read the list again". Rules kept here:

* a stream that already holds an unsent copy of the same list change does
  not take another: the copy it holds reaches the client after the new
  change was made, so the client's next read of the list sees it;
* only messages not yet written are compared: nothing numbered, sent or kept
  for replay (``Last-Event-ID``) is touched, and every other message
  (requests, progress, logs, resource updates, responses) is added as before;
* the comparison is on the encoded bytes, against the encodings
  `encode_notification` gives these three methods (with and without empty
  ``params``, with and without the line's newline), so a message of any
  other shape is never taken for one.

Where it is applied: the legacy stream engine's `Stream.add`
(_stream_engine.py), so every stream of the in-memory session store; and the
Redis session store's standalone stream, where session notifications wait
for a GET (`signal` says which to coalesce; backends/redis/sessions.py keeps
the unsent list changes it holds). A request's stream in the Redis store is
written to Redis at once, so nothing waits there unsent to compare with.

Without this, a legacy session with no ``GET`` stream open (a client that
never opens one, or a session its client abandoned until the idle timeout
ends it) kept a copy per change up to ``replay_buffer`` (256 KiB of
accounting, about 1,300 copies, some 150 KiB of real memory): under the soak's
list changes every such session kept its buffer full, and the HTTP server's
memory was mostly these copies (bench/README.md, "Soak (30 minutes)").
"""

from __future__ import annotations

from ...jsonrpc import encode_notification

__all__ = ["redundant", "signal"]

_METHODS = (
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
)
_PARAMS: tuple[dict[str, object] | None, ...] = (None, {})
_SIGNALS = frozenset(
    encode_notification(method, params, line=line)
    for method in _METHODS
    for params in _PARAMS
    for line in (False, True)
)
_LONGEST = max(map(len, _SIGNALS))


def signal(data: bytes) -> bool:
    """Whether ``data`` is one of the list changes (any of the encodings above)."""
    return type(data) is bytes and len(data) <= _LONGEST and data in _SIGNALS


def redundant(data: bytes, pending: list[bytes]) -> bool:
    """Whether ``data`` need not be added to a stream's unsent ``pending``: a list change it holds already."""
    return signal(data) and data in pending
