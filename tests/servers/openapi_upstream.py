"""A generic upstream for an OpenAPI document: every operation answered, every request recorded (Starlette).

Served by uvicorn for tests/server/test_openapi_large.py. ``OPENAPI_DOCUMENT``
is the document's path; ``OPENAPI_BASE_PATH`` (say ``/v2``) the prefix the
API lives under. A request whose method and path match an operation of the
document (its path template, each ``{param}`` one segment) is answered with
the operation's first 2xx response: its status, and when it has a JSON schema
a value made from it (`openapi_values.example`, from the document's own
schema, not wiremcp's rewrite of it; ``null`` wherever the schema allows one); another media type gets ``ok`` as text.

* ``POST /__control/next`` ``{"status": 503, "body": "..."}``: the next
  request gets that answer instead (as ``text/plain``): an error on demand;
* ``GET /__control/log``: every request so far, as ``{"method",
  "raw_path", "operation" (``GET /path/{template}``), "query" (pairs), "headers" (pairs, names in lower
  case), "body" (text or null), "answer": {"status", "content_type",
  "body"}}``; ``DELETE`` empties it.

A request that matches no operation is a 404 naming it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from openapi_values import example, resolve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
DOCUMENT: dict[str, Any] = json.loads(Path(os.environ["OPENAPI_DOCUMENT"]).read_text(encoding="utf-8"))
BASE = os.environ.get("OPENAPI_BASE_PATH", "").rstrip("/")
LOG: list[dict[str, Any]] = []
NEXT: list[dict[str, Any]] = []


def _template(path: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", path)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts) + "$")


#: (literal characters, template, method, operation): templates with more literal text tried first.
OPERATIONS = sorted(
    ((len(re.sub(r"\{[^}]+\}", "", path)), _template(path), path, method, op)
     for path, item in DOCUMENT.get("paths", {}).items() for method, op in item.items() if method in METHODS),
    key=lambda entry: -entry[0],
)  # fmt: skip


def _answer(op: dict[str, Any]) -> tuple[int, str, bytes]:
    responses = op.get("responses") or {}
    for status in sorted(str(s) for s in responses):
        if not status.startswith("2"):
            continue
        response = resolve(responses[status], DOCUMENT)
        code = int(status) if status.isdigit() else 200
        for media, body in (response.get("content") or {}).items():
            base = media.split(";")[0].strip().lower()
            if (base == "application/json" or base.endswith("+json")) and isinstance(body, dict) and "schema" in body:
                return code, "application/json", json.dumps(example(body["schema"], DOCUMENT, nulls=True)).encode()
        if response.get("content"):
            return code, "text/plain", b"ok"
        return code, "", b""
    return 200, "", b""


async def operation(request: Request) -> Response:
    raw_path = request.scope["raw_path"].decode("latin-1")
    body = await request.body()
    record: dict[str, Any] = {
        "method": request.method,
        "raw_path": raw_path,
        "operation": None,
        "query": parse_qsl(request.scope["query_string"].decode("latin-1"), keep_blank_values=True),
        "headers": [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in request.scope["headers"]],
        "body": body.decode("utf-8", "replace") if body else None,
    }
    LOG.append(record)
    path = raw_path[len(BASE):] if raw_path.startswith(BASE + "/") else None
    found = next(((template, op) for _, rx, template, method, op in OPERATIONS
                  if path is not None and method == request.method.lower() and rx.match(path)), None)  # fmt: skip
    if found is not None:
        record["operation"] = f"{request.method} {found[0]}"
    if NEXT:
        planned = NEXT.pop(0)
        status, content_type, content = planned["status"], "text/plain", planned["body"].encode()
    elif found is None:
        status, content_type, content = 404, "text/plain", f"no operation {request.method} {raw_path}".encode()
    else:
        status, content_type, content = _answer(found[1])
    record["answer"] = {"status": status, "content_type": content_type, "body": content.decode()}
    headers = {"Content-Type": content_type} if content_type else {}
    return Response(content, status_code=status, headers=headers)


async def control_next(request: Request) -> Response:
    NEXT.append(await request.json())
    return JSONResponse({"planned": len(NEXT)})


async def control_log(request: Request) -> Response:
    if request.method == "DELETE":
        LOG.clear()
        NEXT.clear()
    return JSONResponse(LOG)


app = Starlette(
    routes=[
        Route("/__control/next", control_next, methods=["POST"]),
        Route("/__control/log", control_log, methods=["GET", "DELETE"]),
        Route("/{rest:path}", operation, methods=[m.upper() for m in METHODS]),
    ]
)
