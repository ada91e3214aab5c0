"""The web inspector in headless Chromium: the page lists, calls, asks and shows the wire.

Each test starts ``wiremcp inspect --web`` on tests/cli/web/web_server.py
and opens the page in Debian's Chromium (inspector_harness.py). What is
checked is what a person sees: the lists, a result, both envelopes of a
call with their timing, an elicitation answered in the page, the CSP in
force, and server text shown as text.

``WIREMCP_INSPECTOR_SCREENSHOT=path.png`` saves the screenshot of the call
test there (docs/img/inspector.png was made so).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from inspector_harness import Chromium, InspectorProcess, Page

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def chromium() -> Iterator[Chromium]:
    browser = Chromium()
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(params=["modern", "legacy"])
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def inspector(era: str) -> Iterator[InspectorProcess]:
    process = InspectorProcess.of_test_server("--era", era)
    try:
        yield process
    finally:
        process.stop()


def run(coro: object) -> None:
    asyncio.run(coro)  # type: ignore[arg-type]


def wire_records(method: str) -> str:
    """JavaScript: the wire rows of ``method``'s request and of its answer, as [direction, kind, elapsed text]."""
    return (
        "(() => { const rows = Array.from(document.querySelectorAll('#wire li[data-seq]'));"
        f" const asked = rows.filter(r => r.dataset.method === {json.dumps(method)} && r.dataset.kind === 'request');"
        " return asked.map(r => { const id = JSON.parse(r.querySelector('pre').textContent).id;"
        " const answer = rows.find(a => a.dataset.direction !== r.dataset.direction && a.dataset.kind !== 'request'"
        "   && a.dataset.kind !== 'notification' && JSON.parse(a.querySelector('pre').textContent).id === id);"
        " return [r.dataset.direction, r.querySelector('.time').textContent,"
        "   answer ? [answer.dataset.direction, answer.dataset.kind, answer.querySelector('.elapsed').textContent] : null]; }); })()"
    )


def test_the_page_lists_calls_a_tool_and_shows_both_envelopes(chromium: Chromium, inspector: InspectorProcess, era: str) -> None:
    async def scenario() -> None:
        async with Page(chromium) as page:
            await page.goto(inspector.url)
            await page.wait_for("document.querySelector('#status').textContent === 'live'")
            names = await page.wait_for("Array.from(document.querySelectorAll('#tools button')).map(b => b.dataset.name)")
            assert names == ["echo", "add", "hostile", "greet"]
            assert await page.evaluate("document.querySelector('#server-name').textContent") == "web-test 2.0.0"
            meta = await page.evaluate("document.querySelector('#server-meta').textContent")
            assert meta.startswith(f"{era} era, protocol {'2026-07-28' if era == 'modern' else '2025-11-25'}")
            assert await page.evaluate("document.querySelector('#resources button').dataset.name") == "notes"
            assert await page.evaluate("document.querySelector('#prompts button').dataset.name") == "review"

            await page.click("#tools button[data-name='add']")
            await page.wait_for("!document.querySelector('#call-form').hidden")
            fields = await page.evaluate("Array.from(document.querySelectorAll('#call-fields .field')).map(f => f.dataset.field)")
            assert fields == ["a", "b", "negate"]
            await page.fill("#call-fields [name='a']", "40")
            await page.fill("#call-fields [name='b']", "2")
            await page.click("#call-submit")
            text = await page.wait_for(
                "(() => { const r = document.querySelector('#result .result[data-state=done]');"
                " return r && r.querySelector('pre.text').textContent; })()"
            )
            assert text == "42"

            rows = await page.wait_for(f"(() => {{ const r = {wire_records('tools/call')}; return r.length && r[0][2] && r; }})()")
            assert len(rows) == 1
            direction, sent_at, answer = rows[0]
            assert direction == "c2s" and sent_at.startswith("+") and sent_at.endswith(" ms")
            assert answer[0] == "s2c" and answer[1] == "response"
            assert answer[2].endswith(" ms") and float(answer[2].split()[0]) >= 0
            body = await page.evaluate(
                "JSON.parse(Array.from(document.querySelectorAll('#wire li[data-method=\"tools/call\"] pre'))[0].textContent)"
            )
            assert body["params"]["name"] == "add" and body["params"]["arguments"] == {"a": 40, "b": 2, "negate": False}  # the default, shown and sent
            # the checker of `wiremcp tap` looked at every envelope: this server breaks no rule
            assert await page.evaluate("document.querySelectorAll('#wire .problem').length") == 0
            assert await page.evaluate("document.querySelector('#problem-count').textContent") == ""
            target = os.environ.get("WIREMCP_INSPECTOR_SCREENSHOT")
            if target and era == "modern":
                await page.click("#wire li[data-method='tools/call'] summary")
                await page.screenshot(Path(target))

    run(scenario())


def test_an_elicitation_is_answered_in_the_page(chromium: Chromium, inspector: InspectorProcess, era: str) -> None:
    async def scenario() -> None:
        async with Page(chromium) as page:
            await page.goto(inspector.url)
            await page.wait_for("document.querySelectorAll('#tools button').length === 4")
            await page.click("#tools button[data-name='greet']")
            await page.click("#call-submit")
            message = await page.wait_for(
                "(() => { const c = document.querySelector('.elicitation'); return c && c.querySelector('.message').textContent; })()"
            )
            assert message == "Who are you?"
            fields = await page.evaluate("Array.from(document.querySelectorAll('.elicitation .field')).map(f => f.dataset.field)")
            assert fields == ["name", "age"]
            await page.fill(".elicitation [name='name']", "Ada")
            await page.fill(".elicitation [name='age']", "36")
            await page.click(".elicitation button[data-action='accept']")
            text = await page.wait_for(
                "(() => { const r = document.querySelector('#result .result[data-state=done]');"
                " return r && r.querySelector('pre.text').textContent; })()"
            )
            assert text == "Hello, Ada (36)!"
            assert await page.evaluate("document.querySelectorAll('.elicitation').length") == 0
            if era == "modern":  # the answer went back in the retry (mrtr.mdx): two tools/call requests
                calls = await page.evaluate(wire_records("tools/call"))
                assert len(calls) == 2
                retry = await page.evaluate(
                    "JSON.parse(Array.from(document.querySelectorAll('#wire li[data-method=\"tools/call\"] pre'))[1].textContent)"
                )
                (answer,) = retry["params"]["inputResponses"].values()
                assert answer == {"action": "accept", "content": {"name": "Ada", "age": 36}}
            else:  # a real elicitation/create request from the server, answered by the client
                asked = await page.evaluate(wire_records("elicitation/create"))
                assert len(asked) == 1 and asked[0][0] == "s2c" and asked[0][2][:2] == ["c2s", "response"]

    run(scenario())


def test_a_declined_elicitation_reaches_the_tool(chromium: Chromium, inspector: InspectorProcess, era: str) -> None:
    async def scenario() -> None:
        async with Page(chromium) as page:
            await page.goto(inspector.url)
            await page.wait_for("document.querySelectorAll('#tools button').length === 4")
            await page.click("#tools button[data-name='greet']")
            await page.click("#call-submit")
            await page.wait_for("!!document.querySelector('.elicitation button[data-action=decline]')")
            await page.click(".elicitation button[data-action='decline']")
            text = await page.wait_for(
                "(() => { const r = document.querySelector('#result .result[data-state=done]');"
                " return r && r.querySelector('pre.text').textContent; })()"
            )
            assert text == "No answer (decline)."

    run(scenario())


@pytest.mark.parametrize("era", ["modern"])
def test_the_csp_blocks_inline_script_and_server_text_stays_text(chromium: Chromium, inspector: InspectorProcess) -> None:
    async def scenario() -> None:
        async with Page(chromium) as page:
            await page.goto(inspector.url)
            await page.wait_for("document.querySelectorAll('#tools button').length === 4")
            # an inline script put in the page does not run: the CSP (script-src 'self') blocks it
            violated = await page.evaluate(
                "new Promise(resolve => {"
                " document.addEventListener('securitypolicyviolation', e => resolve(e.violatedDirective), {once: true});"
                " const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.body.append(s); })"
            )
            assert violated == "script-src-elem"
            assert await page.evaluate("window.__inline === undefined")
            # server text with <img onerror> and <script>: listed, called and read, always as text
            description = await page.evaluate("document.querySelector('#tools button[data-name=hostile] .sub').textContent")
            assert description.startswith('Returns markup: <img src=x onerror="window.__pwned=1"><script>')
            await page.click("#tools button[data-name='hostile']")
            await page.click("#call-submit")
            shown = await page.wait_for(
                "(() => { const r = document.querySelector('#result .result[data-state=done]');"
                " return r && r.querySelector('pre.text').textContent; })()"
            )
            assert shown == '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>'
            await page.click("#resources button[data-name='notes']")
            await page.wait_for("document.querySelectorAll('#result .result[data-state=done]').length === 2")
            assert await page.evaluate("document.querySelectorAll('main img, main script, main b').length") == 0
            assert await page.evaluate("window.__pwned === undefined")

    run(scenario())
