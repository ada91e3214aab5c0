"""What a server lists, checked without I/O: tool schemas and names, results, descriptions, pins.

The runner lists tools, prompts and resources (and calls tools) and hands
the dicts, exactly as received, to these functions:

* `check_tools(tools, era=...)`: schemas (valid JSON Schema 2020-12, an
  object at the root), tool and argument names (the spec's rules and the
  limits hosts enforce), duplicates, and every string scanned (below);
* `check_tool_result(tool, result)`: ``structuredContent`` present and
  conforming when the tool declares an ``outputSchema``;
* `check_prompts(prompts)`, `check_resources(resources)`: duplicates and the
  same scan;
* `pin(tools)` and `check_pin(tools, pinned)`: ``--pin FILE``.

Rules it keeps:

* Schemas are checked against the JSON Schema metaschema by ``jsonschema``
  (`Draft202012Validator`, or the dialect ``$schema`` names) when it is
  installed; without it, by wiremcp's own compiler
  (`wiremcp.server.schema.compile_validator`), which knows a subset of
  2020-12 and says so in the finding.
* Every string of a definition (keys too: argument names) is scanned, so a
  payload hidden in a nested ``description`` or an ``enum`` is found. A
  finding names where (``tools[add].inputSchema.properties.x.description``),
  the character offset, and the text around it with every unusual character
  escaped (``\\u200b``).
* Hidden instructions (`INSTRUCTION_PATTERNS`) are a short, documented list
  of phrasings seen in tool-poisoning attacks; it is a heuristic (a warning),
  never proof. Invisible characters (`INVISIBLE`) and Unicode tag characters
  (U+E0000-U+E007F, shown decoded) are errors: no honest description needs
  them, except a ZWJ inside an emoji sequence and the tags of a subdivision
  flag (U+1F3F4 ... U+E007F), which are allowed.

The pin file (``--pin FILE``), JSON::

    {"format": "wiremcp-pin/1",
     "tools": {"add": {"description": "<sha256 hex>", "inputSchema": "<sha256 hex>", ...}}}

One entry per tool name; per field (`PINNED_FIELDS`: ``title``,
``description``, ``inputSchema``, ``outputSchema``, ``annotations``) the
SHA-256 of its canonical JSON (keys sorted, no spaces, UTF-8); a field the
tool does not have is absent. A tool whose fields differ from its pin is
*changed* (error: the rug pull), a name not pinned is *added* (warning), a
pinned name not listed is *removed* (info).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import unicodedata
from typing import Any, Iterator

from ...protocol import Era, era_of
from ...protocol.headers import InvalidHeaderAnnotation, header_annotations
from ._findings import CHECK_NOT_RUN, Finding, Rule, rule

__all__ = [
    "check_tools",
    "check_tool_result",
    "check_prompts",
    "check_resources",
    "scan_text",
    "pin",
    "check_pin",
    "PIN_FORMAT",
    "PINNED_FIELDS",
    "INSTRUCTION_PATTERNS",
    "INVISIBLE",
]

_TOOLS = "server/tools.mdx (2025-11-25 and 2026-07-28)"

INPUT_SCHEMA_VALID = rule(
    "schema-input-schema-valid", "schema", "error", "A tool's inputSchema is a valid JSON Schema",
    "inputSchema: JSON Schema defining expected parameters ... Defaults to 2020-12 if no `$schema` field is "
    "present ... MUST be a valid JSON Schema object (not `null`)",
    _TOOLS + ", Data Types, Tool",
)
INPUT_SCHEMA_OBJECT = rule(
    "schema-input-schema-object", "schema", "error", "A tool's inputSchema has \"type\": \"object\" at the root",
    "Tool arguments are always JSON objects, so `type: \"object\"` is required at the root.",
    "schema.ts (2026-07-28), Tool.inputSchema; 2025-11-25 schema.json: inputSchema.type const \"object\", required",
)
OUTPUT_SCHEMA_VALID = rule(
    "schema-output-schema-valid", "schema", "error", "A tool's outputSchema is a valid JSON Schema",
    "outputSchema: Optional JSON Schema defining expected output structure ... Defaults to 2020-12 if no "
    "`$schema` field is present",
    _TOOLS + ", Data Types, Tool",
)
OUTPUT_SCHEMA_OBJECT = rule(
    "schema-output-schema-object", "schema", "error", "A 2025-11-25 tool's outputSchema has \"type\": \"object\" at the root",
    "Currently restricted to type: \"object\" at the root level.",
    "schema.ts (2025-11-25), Tool.outputSchema (2026-07-28 allows any JSON Schema)",
)
X_MCP_HEADER = rule(
    "schema-x-mcp-header", "schema", "error", "x-mcp-header annotations keep their rules",
    "Clients using the Streamable HTTP transport MUST reject tool definitions where any `x-mcp-header` value "
    "violates these constraints. Rejection means the client MUST exclude the invalid tool from the result of "
    "`tools/list`. (Constraints: not empty; an HTTP token; case-insensitively unique; on integer, string or "
    "boolean properties only; statically reachable from the schema root.)",
    "server/tools.mdx (2026-07-28), x-mcp-header",
)
TOOL_NAME = rule(
    "schema-tool-name", "schema", "warning", "A tool's name is 1 to 128 of A-Z a-z 0-9 _ - .",
    "Tool names SHOULD be between 1 and 128 characters in length (inclusive). ... The following SHOULD be the "
    "only allowed characters: uppercase and lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_), "
    "hyphen (-), and dot (.)",
    _TOOLS + ", Tool Names",
)
TOOL_NAME_UNIQUE = rule(
    "schema-tool-name-unique", "schema", "warning", "Tool names are unique within a server",
    "Tool names SHOULD be unique within a server.", _TOOLS + ", Tool Names",
)
TOOL_NAME_HOSTS = rule(
    "schema-tool-name-hosts", "schema", "warning", "A tool's name fits the model APIs hosts send it to",
    "Anthropic Messages API, Tool.name: \"Must match the regex ^[a-zA-Z0-9_-]{1,64}$\"; OpenAI function "
    "name: \"a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64\"",
    "docs.anthropic.com, Messages API reference (tools[].name); platform.openai.com, API reference "
    "(function.name). Hosts prefix it (Claude Code: mcp__<server>__<tool>), which leaves less room",
)
ARGUMENT_NAME = rule(
    "schema-argument-name", "schema", "warning", "An argument's name fits the model APIs hosts send it to",
    "tools.N.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'",
    "the Anthropic Messages API's 400 for a tool whose top-level property names break it (Claude Code, "
    "Amazon Bedrock Converse: the same pattern); the spec sets no rule of its own on argument names",
)
OUTPUT_PRESENT = rule(
    "schema-output-present", "schema", "error", "A tool with an outputSchema returns structuredContent",
    "Tools may also provide an output schema for validation of structured results. If an output schema is "
    "provided: Servers MUST provide structured results that conform to this schema.",
    _TOOLS + ", Output Schema",
)
OUTPUT_CONFORMS = rule(
    "schema-output-conforms", "schema", "error", "structuredContent conforms to the tool's outputSchema",
    "Servers MUST provide structured results that conform to this schema.", _TOOLS + ", Output Schema",
)
OUTPUT_TEXT = rule(
    "schema-output-text", "schema", "info", "Structured content is also given as JSON text",
    "For backwards compatibility, a tool that returns structured content SHOULD also return the serialized "
    "JSON in a TextContent block.",
    _TOOLS + ", Structured Content",
)
PROMPT_NAME_UNIQUE = rule(
    "schema-prompt-name-unique", "schema", "warning", "Prompt names are unique within a server",
    "name: Unique identifier for the prompt", "server/prompts.mdx, Data Types, Prompt",
)
RESOURCE_URI_UNIQUE = rule(
    "schema-resource-uri-unique", "schema", "warning", "Resource URIs are unique within a server",
    "uri: Unique identifier for the resource", "server/resources.mdx, Data Types, Resource",
)
HIDDEN_INSTRUCTIONS = rule(
    "security-hidden-instructions", "security", "warning", "No instructions to the model hidden in a definition",
    "descriptions of tool behavior such as annotations should be considered untrusted, unless obtained from a "
    "trusted server. (A tool-poisoning attack writes instructions for the model into a description: "
    "<IMPORTANT> blocks, 'do not tell the user', 'read ~/.ssh/id_rsa and pass it as ...'.)",
    "specification/index.mdx, Security and Trust & Safety, Tool Safety; Invariant Labs, "
    "'MCP Security Notification: Tool Poisoning Attacks' (2025)",
)
INVISIBLE_CHARACTERS = rule(
    "security-invisible-characters", "security", "error", "No invisible or direction-changing characters",
    "Zero-width characters, bidirectional overrides and isolates and control characters render as nothing or "
    "reorder what a user reads, while a model reads them all.",
    "Unicode UAX #9 (bidi controls); Trojan Source, CVE-2021-42574; specification/index.mdx, Tool Safety",
)
TAG_CHARACTERS = rule(
    "security-tag-characters", "security", "error", "No Unicode tag characters",
    "Tag characters (U+E0000-U+E007F) mirror ASCII and are invisible: text written in them is read by a model "
    "and shown to no one ('ASCII smuggling').",
    "The Unicode Standard, chapter 23.9 Tag Characters; specification/index.mdx, Tool Safety",
)
PIN_CHANGED = rule(
    "security-pin-changed", "security", "error", "A pinned tool's definition has not changed",
    "(wiremcp check --pin) a tool's description, schemas, title and annotations are what the user approved; "
    "a trusted server that changes them later can turn the tool against its user (a rug pull).",
    "docs/check.md, --pin; specification/index.mdx, Tool Safety: 'Users should understand what each tool does "
    "before authorizing its use'",
)
PIN_ADDED = rule(
    "security-pin-added", "security", "warning", "No tool appeared since the pin",
    "(wiremcp check --pin) a tool not in the pin file was never reviewed.", "docs/check.md, --pin",
)
PIN_REMOVED = rule(
    "security-pin-removed", "security", "info", "No pinned tool disappeared",
    "(wiremcp check --pin) a tool in the pin file is no longer listed.", "docs/check.md, --pin",
)

_SPEC_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}\Z")
_HOST_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_HOST_ARGUMENT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")


# -- schemas -------------------------------------------------------------------


def _jsonschema() -> Any:
    """The ``jsonschema`` package, or None when it is not installed (it is optional: see the module's rules)."""
    try:
        return importlib.import_module("jsonschema")
    except ImportError:
        return None


def _schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None (jsonschema when installed, else wiremcp's compiler)."""
    if type(schema) is not dict:
        return f"is {_kind(schema)}, not a JSON Schema object"
    engine = _jsonschema()
    if engine is None:
        return _compiler_problem(schema)
    cls = engine.validators.validator_for(schema, default=engine.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except engine.exceptions.SchemaError as exc:
        where = "".join(f"[{p!r}]" for p in exc.absolute_path)
        return f"breaks the {cls.__name__} metaschema at {where or 'its root'}: {exc.message}"
    except RecursionError:
        return "is nested too deeply to check"
    return None


def _compiler_problem(schema: dict[str, Any]) -> str | None:
    from ...server.schema import compile_validator

    try:
        compile_validator(schema)
    except Exception as exc:  # SchemaError, or anything a hostile schema makes the compiler raise
        return f"is refused by wiremcp's schema compiler (jsonschema is not installed): {exc}"
    return None


def _conformance_problem(schema: dict[str, Any], value: Any) -> str | None:
    """The first reason ``value`` breaks ``schema``, or None; raises ValueError when it cannot be checked."""
    engine = _jsonschema()
    if engine is None:
        from ...server.schema import compile_validator

        try:
            return compile_validator(schema)(value)
        except Exception as exc:
            raise ValueError(str(exc)) from None
    cls = engine.validators.validator_for(schema, default=engine.Draft202012Validator)
    try:
        error = engine.exceptions.best_match(cls(schema).iter_errors(value))
    except Exception as exc:  # an unresolvable $ref, a recursion too deep: not a verdict on the value
        raise ValueError(f"{type(exc).__name__}: {exc}") from None
    if error is None:
        return None
    where = "".join(f"[{p!r}]" for p in error.absolute_path)
    return f"at {where or 'the root'}: {error.message}"


def _legacy(era: str) -> bool:
    if era in ("modern", "legacy"):
        return era == "legacy"
    known = era_of(era)
    if known is None:
        raise ValueError(f"era is 'modern', 'legacy' or a protocol version, not {era!r}")
    return known is Era.LEGACY


def _schema_findings(tool: dict[str, Any], subject: str, legacy: bool) -> Iterator[Finding]:
    if "inputSchema" not in tool:
        yield Finding(INPUT_SCHEMA_VALID, "the tool has no inputSchema", subject)
    else:
        schema = tool["inputSchema"]
        problem = _schema_problem(schema)
        if problem:
            yield Finding(INPUT_SCHEMA_VALID, f"inputSchema {problem}", subject)
        if type(schema) is dict and schema.get("type") != "object":
            yield Finding(INPUT_SCHEMA_OBJECT, f"inputSchema's root type is {_show(schema.get('type'))}", subject)
        if not legacy and type(schema) is dict and "x-mcp-header" in json.dumps(schema):
            try:
                header_annotations(schema)
            except InvalidHeaderAnnotation as exc:
                yield Finding(X_MCP_HEADER, f"inputSchema: {exc}; hosts on Streamable HTTP drop this tool", subject)
    if "outputSchema" in tool:
        schema = tool["outputSchema"]
        problem = _schema_problem(schema)
        if problem:
            yield Finding(OUTPUT_SCHEMA_VALID, f"outputSchema {problem}", subject)
        if legacy and type(schema) is dict and schema.get("type") != "object":
            yield Finding(OUTPUT_SCHEMA_OBJECT, f"outputSchema's root type is {_show(schema.get('type'))}", subject)


def _name_findings(tool: dict[str, Any], subject: str) -> Iterator[Finding]:
    name = tool.get("name")
    if type(name) is not str:
        yield Finding(TOOL_NAME, f"the tool's name is {_kind(name)}, not a string", subject)
        return
    if not _SPEC_NAME.match(name):
        yield Finding(TOOL_NAME, f"name {_escaped(name)}: {_name_trouble(name, 128, '_.-')}", subject)
    if not _HOST_TOOL_NAME.match(name):
        yield Finding(TOOL_NAME_HOSTS, f"name {_escaped(name)}: {_name_trouble(name, 64, '_-')}", subject)
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if type(schema) is dict else None
    if type(properties) is dict:
        for argument in properties:
            if not _HOST_ARGUMENT_NAME.match(argument):
                trouble = _name_trouble(argument, 64, "_.-")
                yield Finding(ARGUMENT_NAME, f"argument {_escaped(argument)}: {trouble}", subject)


def _name_trouble(name: str, limit: int, punctuation: str) -> str:
    if not name:
        return "is empty"
    if len(name) > limit:
        return f"is {len(name)} characters long (at most {limit})"
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in punctuation))})
    return "has " + ", ".join(_escaped(c) for c in bad) + f" (only A-Z a-z 0-9 and {' '.join(punctuation)})"


def _duplicates(items: list[dict[str, Any]], key: str, kind: str, found: Rule) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for item in items:
        value = item.get(key)
        if type(value) is str:
            seen[value] = seen.get(value, 0) + 1
    for value, count in seen.items():
        if count > 1:
            yield Finding(found, f"{count} {kind}s have the {key} {_escaped(value)}", f"{kind} {value}")


def check_tools(tools: list[dict[str, Any]], *, era: str) -> list[Finding]:
    """Every finding on the tools of ``tools/list`` (``era``: "modern", "legacy" or the version spoken)."""
    legacy = _legacy(era)
    findings: list[Finding] = []
    for index, tool in enumerate(tools):
        name = tool.get("name")
        subject = f"tool {name}" if type(name) is str else f"tools[{index}]"
        findings += _schema_findings(tool, subject, legacy)
        findings += _name_findings(tool, subject)
        findings += scan_definition(tool, f"tools[{name if type(name) is str else index}]", subject)
    findings += _duplicates(tools, "name", "tool", TOOL_NAME_UNIQUE)
    return findings


def check_tool_result(tool: dict[str, Any], result: dict[str, Any]) -> list[Finding]:
    """Findings on one ``tools/call`` result of ``tool`` (its definition from ``tools/list``)."""
    subject = f"tool {tool.get('name')}"
    schema = tool.get("outputSchema")
    if result.get("isError") is True:
        return []  # a tool execution error carries no structured result
    findings: list[Finding] = []
    if "structuredContent" in result and not _has_json_text(result):
        findings.append(Finding(OUTPUT_TEXT, "structuredContent has no TextContent block holding the same JSON", subject))
    if type(schema) is not dict:
        return findings
    if "structuredContent" not in result:
        return findings + [Finding(OUTPUT_PRESENT, "the tool declares an outputSchema; the result has no structuredContent", subject)]
    try:
        problem = _conformance_problem(schema, result["structuredContent"])
    except ValueError as exc:
        return findings + [Finding(CHECK_NOT_RUN, f"{OUTPUT_CONFORMS.id}: the outputSchema could not be applied ({exc})", subject)]
    if problem:
        findings.append(Finding(OUTPUT_CONFORMS, f"structuredContent breaks the outputSchema {problem}", subject))
    return findings


def _has_json_text(result: dict[str, Any]) -> bool:
    """A text block holds the structured content as JSON (or, for ``{"result": X}``, the SDKs' wrapping of a non-object, X)."""
    structured = result["structuredContent"]
    accepted = [structured]
    if type(structured) is dict and list(structured) == ["result"]:
        accepted.append(structured["result"])
    content = result.get("content")
    for block in content if type(content) is list else []:
        if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
            try:
                if json.loads(block["text"]) in accepted:
                    return True
            except ValueError:
                continue
    return False


def check_prompts(prompts: list[dict[str, Any]]) -> list[Finding]:
    """Findings on the prompts of ``prompts/list``: duplicate names, and every string scanned."""
    findings = list(_duplicates(prompts, "name", "prompt", PROMPT_NAME_UNIQUE))
    for index, prompt in enumerate(prompts):
        name = prompt.get("name")
        label = name if type(name) is str else index
        findings += scan_definition(prompt, f"prompts[{label}]", f"prompt {label}")
    return findings


def check_resources(resources: list[dict[str, Any]]) -> list[Finding]:
    """Findings on resources (or resource templates): duplicate URIs, and every string scanned."""
    findings = list(_duplicates(resources, "uri", "resource", RESOURCE_URI_UNIQUE))
    for index, resource in enumerate(resources):
        uri = resource.get("uri", resource.get("uriTemplate"))
        label = uri if type(uri) is str else index
        findings += scan_definition(resource, f"resources[{label}]", f"resource {label}")
    return findings


# -- scanning ------------------------------------------------------------------

#: Phrasings of tool-poisoning attacks (name, pattern; case-insensitive). A short list, kept small on purpose.
INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.DOTALL))
    for name, pattern in (
        ("override", r"\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|other)\s+"
                     r"(instructions|prompts?|messages|rules|directions)"),
        ("markup block", r"<\s*/?\s*(important|system|instructions?|secret|hidden|admin)\s*>"),
        ("chat template", r"<\|im_(start|end)\|>|\[/?INST\]|<<\s*/?SYS\s*>>"),
        ("concealment", r"\b(do\s+not|don'?t|never)\s+(tell|inform|mention|reveal|show|alert|notify)\b.{0,30}?\buser\b"
                        r"|\bwithout\s+(telling|informing|notifying|alerting)\s+(the\s+)?user\b"),
        ("preamble", r"\bbefore\s+(using|calling|running)\s+(this|any|the)\s+tool\b.{0,40}?\b(read|call|run|send|fetch|open)\b"),
        ("secret file", r"~/\.ssh\b|\bid_(rsa|ed25519|ecdsa)\b|/etc/(passwd|shadow)\b|\.aws/credentials\b|"
                        r"\bmcp\.json\b|claude_desktop_config\.json"),
        ("exfiltration", r"\b(send|forward|post|upload|exfiltrate|transmit|leak)\b.{0,60}?\bto\s+(https?://|[\w.+-]+@[\w-]+\.)"),
    )
)

#: Invisible or reordering characters (code point, name): zero-width, joiners, bidi controls, invisible operators.
INVISIBLE: dict[int, str] = {
    0x00AD: "SOFT HYPHEN", 0x180E: "MONGOLIAN VOWEL SEPARATOR",
    0x200B: "ZERO WIDTH SPACE", 0x200C: "ZERO WIDTH NON-JOINER", 0x200D: "ZERO WIDTH JOINER",
    0x200E: "LEFT-TO-RIGHT MARK", 0x200F: "RIGHT-TO-LEFT MARK",
    0x202A: "LEFT-TO-RIGHT EMBEDDING", 0x202B: "RIGHT-TO-LEFT EMBEDDING", 0x202C: "POP DIRECTIONAL FORMATTING",
    0x202D: "LEFT-TO-RIGHT OVERRIDE", 0x202E: "RIGHT-TO-LEFT OVERRIDE",
    0x2060: "WORD JOINER", 0x2061: "FUNCTION APPLICATION", 0x2062: "INVISIBLE TIMES",
    0x2063: "INVISIBLE SEPARATOR", 0x2064: "INVISIBLE PLUS",
    0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE", 0x2068: "FIRST STRONG ISOLATE",
    0x2069: "POP DIRECTIONAL ISOLATE", 0xFEFF: "ZERO WIDTH NO-BREAK SPACE",
}
_TAG_FIRST, _TAG_LAST, _CANCEL_TAG, _BLACK_FLAG = 0xE0000, 0xE007F, 0xE007F, 0x1F3F4
_CONTEXT = 30  # characters shown either side of a finding


def _is_tag(c: str) -> bool:
    return _TAG_FIRST <= ord(c) <= _TAG_LAST


def _is_control(c: str) -> bool:
    return unicodedata.category(c) == "Cc" and c not in "\t\n\r"


def _emoji_joiner(text: str, i: int) -> bool:
    """A ZWJ between two pictographs (an emoji sequence such as a family)."""
    def pictograph(c: str) -> bool:
        return unicodedata.category(c) in ("So", "Sk") or c == "\ufe0f" or 0x1F3FB <= ord(c) <= 0x1F3FF

    return 0 < i < len(text) - 1 and pictograph(text[i - 1]) and pictograph(text[i + 1])


def _flag_tags(text: str) -> set[int]:
    """Offsets of tag characters that spell a subdivision flag: U+1F3F4, up to 7 tags, U+E007F."""
    allowed: set[int] = set()
    for start in (i for i, c in enumerate(text) if ord(c) == _BLACK_FLAG):
        end = start + 1
        while end < len(text) and end - start <= 8 and _is_tag(text[end]) and ord(text[end]) != _CANCEL_TAG:
            end += 1
        if end < len(text) and ord(text[end]) == _CANCEL_TAG and end > start + 1:
            allowed.update(range(start + 1, end + 1))
    return allowed


def _escaped(text: str) -> str:
    """``text`` quoted, with anything not plainly visible ASCII-safe written as an escape."""
    out = []
    for c in text:
        o = ord(c)
        if o in INVISIBLE or _is_tag(c) or _is_control(c) or unicodedata.category(c) in ("Cf", "Zl", "Zp", "Co", "Cn"):
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        elif c == "'" or c == "\\":
            out.append("\\" + c)
        else:
            out.append(c)
    return "'" + "".join(out) + "'"


def _around(text: str, start: int, end: int) -> str:
    lo, hi = max(0, start - _CONTEXT), min(len(text), end + _CONTEXT)
    return ("..." if lo else "") + _escaped(text[lo:hi]) + ("..." if hi < len(text) else "")


def scan_text(text: str, where: str, subject: str) -> list[Finding]:
    """Findings on one string of a definition; ``where`` names it (``tools[add].description``)."""
    findings: list[Finding] = []
    flags = _flag_tags(text) if any(_is_tag(c) for c in text) else set()
    tags = [i for i, c in enumerate(text) if _is_tag(c) and i not in flags]
    if tags:
        hidden = "".join(chr(ord(text[i]) - _TAG_FIRST) for i in tags if 0x20 <= ord(text[i]) - _TAG_FIRST <= 0x7E)
        message = (f"{where}, character {tags[0]}: {_count(len(tags), 'tag character')}, reading {hidden!r} once decoded: "
                   f"{_around(text, tags[0], tags[-1] + 1)}")
        findings.append(Finding(TAG_CHARACTERS, message, subject))
    unseen = [i for i, c in enumerate(text)
              if (ord(c) in INVISIBLE and not (ord(c) == 0x200D and _emoji_joiner(text, i))) or _is_control(c)]
    if unseen:
        names = sorted({INVISIBLE.get(ord(text[i]), f"control U+{ord(text[i]):04X}") for i in unseen})
        message = (f"{where}, character {unseen[0]}: {_count(len(unseen), 'invisible character')} ({', '.join(names)}): "
                   f"{_around(text, unseen[0], unseen[0] + 1)}")
        findings.append(Finding(INVISIBLE_CHARACTERS, message, subject))
    visible = "".join(c for c in text if ord(c) not in INVISIBLE and not _is_tag(c))
    matches = [(m, name) for name, pattern in INSTRUCTION_PATTERNS if (m := pattern.search(visible))]
    if matches:
        first = min(m.start() for m, _ in matches)
        said = "; ".join(f"{name} at {m.start()}: {_escaped(m.group(0))}" for m, name in matches)
        message = f"{where}, character {first}: {said}. In context: {_around(visible, first, first + 1)}"
        findings.append(Finding(HIDDEN_INSTRUCTIONS, message, subject))
    return findings


def _strings(value: Any, where: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every string in ``value`` (keys too) with its path; stops at 64 levels."""
    if depth > 64:
        return
    if type(value) is str:
        yield where, value
    elif type(value) is dict:
        for key, item in value.items():
            path = f"{where}.{key}" if re.fullmatch(r"[A-Za-z_$][\w$-]*", key) else f"{where}[{_escaped(key)}]"
            yield f"{path} (the name)", key
            yield from _strings(item, path, depth + 1)
    elif type(value) is list:
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]", depth + 1)


def scan_definition(definition: dict[str, Any], where: str, subject: str) -> list[Finding]:
    """`scan_text` over every string of a tool, prompt or resource definition."""
    findings: list[Finding] = []
    for path, text in _strings(definition, where):
        findings += scan_text(text, path, subject)
    return findings


# -- pins ----------------------------------------------------------------------

PIN_FORMAT = "wiremcp-pin/1"
#: The fields of a tool a pin records, each hashed on its own (so a finding names what changed).
PINNED_FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _fingerprint(tool: dict[str, Any]) -> dict[str, str]:
    return {field: _digest(tool[field]) for field in PINNED_FIELDS if field in tool}


def pin(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The pin of ``tools`` (the file ``--pin`` writes, as JSON); a repeated name keeps its first definition."""
    pinned: dict[str, dict[str, str]] = {}
    for tool in tools:
        name = tool.get("name")
        if type(name) is str and name not in pinned:
            pinned[name] = _fingerprint(tool)
    return {"format": PIN_FORMAT, "tools": pinned}


def check_pin(tools: list[dict[str, Any]], pinned: dict[str, Any]) -> list[Finding]:
    """Tools changed, added or removed since ``pinned`` (a `pin`); ValueError when it is not a pin."""
    if type(pinned) is not dict or pinned.get("format") != PIN_FORMAT or type(pinned.get("tools")) is not dict:
        raise ValueError(f"not a wiremcp pin file: it needs \"format\": \"{PIN_FORMAT}\" and a \"tools\" object")
    before: dict[str, Any] = pinned["tools"]
    now = pin(tools)["tools"]
    findings: list[Finding] = []
    for name, fields in now.items():
        old = before.get(name)
        if type(old) is not dict:
            findings.append(Finding(PIN_ADDED, f"tool {_escaped(name)} is not in the pin file", f"tool {name}"))
            continue
        changed = sorted(f for f in PINNED_FIELDS if fields.get(f) != old.get(f))
        if changed:
            findings.append(Finding(PIN_CHANGED, f"changed since the pin: {', '.join(changed)}", f"tool {name}"))
    for name in before:
        if name not in now:
            findings.append(Finding(PIN_REMOVED, f"tool {_escaped(name)} of the pin file is no longer listed", f"tool {name}"))
    return findings


# -- shared --------------------------------------------------------------------


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _show(value: Any) -> str:
    return "absent" if value is None else json.dumps(value, ensure_ascii=True)[:80]

