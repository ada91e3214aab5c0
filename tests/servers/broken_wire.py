"""A deliberately broken stdio "server" for the tap tests: one wire rule broken per MODE.

    python broken_wire.py MODE

It reads requests line by line and answers each according to MODE:

* ``no-result-type``: a 2026-07-28 ``tools/call`` result without ``resultType``.
* ``unknown-id``: a correct result, then a second one to an id nobody sent.
* ``unparseable``: a line that is not JSON before the correct result.
* ``never-answers``: reads the request and never replies; exits at stdin EOF.
* ``mirror FILE``: writes what it reads to FILE and, per line read, answers
  with bytes chosen to test exact forwarding (unicode, escapes, a CRLF).
"""

import sys

import orjson


def result(request_id, with_type=True):
    body = {"content": [{"type": "text", "text": "ok"}]}
    if with_type:
        body["resultType"] = "complete"
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": body}) + b"\n"


def main() -> None:
    mode = sys.argv[1]
    out = sys.stdout.buffer
    record = open(sys.argv[2], "wb") if mode == "mirror" else None
    for line in sys.stdin.buffer:
        if record is not None:
            record.write(line)
            record.flush()
        if not line.strip():
            continue
        request = orjson.loads(line)
        if "id" not in request:
            continue
        rid = request["id"]
        if mode == "no-result-type":
            out.write(result(rid, with_type=False))
        elif mode == "unknown-id":
            out.write(result(rid))
            out.write(result("nobody-sent-this"))
        elif mode == "unparseable":
            out.write(b"Server starting... (a print() that went to stdout)\n")
            out.write(result(rid))
        elif mode == "never-answers":
            pass
        elif mode == "mirror":
            text = b'{"jsonrpc": "2.0",  "id": %s, "result": {"resultType": "complete", "content": [{"type": "text", "text": "caf\\u00e9 \xe2\x9c\x93"}]}}\r\n'
            out.write(text % orjson.dumps(rid))
        out.flush()


if __name__ == "__main__":
    main()
