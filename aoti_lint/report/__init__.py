"""Output formats. Each module renders a sorted list of findings to text; this module picks one."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from aoti_lint.diagnostics import Finding

# Format name -> module (imported only when chosen).
FORMATS = {
    "concise": "aoti_lint.report.concise",
    "full": "aoti_lint.report.full",
    "json": "aoti_lint.report.json_format",
    "json-lines": "aoti_lint.report.json_format",
}


@dataclass
class ReportContext:
    cwd: Path
    format: str
    # Shown with --show-fixes / in the summary after --fix.
    fixed: dict[str, int] = field(default_factory=dict)  # path -> number of findings fixed
    show_fixes: bool = False
    fix_mode: bool = False
    unsafe_fixes: bool = False
    quiet: bool = False
    # Source text for the snippet formats, keyed by display path (stdin has no file to re-read).
    texts: dict[str, str] = field(default_factory=dict)

    def absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, path))

    def lines(self, path: str) -> list[str]:
        if path in self.texts:
            return self.texts[path].splitlines()
        return _read_lines(self.absolute(path))


@lru_cache(maxsize=64)
def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def render(findings: list[Finding], context: ReportContext) -> str:
    module = importlib.import_module(FORMATS[context.format])
    render_format = getattr(module, "render_" + context.format.replace("-", "_"), None) or module.render
    return render_format(findings, context)
