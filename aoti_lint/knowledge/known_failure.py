"""One known AOTInductor failure, as data (``known_failures`` holds them all)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownFailure:
    id: str
    title: str
    # A regular expression searched in each line of the error text.
    pattern: str
    diagnosis: str
    checks: tuple[str, ...]
    fix: str
    # Codes of the lint rules that find the cause statically, if any.
    rules: tuple[str, ...] = ()
    # Where the text comes from: the torch source that raises it, or the run that printed it.
    source: str = ""

    @property
    def regex(self) -> re.Pattern[str]:
        # The re module caches compiled patterns.
        return re.compile(self.pattern)
