"""How long each fuzz target runs: a fixed, reproducible budget in CI, more on request.

``WIREMCP_FUZZ_SECONDS`` unset (CI, a plain ``pytest`` run): every target runs
`CI_EXAMPLES` derandomized examples, the same ones every time. Set to N: each
target runs random examples until N seconds have passed (see `fuzz_settings`).
"""

from __future__ import annotations

import os
import time
from typing import Callable

from hypothesis import HealthCheck, settings

__all__ = ["CI_EXAMPLES", "fuzz_settings", "long_run_seconds", "run_for"]

#: Examples per target in CI: a few seconds each on one shared core.
CI_EXAMPLES = 300

_CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def long_run_seconds() -> float | None:
    raw = os.environ.get("WIREMCP_FUZZ_SECONDS")
    return float(raw) if raw else None


def fuzz_settings(examples: int = CI_EXAMPLES) -> settings:
    """Derandomized and bounded; under ``WIREMCP_FUZZ_SECONDS``, random batches (see `run_for`)."""
    if long_run_seconds() is not None:
        return settings(
            max_examples=LONG_RUN_BATCH, deadline=None, suppress_health_check=_CHECKS, database=None
        )
    return settings(
        max_examples=examples, deadline=None, suppress_health_check=_CHECKS, database=None, derandomize=True
    )


#: Examples per batch in a long run; each batch starts from a new random seed.
LONG_RUN_BATCH = 1000


def run_for(test: Callable[[], None]) -> None:
    """Call a Hypothesis test once (CI), or batch after batch until the long run's time is up."""
    seconds = long_run_seconds()
    if seconds is None:
        test()
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        test()
