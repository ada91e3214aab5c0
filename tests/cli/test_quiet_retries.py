"""`quiet_retries` leaves out the client's retry notice by what the record is, not by its wording:
the ``wiremcp.client`` record whose ``wiremcp_event`` is ``RETRY_EVENT`` (client/_driver.py).
The end-to-end case (a refused connection says one line, no retry notice) is in test_newcomer_messages."""

from __future__ import annotations

import io
import logging

from wiremcp.cli._output import quiet_retries
from wiremcp.client import RETRY_EVENT


def test_the_retry_notice_is_matched_by_its_event_attribute_not_its_text() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root = logging.getLogger()
    # quiet_retries filters every handler of the root logger: give it only ours, so that pytest's
    # own capture handlers (kept from test to test) are left as they were.
    kept = root.handlers[:]
    root.handlers = [handler]
    client, other = logging.getLogger("wiremcp.client"), logging.getLogger("wiremcp.elsewhere")
    try:
        quiet_retries()
        quiet_retries()  # twice: one filter
        assert handler.filters.count(handler.filters[0]) == 1 and len(handler.filters) == 1
        client.warning("reworded: %s not sent, trying again", "tools/call", extra={"wiremcp_event": RETRY_EVENT})
        client.warning("%s was not sent (%s); retrying once in %g s", "ping", "refused", 0.5)  # no attribute: kept
        client.warning("other event", extra={"wiremcp_event": "something_else"})
        other.warning("same event, other logger", extra={"wiremcp_event": RETRY_EVENT})
    finally:
        root.handlers = kept
    assert out.getvalue().splitlines() == [
        "wiremcp.client ping was not sent (refused); retrying once in 0.5 s",
        "wiremcp.client other event",
        "wiremcp.elsewhere same event, other logger",
    ]
