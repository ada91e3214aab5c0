"""PKCE (RFC 7636) and state."""

from __future__ import annotations

import re

from wiremcp.auth._pkce import code_challenge, code_verifier, new_state, same_state


def test_s256_matches_rfc7636_appendix_b():
    assert code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"


def test_verifier_length_and_alphabet():
    # RFC 7636 section 4.1: 43..128 characters of [A-Z] [a-z] [0-9] "-" "." "_" "~"
    seen = set()
    for _ in range(50):
        v = code_verifier()
        assert 43 <= len(v) <= 128
        assert re.fullmatch(r"[A-Za-z0-9\-._~]+", v)
        seen.add(v)
    assert len(seen) == 50


def test_challenge_has_no_padding():
    assert "=" not in code_challenge(code_verifier())


def test_state_compare():
    s = new_state()
    assert same_state(s, s)
    assert not same_state(s, s + "x")
    assert not same_state(s, None)
    assert new_state() != s
