"""TARGET: how every command names a server, resolved by one set of rules.

    examples/echo.py            a Python file; the Server in it is found by name
    examples/echo.py:server     a Python file and the attribute holding the Server
    my_pkg.server               a module, imported with the current folder first on sys.path
    my_pkg.server:app           a module and the attribute
    http://127.0.0.1:8000/mcp   a URL (client commands, install, proxy)

Rules:

* A word is a *file* when it ends in ``.py`` (before any ``:attr``) or
  contains a path separator; a *module* when it is a dotted Python name,
  optionally ``:attr`` (a bare name without a dot or colon is a module only
  when no program of that name is on PATH: ``wiremcp inspect uvx`` still
  means the command); a URL when it starts with ``http://`` or ``https://``.
  A one-letter "module" followed by ``:\\`` or ``:/`` is a Windows drive.
* The current folder is put first on sys.path before a module is imported,
  in every command (``wiremcp`` as a console script does not have it there,
  ``python -m wiremcp`` does): ``wiremcp run my_pkg.server:app`` works from
  the project folder.
* Without ``:attr`` the Server is the attribute ``server``, ``mcp`` or
  ``app`` (in that order), else the only Server the module defines.
* A module that does not import is reported once, as the user needs it: a
  `SyntaxError` as ``file:line: SyntaxError: message`` with the line and a
  caret, any other exception with the traceback of the user's own frames
  (wiremcp's and importlib's are left out).
* An attribute that is not a `Server` is named with its type; an ASGI
  application (FastAPI, Starlette, a bare ``async def app(scope, receive,
  send)``) gets the two ways to serve MCP next to it (``MCPApp``), and an
  ``MCPApp`` is served as its Server.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import sys
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Literal, NoReturn

if TYPE_CHECKING:  # imported where a server is loaded: parsing a target (install, inspect) does not need it
    from ..server import Server

__all__ = ["CONVENTIONAL_NAMES", "Target", "TargetError", "parse_target", "is_server_target", "load_server"]

#: Attribute names tried, in order, when the target names none.
CONVENTIONAL_NAMES = ("server", "mcp", "app")

#: A dotted module name, optionally ``:attribute`` (compiled by `re` on first use: ``wiremcp run`` never needs it).
_MODULE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*)?"


class TargetError(Exception):
    """A target that names no Server; the message is for the user, whole."""


class Target:
    """A parsed TARGET: ``kind``, the file path or module name (``spec``) and the attribute ("" for none).

    Immutable, compared and hashed by its three fields (a frozen dataclass
    written out: making one costs ~4 M instructions at every server's start).
    """

    __slots__ = ("kind", "spec", "attr")

    kind: Literal["url", "file", "module"]
    spec: str
    attr: str

    def __init__(self, kind: Literal["url", "file", "module"], spec: str, attr: str = "") -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "attr", attr)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: a Target is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: a Target is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Target:
            return NotImplemented
        return (self.kind, self.spec, self.attr) == (other.kind, other.spec, other.attr)

    def __hash__(self) -> int:
        return hash((self.kind, self.spec, self.attr))

    def __repr__(self) -> str:
        return f"Target(kind={self.kind!r}, spec={self.spec!r}, attr={self.attr!r})"

    def __str__(self) -> str:
        return self.spec + (f":{self.attr}" if self.attr else "")


def parse_target(text: str) -> Target:
    """The kind, spec and attribute of ``text`` (no I/O, nothing imported)."""
    if text.startswith(("http://", "https://")):
        return Target("url", text)
    spec, _, attr = text.partition(":")
    if len(spec) == 1 and attr.startswith(("\\", "/")):  # a Windows drive letter, not an attribute
        spec, attr = text, ""
    if spec.endswith(".py") or "/" in spec or os.sep in spec:
        return Target("file", spec, attr)
    return Target("module", spec, attr)


def is_server_target(word: str) -> bool:
    """Whether a client command's single TARGET word is a Python file or module (else: a command to run)."""
    kind = parse_target(word).kind
    if kind == "file":
        return True
    if kind == "url" or not re.fullmatch(_MODULE, word):
        return False
    import shutil  # on first use: only for a bare word after --

    return "." in word or ":" in word or shutil.which(word) is None


def _cwd_on_path() -> None:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _import(target: Target) -> ModuleType:
    if target.kind == "file":
        path = os.path.abspath(target.spec)
        if not os.path.isfile(path):
            raise TargetError(f"no such file: {target.spec}")
        directory = os.path.dirname(path)
        if directory not in sys.path:
            sys.path.insert(0, directory)
        name = "_wiremcp_target_" + os.path.splitext(os.path.basename(path))[0]
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise TargetError(f"cannot load {target.spec} as Python")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except BaseException as exc:
            del sys.modules[name]
            _reraise(exc, target.spec)
        return module
    _cwd_on_path()
    try:
        return importlib.import_module(target.spec)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (target.spec == exc.name or target.spec.startswith(exc.name + ".")):
            raise TargetError(f"cannot import {target.spec!r}: no module named {exc.name!r} (from {os.getcwd()})") from None
        _reraise(exc, target.spec)
    except BaseException as exc:
        _reraise(exc, target.spec)


def _reraise(exc: BaseException, spec: str) -> NoReturn:
    """Turn an exception raised while importing the target into one `TargetError`, said once."""
    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
        raise exc
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{os.path.relpath(exc.filename) if os.path.isabs(exc.filename) else exc.filename}:{exc.lineno}"
        lines = [f"{where}: {type(exc).__name__}: {exc.msg}"]
        if exc.text:
            text = exc.text.rstrip("\n")
            stripped = text.lstrip()
            lines.append("    " + stripped)
            if exc.offset:
                column = max(exc.offset - 1 - (len(text) - len(stripped)), 0)
                width = max((exc.end_offset or exc.offset + 1) - exc.offset, 1) if exc.end_lineno in (None, exc.lineno) else 1
                lines.append("    " + " " * column + "^" * width)
        raise TargetError("\n".join(lines)) from None
    tb = _user_frames(exc.__traceback__)
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
    raise TargetError(f"importing {spec} failed:\n{text}") from None


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """The traceback from the first frame that is neither importlib's nor this module's."""
    here = os.path.abspath(__file__)
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (name.startswith("<frozen") or os.path.abspath(name) == here or "importlib" in name.split(os.sep)):
            return tb
        tb = tb.tb_next
    return tb


def load_server(text: str) -> Server:
    """The `Server` named by ``path.py``, ``path.py:attr``, ``pkg.mod`` or ``pkg.mod:attr``."""
    target = parse_target(text)
    if target.kind == "url":
        raise TargetError(f"{text} is a URL; this command serves a Python file or module")
    module = _import(target)
    if target.attr:
        if not hasattr(module, target.attr):
            raise TargetError(f"{target.spec} has no attribute {target.attr!r}{_servers_hint(module, target.spec)}")
        return _as_server(getattr(module, target.attr), str(target))
    for name in CONVENTIONAL_NAMES:
        obj = getattr(module, name, None)
        server = _unwrap(obj)
        if server is not None:
            return server
    found = [(name, v) for name, v in vars(module).items() if _unwrap(v) is not None]
    if len(found) == 1:
        server = _unwrap(found[0][1])
        assert server is not None
        return server
    if not found:
        for name, value in vars(module).items():
            if not name.startswith("_") and _is_asgi(value):
                raise TargetError(_not_a_server(value, f"{target.spec}:{name}", prefix=f"{target.spec} defines no wiremcp.Server; "))
        raise TargetError(f"{target.spec} defines no wiremcp.Server")
    names = ", ".join(name for name, _ in found)
    raise TargetError(f"{target.spec} defines several Servers ({names}); name one as {target.spec}:NAME")


def _servers_hint(module: ModuleType, spec: str) -> str:
    names = [name for name, value in vars(module).items() if _unwrap(value) is not None]
    return f"; it has {', '.join(f'{spec}:{n}' for n in names)}" if names else ""


def _unwrap(obj: object) -> Server | None:
    """``obj`` if it is a Server, the Server of an ``MCPApp``, else None."""
    from ..server import Server  # on first use: parsing a target (install, inspect) loads no server

    if isinstance(obj, Server):
        return obj
    inner = getattr(obj, "server", None) if type(obj).__name__ == "MCPApp" else None
    return inner if isinstance(inner, Server) else None


def _as_server(obj: object, name: str) -> Server:
    server = _unwrap(obj)
    if server is None:
        raise TargetError(_not_a_server(obj, name))
    return server


def _describe(obj: object) -> str:
    kind = type(obj)
    if inspect.isclass(obj):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    if inspect.iscoroutinefunction(obj):
        return "an async function"
    if inspect.isfunction(obj):
        return "a function"
    if inspect.ismodule(obj):
        return "a module"
    return f"a {kind.__module__}.{kind.__qualname__}" if kind.__module__ != "builtins" else f"a {kind.__qualname__}"


def _is_asgi(obj: object) -> bool:
    """An ASGI 3 application: an async callable of ``(scope, receive, send)``."""
    if inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
        return False
    call = obj if inspect.isroutine(obj) else getattr(type(obj), "__call__", None)
    if not inspect.iscoroutinefunction(call):
        return False
    try:
        return len(inspect.signature(obj).parameters) == 3
    except (TypeError, ValueError):
        return False


def _not_a_server(obj: object, name: str, prefix: str = "") -> str:
    text = f"{prefix}{name} is {_describe(obj)}, not a wiremcp.Server"
    if _is_asgi(obj):
        text += (
            "; it is an ASGI application. To serve MCP from it, mount the endpoint of a wiremcp.Server into it "
            "(Mount('/mcp', app=wiremcp.transports.http.MCPApp(server)), docs/http.md) and run it with uvicorn; "
            "or point wiremcp at the Server itself (FILE:NAME)"
        )
    return text
