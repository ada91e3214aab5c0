"""Method names (server/*.mdx, basic/patterns/*.mdx, changelog.mdx)."""

from __future__ import annotations

__all__ = [
    "DISCOVER",
    "TOOLS_LIST",
    "TOOLS_CALL",
    "RESOURCES_LIST",
    "RESOURCES_TEMPLATES_LIST",
    "RESOURCES_READ",
    "PROMPTS_LIST",
    "PROMPTS_GET",
    "COMPLETION_COMPLETE",
    "SUBSCRIPTIONS_LISTEN",
    "CANCELLED",
    "PROGRESS",
    "MESSAGE",
    "REMOVED_IN_MODERN",
    "CACHEABLE",
]

DISCOVER = "server/discover"
TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
RESOURCES_LIST = "resources/list"
RESOURCES_TEMPLATES_LIST = "resources/templates/list"
RESOURCES_READ = "resources/read"
PROMPTS_LIST = "prompts/list"
PROMPTS_GET = "prompts/get"
COMPLETION_COMPLETE = "completion/complete"
SUBSCRIPTIONS_LISTEN = "subscriptions/listen"

# Notifications.
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
MESSAGE = "notifications/message"

#: Legacy methods that 2026-07-28 removed (changelog.mdx, items 2 and 5):
#: a modern server answers them with -32601 (HTTP 404).
REMOVED_IN_MODERN = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)

#: Results that MUST carry ``ttlMs`` and ``cacheScope`` (server/utilities/caching.mdx).
CACHEABLE = frozenset(
    {DISCOVER, TOOLS_LIST, PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST, RESOURCES_READ}
)
