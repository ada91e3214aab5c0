"""A test server for multi round-trip requests and subscriptions."""

import wiremcp
from wiremcp import Context

server = wiremcp.Server("rounds", version="1.0.0")

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool()
async def greet(ctx: Context) -> str:
    """Ask the user's name (elicitation), then greet them."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    if answer["action"] != "accept":
        return f"No name given ({answer['action']})."
    return f"Hello, {answer['content']['name']}!"


@server.tool()
async def two_step(ctx: Context) -> str:
    """Two rounds: a name, then a colour."""
    name = await ctx.elicit("Name?", NAME_SCHEMA, key="step1")
    color = await ctx.elicit(
        "Colour?", {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}, key="step2"
    )
    return f"{name['content']['name']} likes {color['content']['color']}"


@server.tool()
async def capital(ctx: Context) -> str:
    """Ask the client's model a question (sampling)."""
    reply = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model said: {reply['content']['text']}"


@server.tool()
async def count_roots(ctx: Context) -> str:
    """Ask the client for its roots."""
    roots = await ctx.list_roots(key="client_roots")
    return f"Client exposed {len(roots)} root(s)."


@server.tool()
async def everything_at_once(ctx: Context) -> str:
    """Three input requests in one round; the elicitation only if the client supports it."""
    requests = {
        "greeting": {"method": "sampling/createMessage", "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 50}},
        "client_roots": {"method": "roots/list", "params": {}},
    }
    if ctx.supports("elicitation"):
        requests["user_name"] = {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?", "requestedSchema": NAME_SCHEMA}}
    answers = await ctx.ask(requests)
    return ",".join(sorted(answers))


@server.tool()
def change_tools() -> str:
    """Add and remove a temporary tool: listeners get notifications/tools/list_changed."""
    server.add_tool(lambda: "temp", name="temporary")
    server.remove_tool("temporary")
    return "changed"


@server.tool()
def touch(uri: str) -> str:
    """Announce that a resource changed."""
    server.notify_resource_updated(uri)
    return "touched"


@server.tool()
def sync_asks(ctx: Context) -> str:
    """A synchronous tool cannot await input; it reports the capability it sees."""
    return "elicitation" if ctx.supports("elicitation") else "none"
