"""JSON codecs for the MCP hot path: orjson vs msgspec vs the stdlib.

    python bench/json_codecs.py

Times decoding one MCP tools/call request and encoding its reply (100 B and
1 MB payloads), and shows how each codec treats the inputs the JSON-RPC core
must refuse. This is the measurement behind the choices in docs/decisions.md:
orjson for every message, and msgspec's typed decoding for the plain
tools/call only (``msgspec typed``: `wiremcp.server._fused_call`, the whole
request decoded and type-checked in one pass; its strictness rows show
``ValidationError`` where the shape is not a fused call).
"""

from __future__ import annotations

import json
import timeit
from typing import Any, Callable

import orjson

import msgspec

LINE = (
    b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo","arguments":'
    b'{"text":"hello world, this is a 100 byte payload padding padding padding pad"},"_meta":'
    b'{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
)
REPLY = {"jsonrpc": "2.0", "id": 17, "result": {"resultType": "complete", "content": [{"type": "text", "text": "x" * 100}]}}
BIG = orjson.dumps({"text": "x" * 1_000_000})
BIG_OBJ = orjson.loads(BIG)
#: For the typed decoder, which reads fused calls only: the request with a 1 MB text.
BIG_CALL = LINE.replace(b"hello world, this is a 100 byte payload padding padding padding pad", b"x" * 1_000_000)

STRICTNESS = {
    "lone surrogate escape": b'{"a":"\\ud800"}',
    "invalid UTF-8": b'{"a":"\xff"}',
    "byte-order mark": b"\xef\xbb\xbf{}",
    "trailing data": b"{} x",
    "two objects": b"{}{}",
    "NaN": b"NaN",
    "2000 levels deep": b"[" * 2000 + b"]" * 2000,
    "integer > 64 bits": b'{"a":123456789012345678901234567890}',
}


def best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> None:
    codecs: list[tuple[str, Callable[[bytes], Any], Callable[[Any], bytes]]] = [
        ("orjson", orjson.loads, orjson.dumps),
        ("json", json.loads, lambda o: json.dumps(o, separators=(",", ":")).encode()),
    ]
    from wiremcp.server._fused_call import decode_fused_call

    codecs.insert(1, ("msgspec", msgspec.json.Decoder().decode, msgspec.json.Encoder().encode))
    codecs.insert(2, ("msgspec typed", decode_fused_call, msgspec.json.Encoder().encode))
    print(f"{'codec':14} {'decode req':>12} {'encode reply':>13} {'decode 1MB':>11} {'encode 1MB':>11}")
    for name, loads, dumps in codecs:
        print(
            f"{name:14} {best(lambda: loads(LINE), 100_000) * 1e9:9.0f} ns {best(lambda: dumps(REPLY), 100_000) * 1e9:10.0f} ns"
            f" {best(lambda: loads(BIG_CALL if name == 'msgspec typed' else BIG), 100) * 1e6:8.0f} µs {best(lambda: dumps(BIG_OBJ), 100) * 1e6:8.0f} µs"
        )
    print()
    for case, data in STRICTNESS.items():
        cells = []
        for name, loads, _ in codecs:
            try:
                cells.append(f"{name}: accepted {str(loads(data))[:24]!r}")
            except Exception as exc:  # noqa: BLE001 - we report whatever it raises
                cells.append(f"{name}: {type(exc).__name__}: {str(exc)[:50]}")
        print(f"{case}:\n    " + "\n    ".join(cells))


if __name__ == "__main__":
    main()
