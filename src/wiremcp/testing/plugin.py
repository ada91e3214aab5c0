"""The pytest plugin: ``pytest_plugins = ["wiremcp.testing.plugin"]`` in a ``conftest.py``.

Fixtures:

* ``mcp_era``: ``"modern"`` then ``"legacy"``; a test that takes it runs once
  per era (pass it to `wiremcp.testing.connect`);
* ``mcp_wire``: a fresh `wiremcp.testing.Wire`, for tests that build their
  own `Client` (``on_wire=mcp_wire.record``).
"""

from __future__ import annotations

from typing import Any

import pytest

from . import ERAS, Wire

__all__ = ["mcp_era", "mcp_wire"]


@pytest.fixture(params=ERAS)
def mcp_era(request: Any) -> str:
    """Each era a dual-era server serves, one test run each."""
    era: str = request.param
    return era


@pytest.fixture
def mcp_wire() -> Wire:
    return Wire()
