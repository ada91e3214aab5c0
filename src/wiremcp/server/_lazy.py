"""Names of a public namespace that load their module on first use.

`wiremcp.server` and its public namespaces (`transport`, `tasks`, `apps`,
`forward`, `schema`) name what they export in a table (name -> module of
this package) instead of importing it, so that importing a namespace loads
nothing until a name is used (bench/README.md, "Cold start";
tests/server/test_lazy_loading.py). A name, once loaded, is stored in the
namespace's globals, so the next lookup does not come here.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Callable

__all__ = ["lazy_names"]

_PACKAGE = __name__.rpartition(".")[0]


def lazy_names(
    namespace: dict[str, Any], table: dict[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the module whose globals are ``namespace``.

    ``table`` maps each lazy name to its module, relative to `wiremcp.server`
    (``"_call"``, ``"_tasks._sqlite"``).
    """
    module_name = namespace["__name__"]

    def __getattr__(name: str) -> object:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(import_module(f"{_PACKAGE}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace["__all__"]})

    return __getattr__, __dir__
