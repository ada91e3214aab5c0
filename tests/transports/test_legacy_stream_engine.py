"""The legacy (2025-11-25) stream engine driven with plain messages, no event loop, no HTTP.

transports/http/_stream_engine.py: numbering of events, the replay buffer,
resumption from ``Last-Event-ID``, and the routing of the server's own
requests to the stream that carries them. The same rules over real HTTP:
tests/transports/test_http_legacy.py; across Redis workers: tests/scale/.
"""

from __future__ import annotations

from wiremcp.transports.http._session_rules import ENTRY_COST
from wiremcp.transports.http._stream_engine import SessionStreams, Stream, StreamState

CONNECTED = object()  # what carries a stream, for the engine: anything but None


def streams(*, primes: bool = True, replay_buffer: int = 1 << 20) -> SessionStreams:
    s = SessionStreams(replay_buffer)
    s.primes = primes
    return s


def request_stream(s: SessionStreams, request_id: int = 1) -> Stream:
    return Stream(s, s.next_sid(), request_id, "tools/call")


def test_events_are_numbered_per_stream_with_the_priming_event_first():
    s = streams()
    one, two = request_stream(s, 1), request_stream(s, 2)
    assert (one.sid, two.sid) == (1, 2)
    assert one.prime() == b"id: 1-1\ndata: \n\n"
    one.add(b'{"n":1}', 1 << 20)
    two.add(b'{"n":2}', 1 << 20)
    assert one.take() == b'id: 1-2\ndata: {"n":1}\n\n'
    assert two.take() == b'id: 2-1\ndata: {"n":2}\n\n'  # numbers are per stream
    one.finish(b'{"result":{}}')
    assert one.ready and one.take() == b'id: 1-3\ndata: {"result":{}}\n\n'
    assert one.state is StreamState.CLOSED and not one.ready


def test_a_session_that_does_not_prime_gives_no_priming_event_and_takes_no_number():
    s = streams(primes=False)
    one = request_stream(s)
    assert one.prime() == b""
    one.add(b"{}", 1 << 20)
    assert one.take() == b"id: 1-1\ndata: {}\n\n"


def test_a_request_answered_before_it_sent_anything_is_its_response_alone():
    s = streams()
    one = request_stream(s)
    one.finish(b'{"result":1}')
    assert one.answered_alone
    other = request_stream(s, 2)
    other.add(b"{}", 1 << 20)
    other.finish(b'{"result":2}')
    assert not other.answered_alone  # a notification came first: an SSE stream


def test_cancelled_drops_what_is_unsent_and_writes_nothing_more():
    s = streams()
    one = request_stream(s)
    one.add(b"{}", 1 << 20)
    one.drop()
    assert one.state is StreamState.CLOSED and not one.ready and one.take() == b""
    assert not one.finish(b"late")  # finished already


def test_add_reports_the_limit_passed_counting_the_entry_cost():
    s = streams()
    one = request_stream(s)
    assert not one.add(b"x" * 10, 10 + ENTRY_COST)
    assert one.add(b"y", 10 + ENTRY_COST)
    assert one.pending_bytes == 11 + 2 * ENTRY_COST


def test_trim_drops_the_oldest_and_keeps_the_newest():
    s = streams()
    for n in range(5):
        s.standalone.add(b"%d" % n, 1 << 20)
    assert s.standalone.trim(2 * (1 + ENTRY_COST)) == 3
    assert s.standalone.pending == [b"3", b"4"]
    s.standalone.add(b"x" * 1000, 1 << 20)
    assert s.standalone.trim(1) == 2 and s.standalone.pending == [b"x" * 1000]  # the newest always stays


def test_resume_sends_again_the_events_after_the_id_then_none_past_the_buffer():
    s = streams(replay_buffer=3 * (4 + ENTRY_COST))
    one = request_stream(s)
    one.prime()
    for n in range(3):
        one.add(b"ev%d" % n, 1 << 20)  # 3 bytes each
    one.take()
    found = s.resume_point(b"1-2")
    assert found is not None and found[0] is one
    assert found[1] == b"id: 1-3\ndata: ev1\n\nid: 1-4\ndata: ev2\n\n"
    for n in range(3, 7):
        one.add(b"ev%d" % n, 1 << 20)
    one.take()
    assert s.replay_bytes <= s.replay_buffer
    again = s.resume_point(b"1-1")
    assert again is not None and again[1].startswith(b"id: 1-6\n")  # the oldest are gone


def test_ids_we_could_not_have_given_out_name_no_stream():
    s = streams()
    one = request_stream(s)
    one.prime()
    for bad in (b"", b"1", b"x-1", b"1-x", b"1--1", b"9-1", b"1" * 21 + b"-1", b"1-" + b"1" * 21):
        assert s.resume_point(bad) is None, bad
    assert s.resume_point(b" 1-1 ") is not None
    standalone = s.resume_point(b"0-5")  # the standalone stream is always there
    assert standalone is not None and standalone[0] is s.standalone


def test_a_finished_stream_is_forgotten_once_nothing_of_it_is_kept():
    s = streams(replay_buffer=2 * (2 + ENTRY_COST))
    one = request_stream(s)
    one.add(b"aa", 1 << 20)
    one.finish(b"bb")
    one.take()
    assert s.resumable == {1: one}
    two = request_stream(s, 2)
    two.add(b"cc", 1 << 20)
    two.add(b"dd", 1 << 20)
    two.take()  # pushes both of one's events out of the buffer
    assert 1 not in s.resumable and s.resume_point(b"1-1") is None
    assert two.sid in s.resumable


def test_a_carried_stream_is_not_forgotten():
    s = streams(replay_buffer=0)
    one = request_stream(s)
    one.carrier = CONNECTED
    one.finish(b"{}")
    one.take()
    one.forget_if_done()
    assert 1 in s.resumable
    one.carrier = None
    one.forget_if_done()
    assert 1 not in s.resumable


def test_the_servers_requests_go_on_the_asking_requests_stream():
    s = streams()
    one = request_stream(s)
    one.carrier = CONNECTED
    assert s.route(None) is s.standalone  # outside any request
    assert s.route(one) is one
    one.carrier = None
    assert s.route(one) is one  # no connection anywhere: it waits on its own stream
    s.standalone.carrier = CONNECTED
    assert s.route(one) is s.standalone  # the standalone stream reaches the client now
    one.carrier = CONNECTED
    assert s.route(one) is one
    other_session = streams()
    assert s.route(request_stream(other_session)) is s.standalone


def test_what_is_routed_to_a_stream_that_finished_goes_to_the_standalone_stream():
    s = streams()
    one = request_stream(s)
    chosen = s.route(one)
    assert s.deliver(chosen) is one
    one.finish(b"{}")
    assert s.route(one) is s.standalone
    assert s.deliver(chosen) is s.standalone  # e.g. the request's notifications/cancelled


def test_clear_forgets_everything():
    s = streams()
    one = request_stream(s)
    one.add(b"{}", 1 << 20)
    one.take()
    s.clear()
    assert s.resumable == {} and s.replay_bytes == 0 and s.resume_point(b"1-0") is None
