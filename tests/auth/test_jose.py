"""JOSE helpers: JWK thumbprints (RFC 7638), public JWKs, client assertions (RFC 7523), DPoP proofs (RFC 9449)."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from wiremcp.auth import dpop_proof, generate_key, jwk_thumbprint, load_private_key, public_jwk
from wiremcp.auth._jose import access_token_hash, client_assertion, default_algorithm


def test_thumbprint_rfc7638_example():
    jwk = {
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMs"
        "tn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbO"
        "pbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29",
    }
    assert jwk_thumbprint(jwk) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


@pytest.mark.parametrize("make", [generate_key, lambda: rsa.generate_private_key(65537, 2048), ed25519.Ed25519PrivateKey.generate])
def test_public_jwk_has_no_private_members_and_verifies(make):
    key = make()
    jwk = public_jwk(key)
    assert "d" not in jwk and not {"p", "q", "dp", "dq", "qi"} & set(jwk)
    token = client_assertion(key, "client-a", "https://as.example.com")
    claims = jwt.decode(token, jwt.PyJWK(jwk).key, algorithms=[default_algorithm(key)], audience="https://as.example.com")
    assert claims["iss"] == claims["sub"] == "client-a"
    assert claims["exp"] - claims["iat"] <= 300 and claims["jti"]


def test_load_private_key_from_pem():
    key = generate_key()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    loaded = load_private_key(pem.decode())
    assert public_jwk(loaded) == public_jwk(key)
    assert default_algorithm(loaded) == "ES256"


def test_dpop_proof_claims():
    key = generate_key()
    proof = dpop_proof(key, "post", "https://rs.example.com/mcp?x=1#f", nonce="n1", access_token="tok")
    header = jwt.get_unverified_header(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and header["jwk"] == public_jwk(key)
    claims = jwt.decode(proof, jwt.PyJWK(header["jwk"]).key, algorithms=["ES256"])
    assert claims["htm"] == "POST" and claims["htu"] == "https://rs.example.com/mcp"
    assert claims["nonce"] == "n1" and claims["ath"] == access_token_hash("tok")
    assert dpop_proof(key, "GET", "https://rs.example.com/mcp") != dpop_proof(key, "GET", "https://rs.example.com/mcp")


def test_ath_is_sha256_base64url():
    # RFC 9449 section 7.1 example: token "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
    assert access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU") == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
