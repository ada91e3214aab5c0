"""The one exception the OAuth client raises.

Rules it keeps:

* every failure of the authorization machinery is an `AuthError`, a
  `wiremcp.client.ClientError`, so code that already handles client errors
  handles it too;
* the message names the step that failed (``step``: "protected resource
  metadata", "token request", ...) and why, in words a person can act on;
* a message never contains a token, a code, a secret or a client assertion:
  only URLs, status codes, OAuth ``error`` codes and (bounded)
  ``error_description`` texts from the server.
"""

from __future__ import annotations

from ..client import ClientError

__all__ = ["AuthError"]


class AuthError(ClientError):
    """Authorization failed at ``step``; ``error`` is the OAuth error code when the server sent one."""

    def __init__(self, step: str, reason: str, *, error: str | None = None) -> None:
        self.step = step
        self.reason = reason
        self.error = error
        super().__init__(f"authorization failed at {step}: {reason}")
