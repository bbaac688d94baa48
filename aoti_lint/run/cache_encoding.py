"""Plain data <-> JSON for the project pass's summaries, so the cache can keep them without pickle.

Only dataclasses from an allow-list are rebuilt: a tampered cache entry can produce wrong data, never run code.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Modules whose dataclasses may be rebuilt from the cache.
ALLOWED_MODULES = ("aoti_lint.flows.flow_summary", "aoti_lint.run.results", "aoti_lint.model.suppressions")


class DecodeError(ValueError):
    pass


def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        fields = {field.name: encode(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(item) for item in value]}
    if isinstance(value, (set, frozenset)):
        kind = "__frozenset__" if isinstance(value, frozenset) else "__set__"
        return {kind: sorted((encode(item) for item in value), key=repr)}
    if isinstance(value, dict):
        return {"__dict__": [[encode(key), encode(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"not plain data: {type(value).__name__}")


def decode(value: Any) -> Any:
    # Exact types, tested in the order they are met: a warm run decodes the summaries of every file it shows.
    kind = type(value)
    if kind is list:
        return [decode(item) for item in value]
    if kind is not dict:
        return value
    if "__dataclass__" in value:
        return _dataclass(value["__dataclass__"])(**{k: decode(v) for k, v in value["fields"].items()})
    if "__tuple__" in value:
        return tuple(decode(item) for item in value["__tuple__"])
    if "__frozenset__" in value:
        return frozenset(decode(item) for item in value["__frozenset__"])
    if "__set__" in value:
        return {decode(item) for item in value["__set__"]}
    if "__dict__" in value:
        return {decode(key): decode(item) for key, item in value["__dict__"]}
    raise DecodeError("unknown encoding")


def _dataclass(name: Any) -> type:
    if type(name) is not str:
        raise DecodeError("not a type name")
    return _dataclass_named(name)


@functools.lru_cache(maxsize=64)
def _dataclass_named(name: str) -> type:
    module_name, _, qualname = name.partition(":")
    if module_name not in ALLOWED_MODULES or not qualname.isidentifier():
        raise DecodeError(f"type not allowed: {name}")
    cls = getattr(importlib.import_module(module_name), qualname, None)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise DecodeError(f"not a dataclass: {name}")
    return cls
