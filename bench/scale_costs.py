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
    lines += _paced_table(results, mode) + _instructions_table(results)
    lines.append("")
    lines += _ratios(results, mode)
    return "\n".join(lines) + "\n"


def _paced_table(results: list[dict[str, Any]], mode: str) -> list[str]:
    if not any(r.get("paced") for r in results):
        return []
    lines = [
        "", "Open loop (scale_paced.py): tools/call sent on a fixed schedule, the same rate per worker with 1 and 2 "
        "workers, below saturation",
        "",
        "| workers | PM QoS | target calls/s per worker | achieved per worker | worker CPU µs/call | of which user "
        "| nginx µs/call | Redis µs/call | driver µs/call | Redis cmds/call | schedule's max lag (ms) |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        n = r["workers"]
        for on in _states(mode):
            rows = [c for c in r.get("paced", []) if c.get("pm_qos") == on]
            if not rows:
                continue
            lines.append(
                f"| {n} | {'on' if on else 'off'} | {_med(rows, 'target_per_s') / n:,.0f} | {_med(rows, 'calls_per_s') / n:,.0f} "
                f"| {_med(rows, 'workers_cpu_us'):.1f} | {_med(rows, 'workers_user_cpu_us'):.1f} "
                f"| {_med(rows, 'nginx_cpu_us'):.1f} | {_med(rows, 'redis_cpu_us'):.2f} "
                f"| {_med(rows, 'driver_cpu_us'):.1f} | {max(c['redis_per_call'] for c in rows):.3f} "
                f"| {max(c['lag_ms'] for c in rows):.1f}{'' if _on_rate(rows) else ' (**behind**)'} |")
    return lines


def _on_rate(rows: list[dict[str, Any]]) -> bool:
    """Every window answered its target rate to within 5 %: the open loop kept its schedule."""
    return all(abs(c["calls_per_s"] / c["target_per_s"] - 1) <= 0.05 for c in rows)


def _instructions_table(results: list[dict[str, Any]]) -> list[str]:
    rows = [r["instructions"] for r in results if "instructions" in r]
    if not rows:
        return []
    lines = ["", "Worker instructions per tools/call (user space, callgrind; the workers' idle timers over as long a "
             "window subtracted)", "",
             "| workers | calls | rate per worker | worker instructions per call | idle instructions per s (all workers) |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for x in rows:
        if "unavailable" in x:
            lines.append(f"| {x['workers']} | — | — | {x['unavailable']} | — |")
            continue
        lines.append(f"| {x['workers']} | {x['calls']} | {x['rate_per_worker']:.0f}/s | {x['instructions_per_call']:,.0f} "
                     f"| {sum(x['idle']) / x['idle_window_s']:,.0f} |")
    return lines


def _ratios(results: list[dict[str, Any]], mode: str) -> list[str]:
    """N workers against 1: worker CPU per call at equal per-worker rate, in the closed loop, and instructions."""
    one = next((r for r in results if r["workers"] == 1), None)
    lines: list[str] = []
    for r in results:
        if one is None or r is one:
            continue
        n = r["workers"]
        for key, metric, what in (
            ("paced", "workers_cpu_us", "at the same rate per worker (open loop)"),
            ("paced", "workers_user_cpu_us", "user space only, at the same rate per worker (open loop)"),
            ("calls", "workers_cpu_us", "closed loop (the machine saturated: each worker gets 1/N of the calls)"),
        ):
            for on in _states(mode):
                a = _med([c for c in one.get(key, []) if c.get("pm_qos") == on], metric)
                b = _med([c for c in r.get(key, []) if c.get("pm_qos") == on], metric)
                if a != a or b != b:  # not measured
                    continue
                ratio = b / a if a > 0 else float("nan")  # 0: a window shorter than one clock tick
                verdict = "met" if ratio <= 1.1 else "**not met**"
                if key == "paced" and not all(_on_rate([c for c in x[key] if c.get("pm_qos") == on]) for x in (one, r)):
                    verdict += "; a window missed its rate by more than 5 %: not at equal load"
                lines.append(f"- {n} workers / 1 worker, worker CPU per tools/call {what}, {pmqos.label(on)}: "
                             f"{ratio:.2f}× (target ≤ 1.1×: {verdict})")
        a_i, b_i = one.get("instructions", {}), r.get("instructions", {})
        if "instructions_per_call" in a_i and "instructions_per_call" in b_i:
            ratio = b_i["instructions_per_call"] / a_i["instructions_per_call"]
            lines.append(f"- {n} workers / 1 worker, worker instructions per tools/call: {ratio:.3f}× "
                         f"(target ≤ 1.1×: {'met' if ratio <= 1.1 else '**not met**'})")
    return lines


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
    paced_rows = one.get("paced", [])
    paced_host = _med(paced_rows, "workers_cpu_us") + _med(paced_rows, "nginx_cpu_us") if paced_rows else float("nan")
    paced_rate = _med(paced_rows, "target_per_s") if paced_rows else float("nan")
    lines = [
        f"Projection from the 1-worker costs: a modern tools/call costs {worker:.1f} µs of worker CPU and "
        f"{nginx:.1f} µs of nginx at saturation (closed loop), "
        + (f"{_med(paced_rows, 'workers_cpu_us'):.1f} and {_med(paced_rows, 'nginx_cpu_us'):.1f} µs at "
           f"{paced_rate:,.0f} calls/s (open loop, fewer calls per wake-up), " if paced_rows else "")
        + f"and {per_call:.3f} Redis commands; a legacy message {legacy_worker:.1f} µs of "
        f"worker CPU, {legacy_nginx:.1f} µs of nginx and {legacy_redis:.2f} Redis commands in {legacy_trips:.2f} round "
        f"trips ({redis_per_cmd:.1f} µs of Redis CPU per command).",
        "",
        "| cores per host (one worker each, nginx on the same cores) | hosts | modern tools/call per s "
        "(saturated cost) | at the open-loop cost | legacy messages per s (Redis-bound cap) |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    # a window too short for one clock tick (10 ms) of a process measures 0 µs: no bound from it (inf)
    redis_cap = 1e6 / (legacy_redis * redis_per_cmd) if legacy_redis > 0 and redis_per_cmd > 0 else float("inf")
    legacy_host = legacy_worker + legacy_nginx
    for cores, hosts in ((2, 1), (8, 1), (32, 1), (8, 4), (32, 16)):
        modern = cores * hosts * 1e6 / host if host > 0 else float("inf")
        low = f"{cores * hosts * 1e6 / paced_host:,.0f}" if paced_host > 0 else "—"
        legacy = min(cores * hosts * 1e6 / legacy_host if legacy_host > 0 else float("inf"), redis_cap)
        lines.append(f"| {cores} | {hosts} | {modern:,.0f} | {low} | {legacy:,.0f} |")
    lines += ["", "Assumptions: every core runs a worker or its share of nginx at the measured CPU per request "
              "(the load driver on other machines); a modern call touches no shared state, so hosts add up "
              "(the open-loop and instruction figures show a second worker adds no cost per call); "
              "a legacy message costs its Redis commands on one single-threaded Redis, which caps the cluster at "
              f"{redis_cap:,.0f} messages per s unless Redis is sharded."]
    return "\n".join(lines) + "\n"
