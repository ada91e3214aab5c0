"""An OpenAPI 3.0 / 3.1 document read into operations: names, descriptions, parameters and JSON Schemas.

`read_document` takes the document (a dict, JSON text, or the path of a
JSON file) and `operations` lists each operation as an `Operation`. The rules (docs/openapi.md):

* a ``$ref`` is followed only inside the document (``#/...``); a remote one
  (another file or URL) is refused with a ValueError naming it: nothing is
  ever fetched. A schema that refers to itself (a tree) is kept as a root
  ``$defs`` entry, everything else is inlined;
* OpenAPI 3.0's schema dialect becomes JSON Schema 2020-12: ``nullable``
  adds ``"null"``, boolean ``exclusiveMinimum``/``exclusiveMaximum`` become
  numbers, and ``example``, ``xml``, ``externalDocs``, ``discriminator`` and
  ``x-*`` extensions are dropped (``x-mcp-header`` must never appear by
  accident);
* an operation's arguments are its path, query, header and cookie
  parameters (less the header parameters ``Accept``, ``Content-Type`` and
  ``Authorization``, which OpenAPI says to ignore), plus its JSON request body: an object body's properties are
  arguments of their own when no name collides, else the body is one
  ``body`` argument. A name used by two locations gets ``__query``,
  ``__header``, ``__cookie`` appended in the later ones;
* a tool's name is the ``operationId``, else ``method_path``, with every
  character outside ``[A-Za-z0-9_.-]`` replaced by ``_`` and cut to 128
  (server/tools.mdx, "Tool Names").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Argument", "Operation", "read_document", "operations", "tool_name", "METHODS"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: Keys of an OpenAPI schema object that are not JSON Schema, dropped.
_DROPPED = frozenset({"example", "xml", "externalDocs", "discriminator", "nullable"})
_SCHEMA_VALUED = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                  "unevaluatedItems", "unevaluatedProperties", "additionalItems")  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]")
#: Header parameters OpenAPI says to ignore: the request's media types and credentials are not the model's to set.
_IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})


@dataclass(frozen=True, slots=True)
class Argument:
    """One tool argument: where it goes upstream (``path``, ``query``, ``header``, ``cookie``, ``body``, ``body*``)."""

    name: str
    location: str
    #: Its name upstream (a parameter's, or a body property's; "" for the whole body).
    wire: str
    #: OpenAPI ``style``/``explode`` of a query parameter that is an array: repeated (True) or comma-joined.
    explode: bool = True


@dataclass(slots=True)
class Operation:
    """One operation of the document, ready to become a tool, resource or template."""

    method: str
    path: str
    name: str
    operation_id: str | None
    description: str | None
    tags: tuple[str, ...]
    input_schema: dict[str, Any]
    arguments: list[Argument]
    output_schema: dict[str, Any] | None
    #: The request body's media type when there is one (JSON or a form), else None.
    body_type: str | None = None
    path_params: list[str] = field(default_factory=list)

    @property
    def required(self) -> list[str]:
        required: list[str] = self.input_schema.get("required", [])
        return required


def read_document(document: dict[str, Any] | str | Path) -> dict[str, Any]:
    """The document as a dict: given one, JSON text, or the path of a JSON file; checked to be OpenAPI 3.x."""
    if isinstance(document, Path):
        document = json.loads(document.read_text(encoding="utf-8"))
    elif isinstance(document, str):
        text = document.lstrip()
        if not text.startswith("{"):
            document = json.loads(Path(document).read_text(encoding="utf-8"))
        else:
            document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("an OpenAPI document is a JSON object")
    version = document.get("openapi")
    if not isinstance(version, str) or not version.startswith("3."):
        raise ValueError(f"not an OpenAPI 3.x document (openapi: {version!r}); Swagger 2.0 is not read")
    if not isinstance(document.get("paths", {}), dict):
        raise ValueError("the document's paths is not an object")
    return document


def tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The tool name of an operation (server/tools.mdx, "Tool Names")."""
    raw = operation_id or f"{method}_{path.strip('/')}"
    name = _NAME_BAD.sub("_", raw).strip("_") or method
    return name[:128]


class _Resolver:
    """Local ``$ref`` resolution and the 3.0 -> 2020-12 schema rewrite for one document."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document

    def target(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise ValueError(f"$ref {ref!r} is not inside the document: remote references are never fetched")
        node: Any = self.document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise ValueError(f"$ref {ref!r} points at nothing in the document")
        return node

    def deref(self, node: Any) -> Any:
        """A parameter, request body or response object, its ``$ref`` followed (chains too)."""
        seen: set[str] = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise ValueError(f"$ref {ref!r} refers to itself")
            seen.add(ref)
            node = self.target(ref)
        return node

    def schema(self, node: Any, defs: dict[str, Any]) -> dict[str, Any]:
        """A schema inlined; its recursive parts go to ``defs``, the ``$defs`` of the root it ends up in."""
        out = self._schema(node, (), defs)
        if not isinstance(out, dict):
            out = {} if out is True else {"not": {}}
        return out

    def _schema(self, node: Any, stack: tuple[str, ...], defs: dict[str, Any]) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, dict):
            raise ValueError(f"a schema is an object, not {node!r:.60}")
        ref = node.get("$ref")
        if ref is not None:
            key = _def_name(ref)
            if ref in stack:  # recursive: the body goes to $defs once
                if key not in defs:
                    defs[key] = None
                    defs[key] = self._schema(self.target(ref), stack, defs)
                return {"$ref": f"#/$defs/{key}"}
            inner = self._schema(self.target(ref), (*stack, ref), defs)
            rest = {k: v for k, v in node.items() if k not in ("$ref", "nullable")}
            merged = {"allOf": [inner], **self._schema(rest, stack, defs)} if rest else inner
            # 3.0's {"$ref": ..., "nullable": true}: null as well, not null checked against the target
            return _nullable(merged) if node.get("nullable") is True and isinstance(merged, dict) else merged
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in _SCHEMA_VALUED and isinstance(value, (dict, bool)):
                out[key] = self._schema(value, stack, defs)
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {k: self._schema(v, stack, defs) for k, v in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list) or key == "items" and isinstance(value, list):
                out[key] = [self._schema(v, stack, defs) for v in value]
            else:
                out[key] = value
        for bound in ("Minimum", "Maximum"):  # 3.0: a boolean beside minimum/maximum
            flag = out.get(f"exclusive{bound}")
            if isinstance(flag, bool):
                del out[f"exclusive{bound}"]
                if flag and bound.lower() in out:
                    out[f"exclusive{bound}"] = out.pop(bound.lower())
        if node.get("nullable") is True:
            out = _nullable(out)
        return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str):
        schema = {**schema, "type": [kind, "null"]}
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if isinstance(kind, list):
        return {**schema, "type": [*kind, "null"]} if "null" not in kind else schema
    return {"anyOf": [schema, {"type": "null"}]}


def _def_name(ref: str) -> str:
    return _NAME_BAD.sub("_", ref.rsplit("/", 1)[-1]) or "def"


def _json_media(content: Any) -> tuple[str, Any] | None:
    """The JSON (else form) media type of a ``content`` map and its media object."""
    if not isinstance(content, dict):
        return None
    for media, body in content.items():
        base = media.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return base, body
    for media, body in content.items():
        if media.split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            return "application/x-www-form-urlencoded", body
    return None


def operations(document: dict[str, Any]) -> list[Operation]:
    """Every operation of ``document``, in its order; ValueError for a remote or broken ``$ref``."""
    resolver = _Resolver(document)
    out: list[Operation] = []
    for path, item in document.get("paths", {}).items():
        item = resolver.deref(item)
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method, op in item.items():  # in the document's order
            if method in METHODS and isinstance(op, dict):
                out.append(_operation(resolver, method, path, op, shared, item))
    names = [op.name for op in out]
    for op in out:  # a name two operations share: each gets its method and path after it
        if names.count(op.name) > 1:
            op.name = tool_name(f"{op.name}_{op.method}_{op.path.strip('/')}", op.method, op.path)
    return out


def _operation(
    resolver: _Resolver, method: str, path: str, op: dict[str, Any], shared: list[Any], item: dict[str, Any]
) -> Operation:
    where = f"{method.upper()} {path}"
    params: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*shared, *(op.get("parameters") or [])]:  # the operation's own win (same name and location)
        param = resolver.deref(raw)
        if not isinstance(param, dict) or "name" not in param or "in" not in param:
            raise ValueError(f"{where}: a parameter without a name or location: {param!r:.80}")
        if param["in"] == "header" and str(param["name"]).lower() in _IGNORED_HEADERS:
            continue  # "the parameter definition SHALL be ignored" (OpenAPI 3.x, Parameter Object)
        params[(param["in"], param["name"])] = param
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: list[Argument] = []
    defs: dict[str, Any] = {}
    order = {"path": 0, "query": 1, "header": 2, "cookie": 3}
    for (location, wire), param in sorted(params.items(), key=lambda kv: order.get(kv[0][0], 9)):
        if location not in order:
            raise ValueError(f"{where}: parameter {wire!r} is in {location!r}, which OpenAPI does not define")
        name = wire if wire not in properties else f"{wire}__{location}"
        schema = param.get("schema")
        if schema is None:  # 3.x: or a content map with one media type
            media = _json_media(param.get("content"))
            schema = media[1].get("schema") if media and isinstance(media[1], dict) else {}
        prop = resolver.schema(schema if schema is not None else {}, defs)
        if param.get("description") and "description" not in prop:
            prop["description"] = param["description"]
        properties[name] = prop
        if param.get("required") or location == "path":
            required.append(name)
        explode = param.get("explode", param.get("style", "form") == "form")
        arguments.append(Argument(name, location, wire, bool(explode)))
    body_type = _body(resolver, op, properties, required, arguments, defs)
    summary, details = op.get("summary"), op.get("description") or item.get("description")
    description = "\n\n".join(d for d in (summary, details if details != summary else None) if d)
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    if defs:
        input_schema["$defs"] = defs
    return Operation(
        method=method,
        path=path,
        name=tool_name(op.get("operationId"), method, path),
        operation_id=op.get("operationId"),
        description=description or None,
        tags=tuple(t for t in op.get("tags") or () if isinstance(t, str)),
        input_schema=input_schema,
        arguments=arguments,
        output_schema=_output(resolver, op),
        body_type=body_type,
        path_params=[a.wire for a in arguments if a.location == "path"],
    )


def _body(
    resolver: _Resolver, op: dict[str, Any], properties: dict[str, Any], required: list[str],
    arguments: list[Argument], defs: dict[str, Any],
) -> str | None:
    """Add the request body's arguments; its media type, or None when the operation takes no body we can send."""
    body = resolver.deref(op.get("requestBody"))
    if not isinstance(body, dict):
        return None
    media = _json_media(body.get("content"))
    if media is None:
        return None  # a body we cannot build from JSON arguments (binary, multipart): not offered
    media_type, media_object = media
    schema = resolver.schema((media_object or {}).get("schema", {}), defs)
    body_required = bool(body.get("required"))
    props = schema.get("properties")
    flat = (
        schema.get("type") == "object" and isinstance(props, dict) and props
        and not any(k in schema for k in ("allOf", "anyOf", "oneOf", "not"))
        and schema.get("additionalProperties", False) is False  # a closed body is as closed flattened
        and not set(props) & set(properties)
    )
    if flat:
        assert isinstance(props, dict)
        inner_required = schema.get("required") or []
        for name, sub in props.items():
            properties[name] = sub
            if body_required and name in inner_required:
                required.append(name)
            arguments.append(Argument(name, "body*", name))
        return media_type
    name = "body" if "body" not in properties else "body__body"
    if body.get("description") and "description" not in schema:
        schema["description"] = body["description"]
    properties[name] = schema
    if body_required:
        required.append(name)
    arguments.append(Argument(name, "body", ""))
    return media_type


def _output(resolver: _Resolver, op: dict[str, Any]) -> dict[str, Any] | None:
    """The first 2xx response's JSON schema when it is an object schema, else None."""
    responses = op.get("responses") or {}
    for status in sorted(str(s) for s in responses):
        if not (status.startswith("2") and (status[1:].isdigit() or status == "2XX")):
            continue
        response = resolver.deref(responses.get(status, responses.get(int(status) if status.isdigit() else status)))
        media = _json_media(response.get("content") if isinstance(response, dict) else None)
        if media is None or not isinstance(media[1], dict) or "schema" not in media[1]:
            return None
        defs: dict[str, Any] = {}
        schema = resolver.schema(media[1]["schema"], defs)
        if schema.get("type") != "object":
            return None
        return {**schema, "$defs": defs} if defs else schema
    return None
