"""DPoP-bound access tokens (RFC 9449): the proof a request carries, checked.

A token whose ``cnf`` carries ``jkt`` (the SHA-256 thumbprint of a public
key, RFC 7638) is bound to that key: it is accepted only with the
``DPoP`` authorization scheme and a ``DPoP`` header holding a valid proof
(section 7.1); sent as a plain bearer token it is refused (section 7.2). A
proof sent with a token that is not bound is refused as well. The checks of
section 4.3, in order:

1. the proof is one compact JWS with ``typ: dpop+jwt``;
2. ``alg`` is in the allow-list (asymmetric; never ``none``, never ``HS*``);
3. the header's ``jwk`` is a public key (no private members) and verifies
   the signature;
4. ``htm`` is the request's method and ``htu`` its URI (scheme and host
   compared case-insensitively, query and fragment ignored);
5. ``iat`` is within ``max_age`` seconds in the past (plus ``leeway`` either
   way);
6. ``ath`` is the base64url SHA-256 of the access token;
7. the ``jwk`` thumbprint equals the token's ``cnf.jkt``;
8. ``jti`` was not seen before within the window (`ReplayCache`: bounded;
   when full, the oldest entries, the nearest to expiry, go first).

Resource server nonces (section 9), when asked for (`DPoPNonces`, with
``ResourceServer(dpop_nonce=True)``): a proof must carry a ``nonce`` this
server gave out, else the request gets 401 ``use_dpop_nonce`` with a fresh
one in ``DPoP-Nonce``. Nonces are stateless: ``{window}.{HMAC(secret,
window)}`` for the current time window of ``lifetime`` seconds; the current
and the previous window's nonces are accepted. Servers behind a load
balancer share the ``secret``. The nonce is read before the token is
verified (a proof without one costs no signature check) and is covered by
the proof's signature, which the verifier checks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from ._errors import AuthError
from ._jws import parse, verify_signature
from ._token import DPoPProof

__all__ = ["ReplayCache", "DPoPNonces", "check_binding", "jwk_thumbprint", "DEFAULT_DPOP_ALGORITHMS"]

DEFAULT_DPOP_ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "PS256", "EdDSA")
#: Seconds a proof stays acceptable after its ``iat``.
DEFAULT_DPOP_MAX_AGE = 60.0
#: ``jti``s remembered at most.
DEFAULT_REPLAY_CAPACITY = 100_000

_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def jwk_thumbprint(jwk: Mapping[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, base64url without padding."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(not isinstance(jwk.get(m), str) for m in members):
        raise AuthError("invalid_dpop", "the DPoP proof's jwk is not a usable public key")
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode()).digest())


def _same_uri(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (
        pa.scheme.lower() == pb.scheme.lower()
        and pa.netloc.lower() == pb.netloc.lower()
        and (pa.path or "/") == (pb.path or "/")
    )


class DPoPNonces:
    """Stateless server nonces for DPoP proofs (see the module docs)."""

    def __init__(self, secret: bytes | None = None, *, lifetime: float = 300.0, clock: Callable[[], float] = time.time) -> None:
        if lifetime <= 0:
            raise ValueError("the nonce lifetime must be positive")
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self.lifetime = lifetime
        self._clock = clock

    def _for(self, window: int) -> str:
        mac = hmac.new(self._secret, str(window).encode(), hashlib.sha256).digest()[:18]
        return f"{window}.{_b64(mac)}"

    def current(self) -> str:
        """The nonce to hand out now."""
        return self._for(int(self._clock() // self.lifetime))

    def valid(self, nonce: object) -> bool:
        """Whether ``nonce`` is this server's, of the current or the previous window."""
        if not isinstance(nonce, str):
            return False
        head, dot, _ = nonce.partition(".")
        if not dot or not head.isdigit() or len(head) > 20:
            return False
        window = int(head)
        now = int(self._clock() // self.lifetime)
        return window in (now, now - 1) and hmac.compare_digest(nonce, self._for(window))


def proof_nonce(proof: str) -> object:
    """The ``nonce`` claim of a DPoP proof, read without verifying it (None when unreadable)."""
    try:
        _, claims, _, _ = parse(proof, what="DPoP proof", reason="invalid_dpop")
    except AuthError:
        return None
    return claims.get("nonce")


class ReplayCache:
    """``jti``s of accepted proofs until they expire; bounded (see the module docs)."""

    def __init__(self, capacity: int = DEFAULT_REPLAY_CAPACITY, clock: Callable[[], float] = time.time) -> None:
        self.capacity = capacity
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seen)

    def add(self, jti: str, expires_at: float) -> bool:
        """Remember ``jti``; False if it is already remembered (a replay)."""
        now = self._clock()
        seen = self._seen
        old = seen.get(jti)
        if old is not None and old > now:
            return False
        while seen:  # drop the expired from the front (inserted roughly in time order)
            first, until = next(iter(seen.items()))
            if until > now and len(seen) < self.capacity:
                break
            del seen[first]
        seen[jti] = expires_at
        return True


def check_binding(
    token: str,
    cnf: Mapping[str, Any] | None,
    dpop: DPoPProof | None,
    *,
    method: str,
    url: str,
    algorithms: tuple[str, ...],
    replay: ReplayCache,
    leeway: float,
    max_age: float = DEFAULT_DPOP_MAX_AGE,
    clock: Callable[[], float] = time.time,
) -> None:
    """Check the token's sender constraint against the request's proof; `AuthError` if it fails."""
    jkt = cnf.get("jkt") if cnf is not None else None
    if jkt is None:
        if dpop is not None:
            raise AuthError("invalid_dpop", "a DPoP proof came with a token that is not DPoP-bound")
        return
    if dpop is None:
        raise AuthError("invalid_dpop", "the token is DPoP-bound: send it with the DPoP scheme and a DPoP proof")
    header, claims, signing_input, signature = parse(dpop.jwt, what="DPoP proof", reason="invalid_dpop")
    if header.get("typ") != "dpop+jwt":
        raise AuthError("invalid_dpop", "the DPoP proof's typ is not dpop+jwt")
    alg = header.get("alg")
    if not isinstance(alg, str) or alg not in algorithms:
        raise AuthError("invalid_dpop", "the DPoP proof's alg is not allowed")
    jwk = header.get("jwk")
    if type(jwk) is not dict or _PRIVATE & jwk.keys():
        raise AuthError("invalid_dpop", "the DPoP proof's jwk is missing or not a public key")
    import jwt

    try:
        key = jwt.PyJWK(jwk, algorithm=alg).key
    except jwt.PyJWTError:
        raise AuthError("invalid_dpop", "the DPoP proof's jwk is not a key for its alg") from None
    if not verify_signature(alg, key, signing_input, signature):
        raise AuthError("invalid_dpop", "the DPoP proof's signature does not verify")
    if claims.get("htm") != method:
        raise AuthError("invalid_dpop", "the DPoP proof's htm is not the request's method")
    htu = claims.get("htu")
    if not isinstance(htu, str) or not _same_uri(htu, url):
        raise AuthError("invalid_dpop", "the DPoP proof's htu is not the request's URI")
    iat = claims.get("iat")
    now = clock()
    if not isinstance(iat, (int, float)) or isinstance(iat, bool) or iat > now + leeway or iat < now - max_age - leeway:
        raise AuthError("invalid_dpop", "the DPoP proof's iat is outside the accepted window")
    ath = claims.get("ath")
    expected = _b64(hashlib.sha256(token.encode()).digest())
    if not isinstance(ath, str) or not hmac.compare_digest(ath, expected):
        raise AuthError("invalid_dpop", "the DPoP proof's ath does not match the access token")
    if not hmac.compare_digest(jwk_thumbprint(jwk), str(jkt)):
        raise AuthError("invalid_dpop", "the DPoP proof's key is not the key the token is bound to")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not replay.add(jti, float(iat) + max_age + leeway):
        raise AuthError("invalid_dpop", "the DPoP proof was already used (jti replay)")
