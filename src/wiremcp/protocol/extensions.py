"""Extension negotiation (extensions/overview.mdx, "Negotiation").

An extension is named ``{vendor-prefix}/{name}`` (the official ones use
``io.modelcontextprotocol/``). Each side declares the extensions it supports
under ``capabilities.extensions``, mapping the identifier to its settings
object (``{}``: no settings):

* the server, in its ``server/discover`` result (and, for a 2025-11-25
  session, in its ``initialize`` result);
* the client, **per request**, in
  ``_meta["io.modelcontextprotocol/clientCapabilities"].extensions``
  (a 2025-11-25 client: once, in ``initialize``).

Rules kept here:

* an extension applies to one request only when the server declares
  it *and* that request's client capabilities declare it; a declaration on
  an earlier request counts for nothing (tasks.md: "regardless of prior
  declarations");
* the client's ``extensions`` must be an object and each settings value an
  object; anything else counts as "not declared" rather than failing the
  request, since the core protocol is always a valid fallback
  ("Graceful Degradation");
* a request that cannot be served without an extension the client did not
  declare gets -32021 with ``data.requiredCapabilities.extensions`` naming
  it (`require_extension`).
"""

from __future__ import annotations

from typing import Any, Mapping

from .errors import MissingClientCapability

__all__ = [
    "EXTENSIONS",
    "TASKS",
    "client_extensions",
    "client_declares",
    "require_extension",
    "missing_extension",
    "check_identifier",
]

#: The key under ``capabilities`` that holds the extensions (both sides).
EXTENSIONS = "extensions"
#: The tasks extension (extensions/tasks, SEP-2663).
TASKS = "io.modelcontextprotocol/tasks"

_EMPTY: Mapping[str, Any] = {}


def client_extensions(client_capabilities: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The extensions a request's client capabilities declare, by identifier (empty if none or malformed)."""
    if client_capabilities is None:
        return _EMPTY
    declared = client_capabilities.get(EXTENSIONS)
    if type(declared) is not dict:
        return _EMPTY
    return declared


def client_declares(client_capabilities: Mapping[str, Any] | None, identifier: str) -> bool:
    """Whether the client capabilities declare ``identifier`` (its settings are an object)."""
    return type(client_extensions(client_capabilities).get(identifier)) is dict


def missing_extension(identifier: str, why: str | None = None) -> MissingClientCapability:
    """The -32021 error for a request that needs the extension ``identifier``."""
    message = f"Missing required client capability: the extension {identifier!r}"
    if why:
        message += f" ({why})"
    return MissingClientCapability({EXTENSIONS: {identifier: {}}}, message)


def require_extension(client_capabilities: Mapping[str, Any] | None, identifier: str, why: str | None = None) -> None:
    """Raise -32021 unless the client capabilities declare ``identifier``."""
    if not client_declares(client_capabilities, identifier):
        raise missing_extension(identifier, why)


def check_identifier(identifier: Any) -> str:
    """An extension identifier: ``vendor-prefix/name``, both parts non-empty (ValueError otherwise)."""
    if type(identifier) is not str:
        raise TypeError(f"an extension identifier is a string like 'com.example/my-extension', not {identifier!r}")
    prefix, slash, name = identifier.partition("/")
    if not slash or not prefix or not name or "/" in name or any(c.isspace() for c in identifier):
        raise ValueError(
            f"an extension identifier is 'vendor-prefix/extension-name' (e.g. 'com.example/my-extension'), not {identifier!r}"
        )
    return identifier
