"""MCP on top of JSON-RPC: revisions and eras, ``_meta`` fields, method names, error codes.

Submodules: `versions`, `meta`, `methods`, `errors`, `state` (sealed requestState),
`headers` (x-mcp-header annotations and header value encoding), `content` (the
kinds of content blocks), `extensions`
(extension negotiation: who declares what, -32021 when one is required), `inputs` (the
types of the answers a client gives to elicitation, sampling and roots requests;
imported on use, not here).
"""

from . import extensions, meta, methods
from .errors import (
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MODERN_ERROR_CODES,
    UNSUPPORTED_PROTOCOL_VERSION,
    HeaderMismatch,
    MissingClientCapability,
    ResourceNotFound,
    UnsupportedProtocolVersion,
)
from .meta import LOG_LEVELS, RequestMeta, parse_request_meta
from .versions import LATEST, LEGACY_VERSIONS, MODERN_VERSIONS, Era, era_of

__all__ = [
    "extensions",
    "meta",
    "methods",
    "LATEST",
    "MODERN_VERSIONS",
    "LEGACY_VERSIONS",
    "Era",
    "era_of",
    "LOG_LEVELS",
    "RequestMeta",
    "parse_request_meta",
    "HEADER_MISMATCH",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "MODERN_ERROR_CODES",
    "HeaderMismatch",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "ResourceNotFound",
]
