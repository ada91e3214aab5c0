"""JOSE helpers: keys, JWKs and signed JWTs (RFC 7515, 7517, 7518, 7519, 7638), on PyJWT.

Used by ``private_key_jwt`` client authentication (RFC 7523 section 2.2),
the client-credentials extension, workload identity assertions and DPoP
proofs (RFC 9449). Rules it keeps:

* only asymmetric keys: EC P-256/P-384/P-521 (ES256/384/512), RSA (RS256 by
  default, or PS256), Ed25519 (EdDSA); ``none`` and HMAC are never used;
* a public JWK holds only the public members (``kty``, ``crv``, ``x``,
  ``y`` / ``n``, ``e``), never ``d``;
* the RFC 7638 thumbprint hashes exactly the required members in
  lexicographic order with no whitespace;
* every JWT we sign carries ``iat``, ``exp`` (short: 5 minutes by
  default) and a fresh random ``jti``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from typing import Any, Union

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from ._pkce import b64url

__all__ = [
    "PrivateKey",
    "load_private_key",
    "generate_key",
    "default_algorithm",
    "public_jwk",
    "jwk_thumbprint",
    "sign_jwt",
    "client_assertion",
    "dpop_proof",
    "access_token_hash",
    "private_key_pem",
]

PrivateKey = Union[ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey, ed25519.Ed25519PrivateKey]

_EC_ALG = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_EC_CRV = {"secp256r1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"}


def load_private_key(pem: str | bytes, password: bytes | None = None) -> PrivateKey:
    """A private key from PEM (PKCS#8 or traditional); only the key types above are accepted."""
    data = pem.encode() if isinstance(pem, str) else pem
    key = serialization.load_pem_private_key(data, password=password)
    if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey, ed25519.Ed25519PrivateKey)):
        raise ValueError(f"unsupported key type {type(key).__name__}: use EC, RSA or Ed25519")
    return key


def private_key_pem(key: PrivateKey) -> str:
    """PKCS#8 PEM, unencrypted (for a token store that keeps a DPoP key with its tokens)."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode("ascii")


def generate_key() -> ec.EllipticCurvePrivateKey:
    """A fresh P-256 key (DPoP keys, tests)."""
    return ec.generate_private_key(ec.SECP256R1())


def default_algorithm(key: PrivateKey) -> str:
    if isinstance(key, ec.EllipticCurvePrivateKey):
        alg = _EC_ALG.get(key.curve.name)
        if alg is None:
            raise ValueError(f"unsupported EC curve {key.curve.name}")
        return alg
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    return "EdDSA"


def _int(value: int, size: int) -> str:
    return b64url(value.to_bytes(size, "big"))


def public_jwk(key: PrivateKey) -> dict[str, str]:
    """The public half of ``key`` as a JWK (no private members)."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        numbers = key.public_key().public_numbers()
        size = (key.curve.key_size + 7) // 8
        return {"kty": "EC", "crv": _EC_CRV[key.curve.name], "x": _int(numbers.x, size), "y": _int(numbers.y, size)}
    if isinstance(key, rsa.RSAPrivateKey):
        pub = key.public_key().public_numbers()
        return {"kty": "RSA", "n": _int(pub.n, (pub.n.bit_length() + 7) // 8), "e": _int(pub.e, (pub.e.bit_length() + 7) // 8)}
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}


_REQUIRED = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def jwk_thumbprint(jwk: dict[str, str]) -> str:
    """RFC 7638 SHA-256 thumbprint, base64url."""
    members = {name: jwk[name] for name in _REQUIRED[jwk["kty"]]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return b64url(hashlib.sha256(canonical).digest())


def sign_jwt(
    key: PrivateKey,
    claims: dict[str, Any],
    *,
    algorithm: str | None = None,
    headers: dict[str, Any] | None = None,
    lifetime: int = 300,
) -> str:
    """Sign ``claims`` (``iat``, ``exp`` and ``jti`` added unless given)."""
    now = int(time.time())
    body = {"iat": now, "exp": now + lifetime, "jti": str(uuid.uuid4()), **claims}
    return jwt.encode(body, key, algorithm=algorithm or default_algorithm(key), headers=headers)


def client_assertion(key: PrivateKey, client_id: str, audience: str, *, algorithm: str | None = None) -> str:
    """RFC 7523 section 2.2 client authentication JWT: ``iss`` and ``sub`` are the client id."""
    return sign_jwt(key, {"iss": client_id, "sub": client_id, "aud": audience}, algorithm=algorithm)


def access_token_hash(token: str) -> str:
    """DPoP ``ath``: base64url(SHA-256(ASCII(access token)))."""
    return b64url(hashlib.sha256(token.encode("ascii")).digest())


def dpop_proof(
    key: PrivateKey,
    method: str,
    url: str,
    *,
    nonce: str | None = None,
    access_token: str | None = None,
    algorithm: str | None = None,
) -> str:
    """A DPoP proof JWT (RFC 9449 section 4.2): ``typ`` dpop+jwt, the public ``jwk`` in the header,
    ``htm``, ``htu`` (the URL without query and fragment), ``iat``, a unique ``jti``, and ``ath``
    and ``nonce`` when given."""
    htu = url.split("#", 1)[0].split("?", 1)[0]
    claims: dict[str, Any] = {"htm": method.upper(), "htu": htu, "iat": int(time.time()), "jti": b64url(secrets.token_bytes(16))}
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token is not None:
        claims["ath"] = access_token_hash(access_token)
    header = {"typ": "dpop+jwt", "jwk": public_jwk(key)}
    return jwt.encode(claims, key, algorithm=algorithm or default_algorithm(key), headers=header)
