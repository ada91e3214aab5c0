// The official TypeScript SDK's Client (@modelcontextprotocol/sdk 1.x) against a wiremcp server.
// Run as: node ts_sdk.cjs PEER_DIR stdio COMMAND_JSON | node ts_sdk.cjs PEER_DIR http URL
// PEER_DIR holds the pinned SDK's node_modules (tests/peers.py). Prints the one JSON line
// of tests/interop/frameworks/_harness.py: {package, version, era, checks}.
const { createRequire } = require("node:module");
const path = require("node:path");
const [peerDir, kind, spec] = process.argv.slice(2);
const need = createRequire(path.join(peerDir, "package.json"));
const { Client } = need("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = need("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = need("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { version } = JSON.parse(
  require("node:fs").readFileSync(path.join(peerDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"), "utf8"),
);

const SIMPLE_TEXT = "This is a simple text response for testing.";
const ERROR_TEXT = "This tool intentionally returns an error for testing";
const STATIC_TEXT = "This is the content of the static text resource.";
const PROMPT_TEXT = "Prompt with arguments: arg1='a', arg2='b'";

function expect(condition, what) {
  if (!condition) throw new Error(what);
}

async function main() {
  let transport;
  if (kind === "stdio") {
    const { command, args, env } = JSON.parse(spec);
    transport = new StdioClientTransport({ command, args, env: { ...env, PATH: process.env.PATH } });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(spec));
  }
  const client = new Client({ name: "ts-sdk-matrix", version: "1.0.0" });
  await client.connect(transport);
  const checks = {};
  const check = async (name, run) => {
    try {
      await run();
      checks[name] = "pass";
    } catch (err) {
      checks[name] = `fail: ${String(err && err.message ? err.message : err)}`.slice(0, 400);
    }
  };
  const era = (await client.callTool({ name: "protocol_era", arguments: {} })).content[0].text;
  await check("tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.some((t) => t.name === "test_simple_text"), "not listed");
  });
  await check("call", async () => {
    const result = await client.callTool({ name: "test_simple_text", arguments: {} });
    expect(!result.isError && result.content[0].text === SIMPLE_TEXT, JSON.stringify(result));
  });
  await check("error", async () => {
    const result = await client.callTool({ name: "test_error_handling", arguments: {} });
    expect(result.isError === true && result.content[0].text.includes(ERROR_TEXT), JSON.stringify(result));
  });
  await check("progress", async () => {
    const seen = [];
    await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(JSON.stringify(seen) === "[0,50,100]", `progress seen: ${JSON.stringify(seen)}`);
  });
  await check("resources", async () => {
    const { resources } = await client.listResources();
    expect(resources.some((r) => r.uri === "test://static-text"), "not listed");
    const read = await client.readResource({ uri: "test://static-text" });
    expect(read.contents[0].text === STATIC_TEXT, JSON.stringify(read));
  });
  await check("prompts", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.some((p) => p.name === "test_prompt_with_arguments"), "not listed");
    const got = await client.getPrompt({ name: "test_prompt_with_arguments", arguments: { arg1: "a", arg2: "b" } });
    expect(got.messages[0].content.text === PROMPT_TEXT, JSON.stringify(got));
  });
  await client.close();
  console.log(JSON.stringify({ package: "@modelcontextprotocol/sdk", version, era, checks }));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
