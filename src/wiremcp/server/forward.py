"""Forwarding to another server: the contract behind ``server.forward`` and `wiremcp.proxy`.

``server.forward(upstream)`` serves another server's tools, resources,
prompts and completions as this server's own (docs/proxy.md). The upstream
is anything that implements `Upstream` (`wiremcp.proxy` builds one on a
`wiremcp.Client`); `Forwarder` holds the forwarded methods' handlers of one
server. An upstream call that needs input from the client calls an `Ask`
(``ask({key: {"method", "params"}}) -> {key: result}``) and reports its
progress and logs to `reporting_context`'s request; a modern client's retry
resumes a suspended upstream call by the id under `RESUME_KEY` in the
sealed ``requestState``.

Each name loads its module on first use, as in `wiremcp.server`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._forward import RESUME_KEY, Ask, Forwarder, Upstream, reporting_context
else:
    from ._lazy import lazy_names

    __getattr__, __dir__ = lazy_names(
        globals(), dict.fromkeys(("RESUME_KEY", "Ask", "Forwarder", "Upstream", "reporting_context"), "_forward")
    )

__all__ = ["Upstream", "Ask", "Forwarder", "RESUME_KEY", "reporting_context"]
