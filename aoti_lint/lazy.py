"""Deferred imports: libcst costs about half a second to import, so it is loaded on first use only."""

from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands in for a module and imports it the first time one of its attributes is read."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def _load(self) -> ModuleType:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded"
        return f"<lazy module {self._name!r} ({state})>"


TYPE_CHECKING = False
if TYPE_CHECKING:  # the type checker sees libcst itself, with its node types
    import libcst as cst
    import libcst.matchers as matchers
    import libcst.metadata as metadata
else:
    cst = LazyModule("libcst")
    matchers = LazyModule("libcst.matchers")
    metadata = LazyModule("libcst.metadata")
