"""Deferred work at import: libcst costs about half a second to import, so the fix layer loads it on first use only;
a regular expression that most runs never use is compiled on first use too."""

from __future__ import annotations

import importlib
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any


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


class LazyPattern:
    """A regular expression compiled the first time it is used: most runs never use most patterns, and a one-file
    run, pre-commit's common case, is mostly start-up (benchmarks/RESULTS.md, section c)."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._pattern: re.Pattern[Any] | None = None

    @property
    def compiled(self) -> re.Pattern[Any]:
        if self._pattern is None:
            import re

            self._pattern = re.compile(*self._source)
        return self._pattern

    def match(self, *args: Any) -> re.Match[Any] | None:
        return self.compiled.match(*args)

    def fullmatch(self, *args: Any) -> re.Match[Any] | None:
        return self.compiled.fullmatch(*args)

    def search(self, *args: Any) -> re.Match[Any] | None:
        return self.compiled.search(*args)

    def finditer(self, *args: Any) -> Any:
        return self.compiled.finditer(*args)

    def sub(self, *args: Any) -> Any:
        return self.compiled.sub(*args)
