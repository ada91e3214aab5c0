"""tests/scale/worker.py's server with small session limits: ``python capped_worker.py PORT MAX_SESSIONS IDLE_TIMEOUT [REPLAY_BUFFER]``.

`wiremcp run` has no option for the session limits, so this serves the same
server with `wiremcp.run` and the `MCPApp` options ``max_sessions``,
``session_idle_timeout`` and ``replay_buffer`` (the backend from
``WIREMCP_REDIS_URL``, as with `wiremcp run`).
"""

import sys

import wiremcp

sys.path.insert(0, __file__.rsplit("/", 1)[0])

from worker import server  # noqa: E402

if __name__ == "__main__":
    port, max_sessions, idle = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    options = {"replay_buffer": int(sys.argv[4])} if len(sys.argv) > 4 else {}
    wiremcp.run(server, "http", port=port, max_sessions=max_sessions, session_idle_timeout=idle, **options)
