"""WWW-Authenticate parsing (RFC 9110 11.6.1, RFC 6750 3, RFC 9728 5.1)."""

from __future__ import annotations

from wiremcp.auth import bearer_challenge, parse_www_authenticate


def test_rfc6750_example():
    [c] = parse_www_authenticate(
        'Bearer realm="example", error="invalid_token", error_description="The access token expired"'
    )
    assert c.scheme == "bearer"
    assert c.params == {"realm": "example", "error": "invalid_token", "error_description": "The access token expired"}


def test_mcp_insufficient_scope_challenge():
    c = bearer_challenge(
        'Bearer error="insufficient_scope", scope="files:read files:write", '
        'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", '
        'error_description="File write permission required"'
    )
    assert c is not None
    assert c.error == "insufficient_scope"
    assert c.scope == ["files:read", "files:write"]
    assert c.resource_metadata == "https://mcp.example.com/.well-known/oauth-protected-resource"


def test_scheme_and_names_are_case_insensitive_values_are_not():
    [c] = parse_www_authenticate('BEARER Scope="A b", RESOURCE_METADATA="https://X/y"')
    assert c.scheme == "bearer"
    assert c.scope == ["A", "b"]
    assert c.resource_metadata == "https://X/y"


def test_token_values_and_spaces_around_equals():
    [c] = parse_www_authenticate("Bearer error = invalid_token , scope=read")
    assert c.error == "invalid_token"
    assert c.scope == ["read"]


def test_quoted_string_escapes_and_commas():
    [c] = parse_www_authenticate(r'Bearer error_description="a \"quoted\", comma", error="x"')
    assert c.params["error_description"] == 'a "quoted", comma'
    assert c.error == "x"


def test_several_challenges_and_token68():
    cs = parse_www_authenticate('Basic dXNlcjpwYXNz==, DPoP algs="ES256", error="use_dpop_nonce", Bearer scope="a"')
    assert [c.scheme for c in cs] == ["basic", "dpop", "bearer"]
    assert cs[0].token68 == "dXNlcjpwYXNz=="
    assert cs[1].params == {"algs": "ES256", "error": "use_dpop_nonce"}
    assert cs[2].scope == ["a"]


def test_bearer_challenge_picks_the_first_dpop_or_bearer():
    assert bearer_challenge('Basic realm="x", Bearer scope="s"').scope == ["s"]  # type: ignore[union-attr]
    dpop = bearer_challenge('DPoP resource_metadata="https://h/p"')
    assert dpop is not None and dpop.scheme == "dpop" and dpop.resource_metadata == "https://h/p"
    assert bearer_challenge('Basic realm="x"') is None
    assert bearer_challenge(None) is None
    assert bearer_challenge("") is None


def test_a_bare_scheme_and_first_value_wins():
    [c] = parse_www_authenticate('Bearer scope="a", scope="b"')
    assert c.scope == ["a"]
    [bare] = parse_www_authenticate("Bearer")
    assert bare.scheme == "bearer" and bare.params == {} and bare.scope is None


def test_malformed_input_never_raises():
    for value in ['Bearer scope="unterminated', "=,=,,", 'Bearer ="x"', "Bearer scope=", "\x00\x01", ", , Bearer"]:
        parse_www_authenticate(value)
    [c] = parse_www_authenticate('Bearer scope="unterminated')
    assert c.scope == ["unterminated"]
