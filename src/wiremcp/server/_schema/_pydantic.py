"""pydantic v2, read by duck typing and never imported.

Every test looks pydantic up in `sys.modules`: if the application has not
imported it, nothing here can be a pydantic object, and wiremcp pays no
import for it.
"""

from __future__ import annotations

import sys
from typing import Any

from ._markers import MISSING

__all__ = ["is_model", "is_field_info", "field_info_default"]


def is_model(hint: Any) -> bool:
    """Whether ``hint`` is a pydantic v2 model class."""
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(hint, type):
        return False
    base = getattr(pydantic, "BaseModel", None)
    return base is not None and issubclass(hint, base) and hasattr(hint, "model_json_schema")


def is_field_info(obj: Any) -> bool:
    """Whether ``obj`` is a ``pydantic.Field(...)`` (a ``FieldInfo``)."""
    fields = sys.modules.get("pydantic.fields")
    info = getattr(fields, "FieldInfo", None) if fields is not None else None
    return info is not None and isinstance(obj, info)


def field_info_default(info: Any) -> Any:
    """A ``FieldInfo``'s default, or `MISSING` when it has none."""
    default = getattr(info, "default", MISSING)
    if type(default).__name__ == "PydanticUndefinedType" or default is Ellipsis:
        return MISSING
    return default
