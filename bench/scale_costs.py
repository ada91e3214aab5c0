"""bench/scale.py's tables: per-request costs with 1, 2, ... workers, and the projection to N cores and N hosts.

Throughput measured on a 2-core machine says little about a larger host; the
per-request costs do: the CPU one ``tools/call`` costs the workers, nginx and
Redis (utime+stime from /proc over the measured window, divided by the calls),
and the Redis commands one call and one legacy message take. `projection`
turns them into what N cores and N hosts would serve, under the assumptions it
prints.
"""

from __future__ import annotations

import statistics
from typing import Any

import pmqos


def _med(rows: list[dict[str, Any]], key: str) -> float:
    vals = [float(r[key]) for r in rows if key in r]
    return statistics.median(vals) if vals else float("nan")


def _states(mode: str) -> list[bool]:
    return pmqos.modes(mode)


def table(results: list[dict[str, Any]], mode: str) -> str:
    lines = [
        "| workers | PM QoS | tools/call per s | worker CPU µs/call | nginx µs/call | Redis µs/call | driver µs/call "
        "| Redis cmds (round trips)/call | legacy msgs per s | worker CPU µs/legacy msg | Redis cmds (round trips)/legacy msg "
        "| Redis cmds/handshake |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        for on in _states(mode):
            calls = [c for c in r["calls"] if c.get("pm_qos") == on]
            legacy = [x for x in r["legacy"] if x.get("pm_qos") == on]
            lines.append(
                f"| {r['workers']} | {'on' if on else 'off'} | {_med(calls, 'calls_per_s'):,.0f} "
                f"| {_med(calls, 'workers_cpu_us'):.1f} | {_med(calls, 'nginx_cpu_us'):.1f} "
                f"| {_med(calls, 'redis_cpu_us'):.2f} | {_med(calls, 'driver_cpu_us'):.1f} "
                f"| {max(c['redis_per_call'] for c in calls):.3f} ({max(c['redis_trips_per_call'] for c in calls):.3f}) "
                f"| {_med(legacy, 'legacy_per_s'):,.0f} | {_med(legacy, 'legacy_workers_cpu_us'):.1f} "
                f"| {max(x['redis_per_legacy_message'] for x in legacy):.2f} "
                f"({max(x['redis_trips_per_legacy_message'] for x in legacy):.2f}) "
                f"| {_med(legacy, 'redis_handshake'):.0f} |"
            )
    lines += ["", "| workers | notifications per s | Redis commands per change |", "| ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['workers']} | {_med(r['fanout'], 'notifications_per_s'):,.0f} "
                     f"| {_med(r['fanout'], 'redis_per_change'):.2f} |")
    one = next((r for r in results if r["workers"] == 1), None)
    lines.append("")
    for r in results:
        if one is None or r is one:
            continue
        for on in _states(mode):
            a = _med([c for c in one["calls"] if c.get("pm_qos") == on], "workers_cpu_us")
            b = _med([c for c in r["calls"] if c.get("pm_qos") == on], "workers_cpu_us")
            ratio = b / a if a > 0 else float("nan")  # 0: a window shorter than one clock tick
            verdict = "met" if ratio <= 1.1 else "**not met**"
            lines.append(f"- {r['workers']} workers / 1 worker, worker CPU per tools/call, {pmqos.label(on)}: "
                         f"{ratio:.2f}× (target ≤ 1.1×: {verdict})")
    return "\n".join(lines) + "\n"


def projection(results: list[dict[str, Any]]) -> str:
    """What N cores and N hosts would serve, from the 1-worker per-request costs (all PM QoS states pooled)."""
    one = next((r for r in results if r["workers"] == 1), None)
    if one is None:
        return ""
    worker = _med(one["calls"], "workers_cpu_us")
    nginx = _med(one["calls"], "nginx_cpu_us")
    per_call = max(c["redis_per_call"] for c in one["calls"])
    legacy_redis = _med(one["legacy"], "redis_per_legacy_message")
    legacy_trips = _med(one["legacy"], "redis_trips_per_legacy_message")
    legacy_worker = _med(one["legacy"], "legacy_workers_cpu_us")
    legacy_nginx = _med(one["legacy"], "legacy_nginx_cpu_us")
    redis_us = _med(one["legacy"], "legacy_redis_cpu_us")
    redis_per_cmd = redis_us / legacy_redis if legacy_redis > 0 else 0.0
    host = worker + nginx
    lines = [
        f"Projection from the 1-worker costs: a modern tools/call costs {worker:.1f} µs of worker CPU and "
        f"{nginx:.1f} µs of nginx, and {per_call:.3f} Redis commands; a legacy message {legacy_worker:.1f} µs of "
        f"worker CPU, {legacy_nginx:.1f} µs of nginx and {legacy_redis:.2f} Redis commands in {legacy_trips:.2f} round "
        f"trips ({redis_per_cmd:.1f} µs of Redis CPU per command).",
        "",
        "| cores per host (one worker each, nginx on the same cores) | hosts | modern tools/call per s | "
        "legacy messages per s (Redis-bound cap) |",
        "| ---: | ---: | ---: | ---: |",
    ]
    # a window too short for one clock tick (10 ms) of a process measures 0 µs: no bound from it (inf)
    redis_cap = 1e6 / (legacy_redis * redis_per_cmd) if legacy_redis > 0 and redis_per_cmd > 0 else float("inf")
    legacy_host = legacy_worker + legacy_nginx
    for cores, hosts in ((2, 1), (8, 1), (32, 1), (8, 4), (32, 16)):
        modern = cores * hosts * 1e6 / host if host > 0 else float("inf")
        legacy = min(cores * hosts * 1e6 / legacy_host if legacy_host > 0 else float("inf"), redis_cap)
        lines.append(f"| {cores} | {hosts} | {modern:,.0f} | {legacy:,.0f} |")
    lines += ["", "Assumptions: every core runs a worker or its share of nginx at the measured CPU per request "
              "(the load driver on other machines); a modern call touches no shared state, so hosts add up; "
              "a legacy message costs its Redis commands on one single-threaded Redis, which caps the cluster at "
              f"{redis_cap:,.0f} messages per s unless Redis is sharded."]
    return "\n".join(lines) + "\n"
