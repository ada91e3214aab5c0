"""Every tool, resource, template and prompt the official conformance suite uses.

Written with the public API only, as any user would. Serve it with

    wiremcp run examples/everything.py --http --port 3001        # conformance: http://127.0.0.1:3001/mcp
    wiremcp run examples/everything.py                            # or over stdio

It speaks both eras: a 2026-07-28 client gets input requests as
``input_required`` results, a 2025-11-25 client gets them as real requests on
its session. The names and behaviours follow the conformance fixtures
(FIXTURES.md in the conformance harness).
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Annotated, Any, TypedDict

import wiremcp
from wiremcp import Content, Context, Elicit

server = wiremcp.Server(
    "wiremcp-everything",
    version=wiremcp.__version__,
    instructions="A test server exposing every MCP feature the conformance suite exercises.",
)

# A 1x1 PNG and a minimal WAV (44-byte header, no samples).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
WAV = (
    b"RIFF" + (36).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (8000).to_bytes(4, "little") + (1).to_bytes(2, "little") + (8).to_bytes(2, "little")
    + b"data" + (0).to_bytes(4, "little")
)

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


# -- tools: content of every kind ------------------------------------------------


@server.tool()
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> list[Content]:
    """Returns an image (a 1x1 PNG)."""
    return [wiremcp.image(PNG, "image/png")]


@server.tool()
def test_audio_content() -> list[Content]:
    """Returns audio (a minimal WAV)."""
    return [wiremcp.audio(WAV, "audio/wav")]


@server.tool()
def test_embedded_resource() -> list[Content]:
    """Returns an embedded text resource."""
    return [wiremcp.embedded_resource("test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain")]


@server.tool()
def test_multiple_content_types() -> list[Content]:
    """Returns text, an image and an embedded JSON resource."""
    return [
        wiremcp.text("Multiple content types test:"),
        wiremcp.image(PNG, "image/png"),
        wiremcp.embedded_resource(
            "test://mixed-content-resource",
            text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    ]


@server.tool()
def test_error_handling() -> str:
    """Always fails: a tool execution error, not a protocol error."""
    raise wiremcp.ToolError("This tool intentionally returns an error for testing")


# -- tools: progress, logging -------------------------------------------------------


@server.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50, 100 (of 100), then answers."""
    for step in (0, 50, 100):
        ctx.report_progress(step, 100, f"Completed step {step}")
        await asyncio.sleep(0.05)
    return f"Progress tool completed (token {ctx.meta.progress_token})"


@server.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three log messages while it runs (only if the client asked for logs)."""
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.info(text, logger="test_tool_with_logging")
        await asyncio.sleep(0.05)
    return "Logging tool completed"


@server.tool()
def test_logging_tool(ctx: Context) -> str:
    """Logs at info level; nothing is sent unless the request set a logLevel."""
    ctx.info("a log message that only a request with logLevel sees")
    return "Logged (or not, as the request asked)."


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Closes its SSE stream's connection mid-call; the client resumes with Last-Event-ID (SEP-1699).

    Only a 2025-11-25 session on Streamable HTTP has resumable streams; elsewhere
    the close does nothing and the tool just answers.
    """
    ctx.info("Before disconnect", logger="test_reconnection")
    closed = ctx.close_sse_stream(retry_ms=500)
    if closed:
        await asyncio.sleep(0.2)  # the answer comes after the client reconnected (or is replayed to it)
    ctx.info("After reconnect", logger="test_reconnection")
    return "Reconnection test completed" + (" (the stream was resumed)" if closed else "")


# -- tools: input from the client (sampling, elicitation, roots) --------------------


@server.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer the prompt."""
    reply = await ctx.sample(prompt, max_tokens=100)
    content = reply.get("content", {})
    text = content.get("text", "") if isinstance(content, dict) else ""
    return f"LLM response: {text}"


@server.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email."""
    schema = {
        "type": "object",
        "properties": {"username": {"type": "string", "description": "Your username"}, "email": {"type": "string", "description": "Your email address"}},
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer['action']}, content={json.dumps(answer.get('content'))}"


@server.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose fields carry default values (SEP-1034)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content'))}"


@server.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with every enum form (SEP-1330).

    The values are the ones the conformance client answers with (option1,
    value1, opt1): answers are checked against the requested schema.
    """
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [{"const": "value1", "title": "First"}, {"const": "value2", "title": "Second"}, {"const": "value3", "title": "Third"}],
            },
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option 1", "Option 2", "Option 3"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": [{"const": "value1", "title": "First"}, {"const": "value2", "title": "Second"}, {"const": "value3", "title": "Third"}]},
            },
        },
    }
    answer = await ctx.elicit("Choose your options", schema)
    return f"Elicitation completed: action={answer['action']}, content={json.dumps(answer.get('content'))}"


@server.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: a client that did not declare it gets -32021."""
    reply = await ctx.sample("Say hello", max_tokens=10)
    content = reply["content"]  # one content block, or a list of them
    return f"Sampled: {content.get('text', '') if isinstance(content, dict) else ''}"


@server.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user something; under 2026-07-28 that is an input_required result, never a request on the stream."""
    answer = await ctx.elicit("What is your name?", NAME_FORM)
    return f"Thanks, {answer.get('content', {}).get('name', 'stranger')}."


# -- tools: multi round-trip fixtures (2026-07-28) ------------------------------------


@server.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name, then greets them."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, key="user_name")
    if answer["action"] != "accept":
        return f"No name given ({answer['action']})."
    return f"Hello, {answer['content']['name']}!"


@server.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    content = reply["content"]  # one content block, or a list of them
    return f"The model answered: {content.get('text', '') if isinstance(content, dict) else ''}"


@server.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots."""
    roots = await ctx.list_roots(key="client_roots")
    return f"Client exposed {len(roots)} root(s)."


@server.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Needs a confirmation; the retry must carry the sealed requestState back."""
    answer = await ctx.elicit(
        "Confirm to continue", {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}, key="confirm"
    )
    return f"state-ok: confirmed={answer.get('content', {}).get('ok')}"


@server.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Three input requests in one round: elicitation, sampling and roots."""
    answers = await ctx.ask(
        {
            "user_name": {"method": "elicitation/create", "params": {"mode": "form", "message": "What is your name?", "requestedSchema": NAME_FORM}},
            "greeting": {
                "method": "sampling/createMessage",
                "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Write a short greeting."}}], "maxTokens": 50},
            },
            "client_roots": {"method": "roots/list", "params": {}},
        }
    )
    name = answers["user_name"].get("content", {}).get("name", "?")
    return f"Got all inputs for {name}: {', '.join(sorted(answers))}"


@server.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds: a name, then a favourite colour."""
    name = await ctx.elicit("What is your name?", NAME_FORM, key="step1")
    color = await ctx.elicit(
        "What is your favourite colour?",
        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        key="step2",
    )
    return f"{name.get('content', {}).get('name')} likes {color.get('content', {}).get('color')}."


@server.tool()
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Needs a confirmation; a retry with an altered requestState is refused."""
    await ctx.elicit("Confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}}}, key="confirm")
    return "state verified"


@server.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only for what the client declared: sampling always, elicitation only if supported."""
    requests = {
        "capital_question": {
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}], "maxTokens": 100},
        }
    }
    if ctx.supports("elicitation"):
        requests["user_name"] = {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema": NAME_FORM}}
    answers = await ctx.ask(requests)
    return f"Answered: {', '.join(sorted(answers))}"


# -- tools: run-time changes ----------------------------------------------------------


@server.tool()
def test_trigger_tool_change() -> str:
    """Adds and removes a temporary tool: listeners get notifications/tools/list_changed."""
    server.add_tool(lambda: "temporary", name="test_temporary_tool", description="Exists for a moment.")
    server.remove_tool("test_temporary_tool")
    return "Tool list changed"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Announces a prompt list change: listeners get notifications/prompts/list_changed."""
    server.notify_prompts_changed()
    return "Prompt list changed"


# -- tools: schemas and headers ----------------------------------------------------------


@server.tool(
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["street", "city"],
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "required": ["name"],
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    }
)
def json_schema_2020_12_tool(**arguments: object) -> str:
    """Keeps a JSON Schema 2020-12 input schema verbatim ($defs, $anchor, allOf, if/then/else)."""
    return f"Received: {json.dumps(arguments, sort_keys=True)}"


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
            "query": {"type": "string"},
        },
        "required": ["region"],
    }
)
def test_x_mcp_header(region: str, query: str = "") -> str:
    """Mirrors its region argument into the Mcp-Param-Region header on HTTP."""
    return f"Region {region}: {query}"


# -- resources ---------------------------------------------------------------------------


@server.resource("test://static-text", name="static-text", mime_type="text/plain", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png", description="A static binary resource (a PNG)")
def static_binary() -> bytes:
    return PNG


@server.resource("test://template/{id}/data", name="template-data", mime_type="application/json", description="Data for an id")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.resource("test://watched-resource", name="watched-resource", mime_type="text/plain", description="A resource clients can subscribe to")
def watched_resource() -> str:
    return "Watched resource content."


# -- prompts ----------------------------------------------------------------------------------


@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"], arg2: Annotated[str, "Second test argument"]
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: Annotated[str, "URI of the resource to embed"]) -> list[dict[str, Any]]:
    """A prompt that embeds a resource."""
    return [
        wiremcp.user(wiremcp.embedded_resource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")),
        wiremcp.user("Please process the embedded resource above."),
    ]


@server.prompt()
def test_prompt_with_image() -> list[dict[str, Any]]:
    """A prompt with an image."""
    return [wiremcp.user(wiremcp.image(PNG, "image/png")), wiremcp.user("Please analyze the image above.")]


@server.prompt()
async def test_input_required_result_prompt(ctx: Context) -> list[dict[str, Any]]:
    """A prompt that first asks the user for context (multi round-trip on prompts/get)."""
    answer = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    return [wiremcp.user(f"Context: {answer.get('content', {}).get('context', '')}")]


# -- tools: tasks (io.modelcontextprotocol/tasks, 2025-11-25 tasks; docs/tasks.md) --------------
# A task tool answers a client that declares the tasks extension (or, in a 2025-11-25
# session, sends params.task) with a task handle; the client polls tasks/get.

CONFIRM_FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
PARTIAL_FORM = {"type": "object", "properties": {"name": {"type": "string"}, "confirm": {"type": "boolean"}}}


class UserName(TypedDict):
    name: str


@server.tool()
def greet(name: str) -> str:
    """Greets by name (never a task)."""
    return f"Hello, {name}!"


@server.tool(task=lambda arguments: arguments.get("seconds", 0) > 0)
async def slow_compute(seconds: float = 0, label: str = "") -> str:
    """Sleeps ``seconds`` then answers; a task whenever there is something to wait for."""
    await asyncio.sleep(seconds)
    return f"computed {label or 'result'} after {seconds:g}s"


@server.tool(task="always")
async def failing_job() -> str:
    """Always a task; ends in a tool execution error (the task is completed, isError true)."""
    await asyncio.sleep(1)
    raise wiremcp.ToolError("the job failed: the input could not be processed")


@server.tool(task="auto")
async def protocol_error_job() -> str:
    """A task that fails with a JSON-RPC error (the task is failed, with the error)."""
    await asyncio.sleep(0.1)
    raise wiremcp.JSONRPCError("the job's backend is unavailable", code=-32603)


@server.tool(task="auto")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks for confirmation while running as a task (input_required, then tasks/update)."""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_FORM, key="confirm")
    if answer["action"] == "accept" and answer.get("content", {}).get("confirm"):
        return f"Deleted {filename}."
    return f"Kept {filename}."


@server.tool(task="auto")
async def multi_input(ctx: Context) -> str:
    """Two questions at once: the task waits until both are answered (one at a time is fine)."""
    answers = await ctx.ask(
        {
            "first": {"method": "elicitation/create", "params": {"mode": "form", "message": "First?", "requestedSchema": PARTIAL_FORM}},
            "second": {"method": "elicitation/create", "params": {"mode": "form", "message": "Second?", "requestedSchema": PARTIAL_FORM}},
        }
    )
    names = [a.get("content", {}).get("name", "?") for a in answers.values()]
    return "Got " + " and ".join(names)


@server.tool(task="always")
async def test_tool_with_task(user_name: Annotated[UserName, Elicit("What is your name?")]) -> str:
    """Asks the name first (multi round-trip on tools/call), then runs as a task."""
    await asyncio.sleep(0.1)
    return f"Hello, {user_name['name']}, from a task!"


# -- completion ---------------------------------------------------------------------------------


@server.complete(prompt="test_prompt_with_arguments", argument="arg1")
def complete_arg1(value: str) -> list[str]:
    return [v for v in ("paris", "park", "party", "test", "testing") if v.startswith(value)]


if __name__ == "__main__":
    wiremcp.run(server)
