"""What a `Client` is made with: the callbacks that answer the server, and the settings of each `ClientProtocol`.

Rules it keeps:

* configuring a callback declares the matching client capability
  (``elicitation``: ``{"form": {}}``; ``sampling``, ``roots``: ``{}``), and
  only a configured callback is an input kind the protocol may hand out;
  ``roots`` may be a plain list of Root objects, answered as it is;
* ``capabilities`` given by the caller are added last (they may add
  extensions, or replace a declared one);
* ``client_info`` defaults to ``name`` and ``version`` (wiremcp's own
  version unless given);
* the settings are computed once; `Driver._new_protocol` gives them to each
  protocol object, the first and the one after a restart.
"""

from __future__ import annotations

import sys
from typing import Any

from ._eras import EraChoice
from ._receiver import Callback

__all__ = ["client_settings"]


def client_settings(
    *,
    name: str,
    version: str | None,
    client_info: dict[str, Any] | None,
    elicitation: Callback | None,
    sampling: Callback | None,
    roots: Callback | list[dict[str, Any]] | None,
    capabilities: dict[str, Any] | None,
    era: EraChoice,
    protocol_version: str,
    cache: bool,
    max_input_rounds: int,
    tasks: bool,
) -> tuple[dict[str, Callback], dict[str, Any]]:
    """The callbacks by input kind, and the keywords of each new `ClientProtocol`."""
    if client_info is None:
        if version is None:
            version = getattr(sys.modules.get("wiremcp"), "__version__", "0")
        client_info = {"name": name, "version": version}
    inputs: dict[str, Callback] = {}
    caps: dict[str, Any] = {}
    if elicitation is not None:
        caps["elicitation"] = {"form": {}}
        inputs["elicitation"] = elicitation
    if sampling is not None:
        caps["sampling"] = {}
        inputs["sampling"] = sampling
    if roots is not None:
        caps["roots"] = {}
        if callable(roots):
            inputs["roots"] = roots
        else:
            fixed = {"roots": list(roots)}
            inputs["roots"] = lambda params: fixed
    if capabilities:
        caps.update(capabilities)
    settings: dict[str, Any] = {
        "client_info": client_info,
        "capabilities": caps,
        "answers": inputs,
        "era": era,
        "protocol_version": protocol_version,
        "cache": cache,
        "max_input_rounds": max_input_rounds,
        "tasks": tasks,
    }
    return inputs, settings
