"""Options, one frozen type per kind: tools, resources, prompts, and the server's own settings.

``@server.tool(...)``, ``server.add_tool(fn, ...)`` and ``Tool(fn, ...)``
take the same keyword arguments; they are gathered once into a `ToolOptions`
(likewise `ResourceOptions`, `PromptOptions`) and that value is passed down
to the component, which checks and applies it.

Rules:

* each option is named here and in the public signature that documents it
  (the decorator), nowhere else: registration passes the whole value on;
* an unknown keyword is a TypeError at once (the constructor's, keywords only),
  naming it; the values themselves are checked by the component (`Tool`,
  `Resource`, `Prompt`), which knows the rules and the name to report;
* the defaults here are the defaults of the public API;
* each field is declared once, ``name: type = default``; a value is frozen
  (`_Frozen`: what a frozen keyword-only dataclass gives, cheap to define at
  import): what was registered cannot change behind the registry's back;
* `ServerSettings.read` gives each ``Server`` setting its value once: the
  argument if given, else its ``WIREMCP_*`` variable, else the default
  (`_settings.setting`), and refuses an impossible one (ValueError) before
  anything is built.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Literal, dataclass_transform

from ..protocol.state import DEFAULT_STATE_TTL
from ._backend import default_task_store
from ._lifespan import DEFAULT_SHUTDOWN_GRACE
from ._settings import (
    DEFAULT_CLIENT_REQUEST_TIMEOUT,
    DEFAULT_MAX_SUBSCRIPTIONS,
    DEFAULT_THREADS,
    legacy_log_level_setting,
    parse_bool,
    parse_keys,
    parse_level,
    setting,
)

if TYPE_CHECKING:
    from ..backends import Backend
    from ._tasks import TaskStore
    from ._apps import Visibility
    from ._tasks._modes import TaskMode
    from ._tools import ToolAnnotations
    from ._transform import Arg, Output

__all__ = [
    "ToolOptions", "TransformOptions", "ResourceOptions", "PromptOptions", "CacheScope", "ServerSettings",
    "DEFAULT_LIST_TTL_MS", "task_options", "TAGS_META", "tag_set", "with_tags",
]

CacheScope = Literal["public", "private"]
#: How long clients may cache list results and discovery, unless configured.
DEFAULT_LIST_TTL_MS = 60_000
#: The ``_meta`` key a listed component's tags are published under (sorted), when it has any:
#: wiremcp's own reverse-DNS prefix (basic/index.mdx, "_meta": ``io.modelcontextprotocol/`` is MCP's).
TAGS_META = "io.wiremcp/tags"


def tag_set(tags: Iterable[str] | None, where: str) -> frozenset[str]:
    """Registration's ``tags=`` (and ``include_tags``...): a set of non-empty strings (TypeError, ValueError otherwise)."""
    if tags is None:
        return frozenset()
    if isinstance(tags, str):
        raise TypeError(f"{where}: tags are a set of tag names, not one string (write {{{tags!r}}})")
    out = frozenset(tags)
    for tag in out:
        if type(tag) is not str or not tag:
            raise ValueError(f"{where}: {tag!r} is not a tag (a non-empty string)")
    return out


def with_tags(meta: dict[str, Any] | None, tags: frozenset[str], where: str) -> dict[str, Any] | None:
    """A definition's ``_meta`` with the component's tags under `TAGS_META` (``meta`` itself when it has none)."""
    if not tags:
        return meta
    if meta and TAGS_META in meta:
        raise ValueError(f"{where}: _meta key {TAGS_META!r} is where tags= are published; pass tags=, not meta=")
    return {**(meta or {}), TAGS_META: sorted(tags)}


_set = object.__setattr__
_MISSING = object()


@dataclass_transform(kw_only_default=True, frozen_default=True)
class _Frozen:
    """A frozen value of named fields, each declared once: ``name: type = default`` in the class body.

    What ``@dataclass(frozen=True, kw_only=True)`` gives, done once here for
    the types below: the keyword-only ``__init__`` (a field without a default
    is required; an unknown keyword is a TypeError naming it), equal and
    hashed by type and fields, shown as ``Name(field=value, ...)``,
    `FrozenInstanceError` on assignment or deletion, copied and pickled by
    field. Making them dataclasses cost ~16 M instructions at every server's
    start (bench/README.md, "Cold start"); `__init_subclass__` here reads the
    class's annotations (strings: nothing is evaluated), which costs what any
    class does. ``dataclass_transform`` tells type checkers the same, so a
    call with a wrong keyword is caught before it runs.
    """

    _FIELDS: ClassVar[tuple[str, ...]] = ()
    _DEFAULTS: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls) -> None:
        names = [name for name, hint in cls.__dict__.get("__annotations__", {}).items() if not hint.startswith("ClassVar")]
        cls._FIELDS = tuple(names)
        cls._DEFAULTS = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def __init__(self, **given: Any) -> None:
        defaults = self._DEFAULTS
        for name in self._FIELDS:
            value = given.pop(name, defaults.get(name, _MISSING))
            if value is _MISSING:
                raise TypeError(f"{type(self).__qualname__}() missing required keyword argument: {name!r}")
            _set(self, name, value)
        if given:
            raise TypeError(f"{type(self).__qualname__}() got an unexpected keyword argument {next(iter(given))!r}")

    def _fields(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._FIELDS])

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"{type(self).__qualname__}({shown})"

    def __getstate__(self) -> tuple[Any, ...]:
        return self._fields()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._FIELDS, state):
            _set(self, name, value)


class ToolOptions(_Frozen):
    """A tool's options (see ``Server.tool`` for what each means)."""


    name: str | None = None
    title: str | None = None
    description: str | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    structured_output: bool | None = None
    annotations: ToolAnnotations | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    scopes: Iterable[str] | None = None
    tags: Iterable[str] | None = None
    inline: bool = False
    ui: str | None = None
    visibility: Visibility | Iterable[Visibility] | None = None
    task: TaskMode = "never"


class TransformOptions(_Frozen):
    """A derived tool's options (see ``Server.add_transformed`` and `wiremcp.server.transform`).

    ``name`` is the new tool's name (required); ``title`` and ``description``
    replace the source's (None keeps them); ``arguments`` maps a source
    argument's name to its `Arg` (renamed, described, hidden, given a
    default); ``output`` receives the source's result (a `ToolResult`) and
    returns the derived tool's, as a tool function's return value;
    ``output_schema`` publishes one for it (else its return annotation's);
    ``replace`` takes the source off this server's list under its own name.
    """

    name: str
    title: str | None = None
    description: str | None = None
    arguments: dict[str, Arg] | None = None
    output: Output | None = None
    output_schema: dict[str, Any] | None = None
    replace: bool = False


class ResourceOptions(_Frozen):
    """A resource's or template's options besides its URI (see ``Server.resource``)."""


    name: str | None = None
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    ttl_ms: int | None = None
    cache_scope: CacheScope | None = None
    scopes: Iterable[str] | None = None
    tags: Iterable[str] | None = None
    inline: bool = False


class PromptOptions(_Frozen):
    """A prompt's options (see ``Server.prompt``)."""


    name: str | None = None
    title: str | None = None
    description: str | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    scopes: Iterable[str] | None = None
    tags: Iterable[str] | None = None
    inline: bool = False


class ServerSettings(_Frozen):
    """The ``Server`` settings that a ``WIREMCP_*`` variable may set, read and checked (see `read`)."""


    #: How long clients may cache list results and discovery (server/utilities/caching.mdx).
    list_ttl_ms: int
    #: Whether those results are the same for every caller ("public") or not ("private").
    cache_scope: CacheScope
    #: Items per page of a list result (None: one page).
    page_size: int | None
    #: The keys that seal ``requestState`` (see _mrtr, protocol/state); None: a key of this process.
    state_keys: Iterable[str | bytes] | None
    #: Seconds a sealed ``requestState`` stays valid.
    state_ttl: float
    #: ``subscriptions/listen`` streams open at once, at most (one more is -32000).
    max_subscriptions: int
    #: Serve 2025-11-25 clients (initialize handshake) too; see _legacy.
    legacy: bool
    #: What a legacy session logs before ``logging/setLevel`` (None: nothing); see _legacy.
    legacy_log_level: str | None
    #: Worker threads for plain ``def`` handlers (see _workers), at most.
    threads: int
    #: Hide unexpected exceptions' text from clients (see _failures); False for development.
    mask_errors: bool
    #: The ``wiremcp`` logger's level (None: leave logging alone).
    log_level: str | int | None
    #: Seconds a legacy (2025-11-25) client has to answer our elicitation, sampling or roots request.
    client_request_timeout: float
    #: Seconds requests in flight get to finish on shutdown before they are cancelled.
    shutdown_grace: float

    @classmethod
    def read(
        cls,
        *,
        list_ttl_ms: int | None,
        cache_scope: CacheScope,
        page_size: int | None,
        state_keys: Iterable[str | bytes] | None,
        state_ttl: float | None,
        max_subscriptions: int | None,
        legacy: bool | None,
        legacy_log_level: str | None,
        threads: int | None,
        mask_errors: bool | None,
        log_level: str | int | None,
        client_request_timeout: float | None,
        shutdown_grace: float | None,
    ) -> ServerSettings:
        """Each setting: the argument, else its ``WIREMCP_*`` variable, else its default; ValueError if impossible."""
        settings = cls(
            list_ttl_ms=setting("list_ttl_ms", list_ttl_ms, DEFAULT_LIST_TTL_MS, int),
            cache_scope=cache_scope,
            page_size=setting("page_size", page_size, None, int),
            state_keys=setting("state_keys", state_keys, None, parse_keys),
            state_ttl=setting("state_ttl", state_ttl, float(DEFAULT_STATE_TTL), float),
            max_subscriptions=setting("max_subscriptions", max_subscriptions, DEFAULT_MAX_SUBSCRIPTIONS, int),
            legacy=setting("legacy", legacy, True, parse_bool),
            legacy_log_level=legacy_log_level_setting(legacy_log_level),
            threads=setting("threads", threads, DEFAULT_THREADS, int),
            mask_errors=setting("mask_errors", mask_errors, True, parse_bool),
            log_level=setting("log_level", log_level, None, parse_level),
            client_request_timeout=setting(
                "client_request_timeout", client_request_timeout, DEFAULT_CLIENT_REQUEST_TIMEOUT, float
            ),
            shutdown_grace=setting("shutdown_grace", shutdown_grace, DEFAULT_SHUTDOWN_GRACE, float),
        )
        if settings.shutdown_grace < 0:
            raise ValueError("shutdown_grace must be >= 0 (seconds)")
        if settings.list_ttl_ms < 0:
            raise ValueError("list_ttl_ms must be >= 0 (server/utilities/caching.mdx)")
        if cache_scope not in ("public", "private"):
            raise ValueError("cache_scope must be 'public' or 'private'")
        if settings.page_size is not None and settings.page_size < 1:
            raise ValueError("page_size must be positive")
        if settings.client_request_timeout <= 0:
            raise ValueError("client_request_timeout must be positive (seconds)")
        return settings


def task_options(
    backend: Backend,
    store: TaskStore | Callable[[], TaskStore] | None,
    ttl_ms: int | None,
    poll_interval_ms: int | None,
    max_tasks: int | None,
    max_tasks_per_owner: int | None,
    max_ttl_ms: int | None,
) -> dict[str, Any]:
    """The task runtime's options (`Server.enable_tasks`): None leaves the runtime's default (`_tasks`)."""
    return {
        "store": store if store is not None else default_task_store(backend),
        "ttl_ms": ttl_ms,
        "poll_interval_ms": poll_interval_ms,
        "max_tasks": setting("max_tasks", max_tasks, None, int),
        "max_tasks_per_owner": setting("max_tasks_per_owner", max_tasks_per_owner, None, int),
        "max_ttl_ms": setting("task_max_ttl_ms", max_ttl_ms, None, int),
    }
