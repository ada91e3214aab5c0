"""Coverage-guided fuzz targets for the parts of wiremcp that read untrusted input.

Each target is a Hypothesis test (``test_*.py`` here) whose strategy mixes raw
bytes with structured, nearly valid messages, and whose body checks the
invariants the code promises (exact JSON-RPC errors, one reply per request,
nothing left running). They run two ways:

* in the test suite: a fixed number of examples, derandomized, a few seconds
  each (``pytest tests/fuzz``);
* as a long run: ``python -m tests.fuzz TARGET --seconds N`` drives the same
  test through ``hypothesis.fuzz_one_input`` under atheris (libFuzzer's
  coverage feedback over the instrumented ``wiremcp`` package), or, without
  atheris, random buffers for N seconds. ``WIREMCP_FUZZ_SECONDS=N pytest
  tests/fuzz`` instead gives each test N seconds of Hypothesis examples.

docs/testing-hardening.md describes the targets, their invariants and the
runs. This file imports nothing from wiremcp, so ``python -m tests.fuzz`` can
instrument the package before it is first imported.
"""
