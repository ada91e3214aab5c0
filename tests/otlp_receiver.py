"""An OTLP/HTTP trace receiver on loopback for the tests (standard library plus ``opentelemetry-proto``).

It decodes each ``ExportTraceServiceRequest`` posted to ``/v1/traces`` and
keeps the spans, as a collector would receive them; used by
tests/observability/test_otlp.py and tests/scale (spans of several workers).
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

#: opentelemetry.proto.trace.v1.Span.SpanKind.SPAN_KIND_SERVER
SERVER_KIND = 2


class Receiver:
    """An OTLP/HTTP receiver on loopback: keeps every span posted to /v1/traces."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        spans = self.spans

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    for batch in ExportTraceServiceRequest.FromString(body).resource_spans:
                        spans.extend(span for scope in batch.scope_spans for span in scope.spans)
                self.send_response(200)  # an empty Export*ServiceResponse is zero bytes
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
