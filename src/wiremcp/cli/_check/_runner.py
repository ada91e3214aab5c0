"""The runner of ``wiremcp check``: which eras the server speaks, then each probe in a fresh session.

Rules:

* The eras are found first (`_eras.legacy`, then `_eras.discover`), each in
  a fresh session; a target that answers neither is `Unreachable` (status
  2). The first session measures how long the server takes to start (up
  to 30 s): every later session's first wait gets twice that, plus 1 s,
  on top of ``--timeout`` (a slow start is not a slow answer).
  An era asked for (``--era``) that the server does not speak is a
  ``check-not-run`` finding.
* Every probe runs in its own session (a new process on stdio), so a probe
  that kills the server fails only itself: a probe that gets no answer in
  ``--timeout`` seconds, or whose server exits, is a finding of its rule
  naming what happened (and the server's last stderr words).
* Every session's conversation crosses the wire checker; its problems in
  what the server wrote are findings of ``wire-<code>`` (`_wire_rules`),
  each said once (by rule and message).
* The checks of other modules (tools' schemas, names and descriptions;
  HTTP security) are run when their module is present (`_extra`).
* ``selected(rule_id)`` filters what runs and what is reported.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from . import _eras
from ._calls import RESULT_RULE, RESULT_RULES, Called, call_tools, plan
from ._conn import Session, Unreachable
from ._context import Era, EraName, Target
from ._findings import CHECK_NOT_RUN, RULES, Finding, Rule
from ._probes import PROBES
from ._wire_rules import CHECKER_RULES, finding_of

__all__ = ["Report", "run_check"]


@dataclass
class Report:
    """What a run found: the target, the eras checked, the rules run and the findings."""

    target: str
    transport: str
    eras: list[str] = field(default_factory=list)
    ran: dict[str, Rule] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    listed: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # tools, prompts, resources... (the first era's tour)
    listed_era: str = ""
    called: list[Called] = field(default_factory=list)  # the tools called for the result rules (`_calls`)
    spoken: list[str] = field(default_factory=list)  # the eras the server speaks (checked or not)
    initialize: dict[str, Any] | None = None  # its answer to initialize (2025-11-25), when it speaks the legacy era


class _Run:
    def __init__(self, target: Target, selected: Callable[[str], bool], calls: dict[str, dict[str, Any]] | None = None) -> None:
        self.target = target
        self.selected = selected
        self.calls = calls or {}
        self.report = Report(str(target), target.transport)
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, findings: list[Finding]) -> None:
        for found in findings:
            key = (found.rule.id, found.subject, found.message)
            if key not in self._seen and (found.rule is CHECK_NOT_RUN or self.selected(found.rule.id)):
                self._seen.add(key)
                self.report.findings.append(found)

    def ran(self, *rules: Rule) -> None:
        for ran in rules:
            if self.selected(ran.id):
                self.report.ran[ran.id] = ran

    async def session(
        self, checks: Rule, era: Era | None, body: Callable[[Session], Awaitable[list[Finding]]], begin: bool = True
    ) -> None:
        """Run ``body`` in a fresh session (begun in ``era``); a timeout or exit is a finding of ``checks``."""
        session = await self.target.open()
        try:
            if era is not None and begin and not await self.guard(checks, era, session, era.begin):
                return
            await self.guard(checks, era, session, body)
        finally:
            await self.close(session)

    async def guard(self, checks: Rule, era: Era | None, session: Session, body: Callable[[Session], Awaitable[Any]]) -> bool:
        """Run ``body``; False when the server stopped answering or exited (a finding of ``checks``)."""
        since = len(session.transcript)
        self.ran(checks)
        try:
            found = await body(session)
        except TimeoutError:
            message = f"no answer within {self.target.timeout:g} s"
        except EOFError:
            message = session.conn.gone()
        else:
            if type(found) is list:
                self.add(found)
            return True
        self.add([Finding(checks, message, _era_name(era), session.envelopes(since))])
        return False

    async def close(self, session: Session) -> None:
        await session.conn.close()
        self.add([finding_of(found, envelopes) for found, envelopes in session.problems])

    async def probes(self, era: Era, probes: list[Any]) -> None:
        """The probes in one session while it lasts; a probe that kills it leaves a fresh one to the next."""
        session: Session | None = None
        for probe in probes:
            if session is None:
                session = await self.target.open()
                if not await self.guard(probe.rule, era, session, era.begin):
                    await self.close(session)
                    session = None
                    continue

            def bound(session: Session, probe: Any = probe) -> Awaitable[list[Finding]]:
                return probe.run(session, era, probe.rule)  # type: ignore[no-any-return]

            if not await self.guard(probe.rule, era, session, bound):
                await self.close(session)
                session = None
        if session is not None:
            await self.close(session)

    async def call_tools(self, era: Era) -> None:
        """The tools `_calls.plan` picks, called one by one; one that does not answer (or kills the server) is a note."""
        planned, notes = plan(self.report.listed.get("tools", []), self.calls)
        self.add(notes)
        session: Session | None = None
        for tool, arguments in planned:
            if session is None:
                session = await self.target.open()
                if not await self.guard(_eras.TIMEOUT, era, session, era.begin):
                    break
            since = len(session.transcript)
            try:
                called, notes = await call_tools(session, era, [(tool, arguments)])
            except (TimeoutError, EOFError) as exc:
                what = f"no answer within {self.target.timeout:g} s" if isinstance(exc, TimeoutError) else session.conn.gone()
                message = f"{RESULT_RULE}: tools/call {tool['name']}: {what}"
                self.add([Finding(CHECK_NOT_RUN, message, f"tool {tool['name']}", session.envelopes(since))])
                await self.close(session)
                session = None
                continue
            self.report.called += called
            self.add(notes)
        if session is not None:
            await self.close(session)

    def _tour_needed(self) -> bool:
        """Whether a rule the tour serves is selected: its own, the checker's, the tools' checks'."""
        own = {p.rule.id for p in PROBES} | {_eras.DISCOVER.id, _eras.NEGOTIATION.id, _eras.UNSUPPORTED.id}
        return any(self.selected(rid) for rid in RULES if rid not in own and not rid.startswith(("security-", "check-")))

    async def detect(self) -> list[EraName]:
        spoken: list[EraName] = []

        async def modern(session: Session) -> list[Finding]:
            ok, found = await _eras.discover(session)
            if ok:
                spoken.append("modern")
            return found

        async def legacy(session: Session) -> list[Finding]:
            seen: dict[str, Any] = {}
            ok, found = await _eras.legacy(session, seen)
            self.report.initialize = seen.get("initialize")
            if ok:
                spoken.append("legacy")
            return found

        async def first(session: Session) -> list[Finding]:
            found = await legacy(session)
            if session.started_in is not None:  # every later session waits this long for the server to start
                self.target.startup = session.started_in * 2 + 1
            return found

        await self.session(_eras.NEGOTIATION, None, first)
        await self.session(_eras.DISCOVER, None, modern)
        spoken.sort(key=("modern", "legacy").index)
        self.report.spoken = list(spoken)
        return spoken

    async def era(self, name: EraName) -> None:
        era = Era(name)
        if name == "legacy" and self.selected(_eras.NEGOTIATION.id):
            await self.session(_eras.NEGOTIATION, None, _eras.unknown_version)
        if name == "modern" and self.selected(_eras.UNSUPPORTED.id):
            await self.session(_eras.UNSUPPORTED, None, _eras.unsupported_version)

        async def tour(session: Session) -> list[Finding]:
            opening = await era.begin(session)
            listed = await _eras.tour(session, era, opening)
            if not self.report.listed_era:
                self.report.listed, self.report.listed_era = listed, era.name
            for _direction, found in session.checker.finish():
                session.problems.append((found, session.envelopes()))
            return []

        if self._tour_needed():
            await self.session(_eras.TIMEOUT, era, tour, begin=False)
            if self.report.listed_era == name and any(self.selected(rid) for rid in RESULT_RULES):
                await self.call_tools(era)
        await self.probes(era, [p for p in PROBES if name in p.eras and self.selected(p.rule.id)])

def _era_name(era: Era | None) -> str:
    return f"{era.name} era" if era is not None else ""


async def run_check(target: Target, wanted: str, selected: Callable[[str], bool], options: dict[str, Any] | None = None) -> Report:
    """Check ``target`` in the eras ``wanted`` (modern, legacy, both); ``options``: for the other modules' checks (`_extra`)."""
    from ._extra import authorize, run_extra  # the other modules' checks, when present

    await authorize(target, options)
    run = _Run(target, selected, (options or {}).get("calls"))
    spoken = await run.detect()
    if not spoken:
        refused = [f.message for f in run.report.findings if f.message.startswith("cannot connect")]
        if refused:
            raise Unreachable(refused[0])
        reason = _why_silent(run.report.findings)
        raise Unreachable(f"{target} answered neither server/discover nor initialize{reason}")
    eras = [e for e in spoken if wanted in ("both", e)]
    if wanted != "both" and wanted not in spoken:
        message = f"the server does not speak the {wanted} era (it speaks {', '.join(spoken)}); nothing was checked in it"
        run.add([Finding(CHECK_NOT_RUN, message, wanted)])
    run.report.eras = list(eras)
    for name in eras:
        await run.era(name)
    run.ran(*CHECKER_RULES.values())
    run.add(await run_extra(target, run.report, run.ran, options))
    return run.report


def _why_silent(findings: list[Finding]) -> str:
    for found in findings:
        if found.message.startswith(("the server closed", "cannot connect", "no answer")):
            return f" ({found.message})"
    return ""


def run_sync(target: Target, wanted: str, selected: Callable[[str], bool], options: dict[str, Any] | None = None) -> Report:
    return asyncio.run(run_check(target, wanted, selected, options))
