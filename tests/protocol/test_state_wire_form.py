"""The sealed requestState's wire form is fixed, and its length bound is exact.

basic/patterns/mrtr.mdx: instances that share a key serve each other's
retries, so a state sealed by one version of wiremcp must open in another:
``base64url(payload) "." base64url(tag)``, the payload being compact JSON
``{"v", "d", "x", "s"[, "p"]}`` with 128-bit digests of the request and the
principal (wiremcp.protocol.state's docstring). A state longer than any the
sealer can issue is refused before it is decoded, and no state it issues is.
"""

from __future__ import annotations

import base64

import pytest

from wiremcp.jsonrpc import InvalidParams
from wiremcp.protocol.state import StateSealer, request_digest

KEY = "k" * 32
NOW = 1_000_000.0
PRINCIPAL = "https://as.example|alice"
#: request_digest("tools/call", ["greet", {"name": "Ada"}]) as every version computes it.
DIGEST = "PzFlYFzPTrH84GXYlm-UZA"
#: States sealed under KEY at NOW (ttl 600) for {"answer": 1}: with and without the principal.
SEALED_FOR_PRINCIPAL = (
    "eyJ2IjoxLCJkIjoiUHpGbFlGelBUckg4NEdYWWxtLVVaQSIsIngiOjEwMDA2MDAsInMiOnsiYW5zd2VyIjoxfSwicCI6ImpzZkMybUdObXdhUjcyS0RKcUoxRVEifQ"
    ".sho8f0QpfGPlwj4RnArkG91Cfv4p0sVQJcIKY6PAM_A"
)
SEALED_ANONYMOUS = (
    "eyJ2IjoxLCJkIjoiUHpGbFlGelBUckg4NEdYWWxtLVVaQSIsIngiOjEwMDA2MDAsInMiOnsiYW5zd2VyIjoxfX0"
    ".WLK8d78Vbs-4GzKKD0LctDyQ-fatNe-sfLJU3fikP4U"
)


def sealer(**options: object) -> StateSealer:
    return StateSealer([KEY], clock=lambda: NOW, **options)  # type: ignore[arg-type]


def test_the_request_digest_is_the_same_in_every_version() -> None:
    assert request_digest("tools/call", ["greet", {"name": "Ada"}]) == DIGEST
    # Keys are sorted: the same arguments in another order are the same request.
    assert request_digest("tools/call", ["greet", {"b": 1, "a": 2}]) == request_digest("tools/call", ["greet", {"a": 2, "b": 1}])


def test_a_state_sealed_by_another_version_opens() -> None:
    assert sealer().open(SEALED_FOR_PRINCIPAL, DIGEST, PRINCIPAL) == {"answer": 1}
    assert sealer().open(SEALED_ANONYMOUS, DIGEST) == {"answer": 1}


def test_the_wire_form_is_byte_for_byte_stable() -> None:
    assert sealer().seal(DIGEST, {"answer": 1}, principal=PRINCIPAL) == SEALED_FOR_PRINCIPAL
    assert sealer().seal(DIGEST, {"answer": 1}) == SEALED_ANONYMOUS


def unpadded_b64_length(size: int) -> int:
    return len(base64.urlsafe_b64encode(bytes(size)).rstrip(b"="))


@pytest.mark.parametrize("max_size", [0, 1, 2, 3, 4, 100, 256 * 1024])
def test_the_length_bound_is_the_longest_state_the_sealer_can_issue(max_size: int) -> None:
    from wiremcp.protocol.state import _ENVELOPE

    # payload: the sealed data plus the envelope's fields; then ".", then the 32-byte tag.
    longest = unpadded_b64_length(max_size + _ENVELOPE) + 1 + unpadded_b64_length(32)
    assert sealer(max_size=max_size).max_state_length == longest


def test_a_state_one_character_over_the_bound_is_refused_unread_and_one_at_it_is_read() -> None:
    s = sealer(max_size=10)
    at_bound = "A" * (s.max_state_length - 44) + "." + "A" * 43
    assert len(at_bound) == s.max_state_length
    with pytest.raises(InvalidParams, match="failed verification"):
        s.open(at_bound, DIGEST)
    with pytest.raises(InvalidParams, match=f"requestState is {s.max_state_length + 1} characters, longer than any this server issues"):
        s.open("A" + at_bound, DIGEST)


def test_a_state_with_the_largest_data_allowed_opens() -> None:
    s = sealer(max_size=1000)
    data = "x" * 998  # 1000 bytes of JSON with its quotes
    state = s.seal(DIGEST, data, principal=PRINCIPAL)
    assert len(state) <= s.max_state_length
    assert s.open(state, DIGEST, PRINCIPAL) == data


def test_every_state_the_sealer_issues_opens() -> None:
    # Payloads and tags of every length modulo 3 and every last character: no spelling is lost.
    s = sealer()
    last = set()
    for i in range(300):
        data = {"answer": "y" * (i % 7), "n": i}
        state = s.seal(DIGEST, data, principal=PRINCIPAL if i % 2 else None)
        last.add(state[-1])
        assert s.open(state, DIGEST, PRINCIPAL if i % 2 else None) == data
    assert len(last) > 10
