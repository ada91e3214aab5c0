"""Run the ``wiremcp`` command under cProfile, for a load driver to hit; print the hot spots at exit.

    python bench/profile_server.py OUT.prof -- run examples/echo.py --http --port {port}

The command after ``--`` is ``wiremcp``'s argv. The server stops as it
normally does (stdin EOF on stdio; SIGTERM on HTTP, which uvicorn turns
into a graceful shutdown), then the profile is written to OUT.prof and
the top functions by own time (and by cumulative time) go to stderr.
Typical use, with the neutral driver (``{port}`` is filled in by it):

    python bench/driver.py --transport http --inflight 16 --payload 100 --duration 3 -- \\
        .venv/bin/python bench/profile_server.py /tmp/http.prof -- \\
        run examples/echo.py --http --host 127.0.0.1 --port {port}
    python bench/driver.py --transport stdio --inflight 1 --payload 10000 --duration 3 -- \\
        .venv/bin/python bench/profile_server.py /tmp/stdio.prof -- run examples/echo.py
    python -c "import pstats; pstats.Stats('/tmp/http.prof').sort_stats('tottime').print_stats(30)"

cProfile roughly doubles the cost of each Python call, so read the shares,
not the absolute times.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import signal
import sys


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out, args = argv[0], argv[2:]
    from wiremcp.cli import main as wiremcp_main

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(0)

    # uvicorn re-raises the SIGTERM it handled once it has shut down; with the default
    # action the process would die there, before the profile is written.
    signal.signal(signal.SIGTERM, stop)

    prof = cProfile.Profile()
    code = 0
    try:
        code = prof.runcall(wiremcp_main, args) or 0
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        prof.dump_stats(out)
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(25)
        print(buf.getvalue(), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
