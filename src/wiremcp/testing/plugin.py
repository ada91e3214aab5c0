"""The pytest plugin: ``pytest_plugins = ["wiremcp.testing.plugin"]`` in a ``conftest.py``.

Fixtures:

* ``mcp_era``: ``"modern"`` then ``"legacy"``; a test that takes it runs once
  per era (pass it to `wiremcp.testing.connect`);
* ``mcp_wire``: a fresh `wiremcp.testing.Wire`, for tests that build their
  own `Client` (``on_wire=mcp_wire.record``);
* ``local_issuer``: a local authorization server on loopback for the test
  (`wiremcp.testing.issuer.local_issuer`; needs the ``auth`` and ``http``
  extras): ``local_issuer.url``, ``local_issuer.token("mcp admin",
  resource=...)``, ``local_issuer.env(resource)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import pytest

from . import ERAS, Wire

if TYPE_CHECKING:
    from .issuer import LocalIssuer

__all__ = ["mcp_era", "mcp_wire", "local_issuer"]


@pytest.fixture(params=ERAS)
def mcp_era(request: Any) -> str:
    """Each era a dual-era server serves, one test run each."""
    era: str = request.param
    return era


@pytest.fixture
def mcp_wire() -> Wire:
    return Wire()


@pytest.fixture
def local_issuer() -> Iterator[LocalIssuer]:
    """A local issuer (`wiremcp.testing.issuer`) running for the test."""
    from .issuer import local_issuer as run_issuer

    with run_issuer() as issuer:
        yield issuer
