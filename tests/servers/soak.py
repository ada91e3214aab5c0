"""examples/everything.py plus four tools the soak test (bench/soak.py) needs.

``soak_echo`` returns its text (large payloads), ``soak_sleep`` waits (requests
to cancel), ``soak_changes`` announces many list changes at once, ``soak_debug``
reports what the process holds: asyncio tasks,
objects tracked by the garbage collector, open descriptors, and the memory
blocks Python's allocator has handed out (``sys.getallocatedblocks``). To find what grows,
``soak_debug(detail=True)`` also lists the object types whose counts grew
most since the first detailed call and, when the process runs with
``WIREMCP_SOAK_TRACEMALLOC=N`` (tracemalloc started at import, N frames), the source
lines whose allocations grew most since then (a diff of two snapshots).
Each detailed call also runs a full collection and reports the garbage it
found in reference cycles (types, and the bytes and strings it held); with
``WIREMCP_SOAK_GC=off`` the automatic collector is off, so that this count is
all the cyclic garbage made since the previous detailed call.
``soak_debug`` also counts the *held* tasks: those it has seen for at least
`HELD_AFTER` seconds (its first sight of each task is kept in a weak
mapping, so a task is counted up to one sampling interval late). No request
of the soak lives that long (a reply later than 60 s is counted as lost), so
the held tasks are what the process keeps (its own background tasks, live
sessions', leaked ones), without the requests in flight, whose number
follows the load; ``held_by`` names their coroutines.
``soak_debug(trim=True)`` reports RSS before and after glibc's
``malloc_trim``: what the allocator kept but the process no longer uses.
``soak_debug(memory=True)`` says where the RSS lies: glibc's heaps and what is
in use there (``mallinfo2``), Python's allocator's arenas
(``sys._debugmallocstats``), and the live legacy HTTP sessions with the bytes
they keep (replay buffers, messages unsent). Served with
``wiremcp run tests/servers/soak.py`` (stdio), or run directly for HTTP with
a chosen legacy-session idle timeout (the CLI has no flag for it):
``python tests/servers/soak.py --port 8123 --session-idle-timeout 20``.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import gc
import importlib.util
import os
import sys
import time
import tracemalloc
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import wiremcp

if os.environ.get("WIREMCP_SOAK_GC") == "off":  # garbage in cycles stays until soak_debug(detail=True) collects it
    gc.disable()
if os.environ.get("WIREMCP_SOAK_TRACEMALLOC"):
    tracemalloc.start(int(os.environ["WIREMCP_SOAK_TRACEMALLOC"]))

_EVERYTHING = Path(__file__).resolve().parent.parent.parent / "examples" / "everything.py"
_spec = importlib.util.spec_from_file_location("soak_everything", _EVERYTHING)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _module
_spec.loader.exec_module(_module)

server: wiremcp.Server = _module.server


@server.tool()
def soak_echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def soak_sleep(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@server.tool(inline=True)
def soak_changes(count: int, marker: bool = False) -> int:
    """Change the tool list and the prompt list ``count`` times each (a list change to every session),
    then, with ``marker``, the resource list once: the last list change a stream gets."""
    for _ in range(count):
        server.notify_tools_changed()
        server.notify_prompts_changed()
    if marker:
        server.notify_resources_changed()
    return count


_baseline: dict[str, Any] = {}

#: Seconds after which a task soak_debug has seen is counted as held: twice the soak's reply timeout.
HELD_AFTER = 120.0
_first_seen: weakref.WeakKeyDictionary[asyncio.Task[Any], float] = weakref.WeakKeyDictionary()


def _held_tasks() -> Counter[str]:
    """The tasks first seen at least `HELD_AFTER` seconds ago, by coroutine name."""
    now = time.monotonic()
    held: Counter[str] = Counter()
    for task in asyncio.all_tasks():
        if now - _first_seen.setdefault(task, now) >= HELD_AFTER:
            held[getattr(task.get_coro(), "__qualname__", "?")] += 1
    return held


def _rss_kib() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return -1


def _malloc_trim() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):  # not glibc
        return False


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _c_heap() -> dict[str, int]:
    """glibc's own account (``mallinfo2``), in KiB: the heap's size (``arena``: every thread arena's
    ``sbrk``/``mmap``-ed heaps), what is in use there (``uordblks``) and free there (``fordblks``), and
    the chunks mapped on their own (``hblkhd``: blocks over the mmap threshold). Empty when not glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallinfo2
    except (OSError, AttributeError):
        return {}
    fn.restype = _Mallinfo2
    info = fn()
    return {k: getattr(info, k) // 1024 for k in ("arena", "uordblks", "fordblks", "hblkhd")}


def _pymalloc() -> dict[str, int]:
    """Python's own allocator (``sys._debugmallocstats``, written to fd 2, read back): its arenas
    (mapped on their own, 1 MiB each on 3.11) and the bytes in used and free blocks, in KiB."""
    import tempfile
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as out:
            os.dup2(out.fileno(), 2)
            try:
                sys._debugmallocstats()
            finally:
                os.dup2(saved, 2)
            out.seek(0)
            text = out.read().decode("ascii", errors="replace")
    finally:
        os.close(saved)
    wanted = {"# arenas allocated current": "arenas", "# bytes in allocated blocks": "used_kib",
              "# bytes in available blocks": "free_kib"}
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        name = wanted.get(key.strip())
        if name is not None:
            number = int(value.strip().replace(",", ""))
            found[name] = number if name == "arenas" else number // 1024
    return found


def _sessions() -> dict[str, int]:
    """The legacy HTTP sessions alive (every ``Sessions`` table's), the bytes their replay buffers keep
    and the bytes of messages their streams hold unsent (``pending_bytes``), in KiB."""
    live = replay = pending = 0
    for obj in gc.get_objects():
        if type(obj).__name__ == "Sessions" and hasattr(obj, "by_key"):
            for session in list(obj.by_key.values()):
                live += 1
                # the session's streams: a `SessionStreams` (its replay buffer, the resumable streams)
                streams = session.streams
                replay += streams.replay_bytes
                held = [session.standalone, *streams.resumable.values()]
                pending += sum(stream.pending_bytes for stream in held)
    return {"live": live, "replay_kib": replay // 1024, "pending_kib": pending // 1024}


def _type_counts() -> Counter[str]:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


@server.tool(inline=True)  # on the loop: it counts the loop's tasks
def soak_debug(detail: bool = False, trim: bool = False, memory: bool = False) -> dict[str, Any]:
    """What this process holds right now (with detail: what grew since the first detailed call).

    With trim, the C allocator is asked to give its free memory back first
    (glibc ``malloc_trim``): RSS before and after tells memory still in use
    from freed memory the allocator kept. With memory, where RSS lies: glibc's heap and mapped
    chunks (``c_heap_kib``), Python's allocator (``pymalloc``), the live legacy sessions (``sessions``).
    """
    held = _held_tasks()
    info: dict[str, Any] = {
        "tasks": len(asyncio.all_tasks()),
        "held_tasks": sum(held.values()),
        "held_by": dict(held.most_common(8)),
        "gc_objects": len(gc.get_objects()),
        "fds": len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else -1,
        "blocks": sys.getallocatedblocks(),
    }
    if memory:
        info["c_heap_kib"] = _c_heap()
        info["pymalloc"] = _pymalloc()
        info["sessions"] = _sessions()
    if trim:
        info["rss_kib_before_trim"] = _rss_kib()
        info["trimmed"] = _malloc_trim()
        info["rss_kib_after_trim"] = _rss_kib()
    if tracemalloc.is_tracing():
        info["traced_kib"] = tracemalloc.get_traced_memory()[0] // 1024
    if not detail:
        return info
    # Garbage in reference cycles (freed only by the cyclic collector): what it is, what large buffers it holds.
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        info["cyclic_garbage"] = gc.collect()
        cyclic = Counter(type(o).__qualname__ for o in gc.garbage)
        info["cyclic_types"] = dict(cyclic.most_common(12))
        held: Counter[str] = Counter()  # bytes and str (not tracked by gc) that cyclic garbage holds
        for holder in gc.garbage:
            for ref in gc.get_referents(holder):
                if type(ref) in (bytes, str, bytearray):
                    held[type(holder).__qualname__] += sys.getsizeof(ref)
        info["cyclic_held_kib"] = {k: v // 1024 for k, v in held.most_common(8)}
        frames = Counter(f"{o.f_code.co_filename.rsplit('/', 2)[-1]}:{o.f_code.co_name}" for o in gc.garbage if type(o).__name__ == "frame")
        info["cyclic_frames"] = dict(frames.most_common(10))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    gc.collect()
    counts = _type_counts()
    big: Counter[str] = Counter()  # who holds the large buffers (bytes are not tracked by gc themselves)
    for holder in gc.get_objects():
        for ref in gc.get_referents(holder):
            if type(ref) is bytes and len(ref) >= 64 * 1024:
                names = ""
                if type(holder) in (tuple, list, dict):
                    names = "<-" + ",".join(sorted({type(r).__qualname__ for r in gc.get_referrers(holder)})[:4])
                big[f"{type(holder).__qualname__}{names}"] += len(ref) // 1024
    info["large_bytes_kib_by_holder"] = dict(big.most_common(10))
    snapshot = tracemalloc.take_snapshot() if tracemalloc.is_tracing() else None
    if snapshot is not None:
        info["snapshot_kib"] = sum(s.size for s in snapshot.statistics("filename")) // 1024
        info["lines_held"] = [
            {"kib": s.size // 1024, "count": s.count, "where": s.traceback.format()[-6:]}
            for s in snapshot.statistics("traceback")[:8]
        ]
    if not _baseline:
        _baseline["counts"] = counts
        _baseline["snapshot"] = snapshot
        return info
    grown = counts - _baseline["counts"]
    info["types_grown"] = dict(grown.most_common(15))
    tasks = Counter(getattr(t.get_coro(), "__qualname__", "?") for t in asyncio.all_tasks())
    info["task_coroutines"] = dict(tasks.most_common(10))
    if snapshot is not None and _baseline["snapshot"] is not None:
        stats = snapshot.compare_to(_baseline["snapshot"], "traceback")
        info["lines_grown"] = [
            {"kib": s.size_diff // 1024, "count": s.count_diff, "where": s.traceback.format()[-6:]}
            for s in stats[:12]
        ]
    return info


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--session-idle-timeout", type=float, default=None)
    args = parser.parse_args()
    options = {} if args.session_idle_timeout is None else {"session_idle_timeout": args.session_idle_timeout}
    wiremcp.run(server, "http", host="127.0.0.1", port=args.port, **options)
