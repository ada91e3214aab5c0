"""The kernel's PM QoS CPU latency request, held for a whole run or toggled per sample.

A process that holds ``/dev/cpu_dma_latency`` open with a value asks for
idle CPUs that wake within that many microseconds: with 0 they poll instead
of halting (bench/README.md, "The machine"). ``run.py`` and the area benches
(``sync_tools.py``, ``scale.py``, ``tasks_bench.py``) take ``--pm-qos``:

* ``on``: held at 0 for the whole run (run.py's default);
* ``off``: left as the machine sets it;
* ``both``: every sample is taken twice, once with the request held and once
  without, in an order that alternates, so that a reader sees both figures
  from one run under the same drift of the machine's load.

Samples carry ``pm_qos`` (True/False); `modes` says which to take, `held`
holds the request around one sample.
"""

from __future__ import annotations

import contextlib
import os
import struct
from typing import Iterator

#: The kernel's PM QoS interface: a process holding it open with a value asks for that wake-up latency.
CPU_DMA_LATENCY = "/dev/cpu_dma_latency"

MODES = ("on", "off", "both")


def hold_cpu_latency(us: int) -> tuple[int | None, str]:
    """Ask for idle CPUs that wake within ``us`` microseconds while the descriptor stays open.

    The descriptor (close it to give the request back), or None and why not.
    """
    try:
        fd = os.open(CPU_DMA_LATENCY, os.O_WRONLY)
    except OSError as exc:
        return None, f"{CPU_DMA_LATENCY}: {exc.strerror}"
    try:
        os.write(fd, struct.pack("i", us))
    except OSError as exc:
        os.close(fd)
        return None, f"{CPU_DMA_LATENCY}: {exc.strerror}"
    return fd, f"held at {us} µs"


def modes(mode: str, rep: int = 0) -> list[bool]:
    """The PM QoS states to sample, in this repetition's order (``both`` alternates which goes first)."""
    if mode == "both":
        return [True, False] if rep % 2 == 0 else [False, True]
    return [mode == "on"]


@contextlib.contextmanager
def held(on: bool) -> Iterator[bool]:
    """Hold the request at 0 for the block when ``on``; yields whether it is held (False if it could not be)."""
    if not on:
        yield False
        return
    fd, _ = hold_cpu_latency(0)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)


def label(on: bool) -> str:
    return "PM QoS on" if on else "PM QoS off"
